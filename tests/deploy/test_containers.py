"""The containers, built and run for real (issue 13, part 1).

A private Docker daemon of this test's own (its socket, state and networks apart from any
other), a base image made with debootstrap and `docker import` (no registry here), every
image of docker/compose.yaml built by docker/build-images, the referee image's health
check on a running container, then `docker compose up`: a referee, the organiser's match
and four bots from four starter kits (Python, Go, Rust, TypeScript), each in its own
container on the compose network. The match's log is verified from the referee's volume
and its metrics, scraped during and after the match, are checked against it. Everything
started here is stopped here, the daemon included.

PUSOY_DOCKER_CACHE (default /var/cache/pusoy-referee) keeps the daemon's images and the
base's packages between runs to make the next one faster; it is never required: a
missing, unwritable or busy cache means a run from scratch in a temporary folder.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from referee.log import read_log
from referee.log.verify import verify_log

ROOT = Path(__file__).resolve().parents[2]
DOCKER = "/usr/bin/docker"  # Debian's CLI: BuildKit built in, the daemon's API version
TAG = "ci"
PROJECT = "pusoyci"
KITS = ("python", "go", "rust", "typescript")
STEP_TIMEOUT_S = 1800  # a hang fails the test; it is no speed limit (CI's own bounds it)


@dataclasses.dataclass
class Engine:
    env: dict[str, str]
    run_dir: Path
    data_root: Path

    def run(
        self, *args: str | Path, check: bool = True, timeout: float = STEP_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(a) for a in args],
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(
                f"{' '.join(map(str, args))} failed ({done.returncode}):\n"
                f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}",
                pytrace=False,
            )
        return done

    def docker(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return self.run(DOCKER, *args, **kw)  # type: ignore[arg-type]

    def compose(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return self.run("docker-compose", "-p", PROJECT, "-f", "docker/compose.yaml", *args, **kw)  # type: ignore[arg-type]


def _our_processes(marker: str) -> list[int]:
    """Processes whose command line names this run's own folder (dockerd, containerd,
    shims): the only ones this test may end."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def _cache_dir(note: Callable[[str], None]) -> Iterator[Path | None]:
    """The shared cache folder, locked for this run; None when it cannot be had."""
    path = Path(os.environ.get("PUSOY_DOCKER_CACHE", "/var/cache/pusoy-referee"))
    try:
        path.mkdir(parents=True, exist_ok=True)
        lock = open(path / "lock", "w")  # noqa: SIM115
    except OSError as exc:
        note(f"no cache ({path}: {exc.strerror}); building from scratch")
        yield None
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        note(f"the cache {path} is in use by another run; building from scratch")
        lock.close()
        yield None
        return
    try:
        yield path
    finally:
        lock.close()


@pytest.fixture(scope="module")
def engine(note: Callable[[str], None]) -> Iterator[Engine]:
    started = time.monotonic()
    subprocess.run(["bash", str(ROOT / "docker" / "install-engine")], check=True, timeout=900)
    with _cache_dir(note) as cache:
        run_dir = Path(tempfile.mkdtemp(prefix="pusoy-dk-", dir="/run"))
        temp_root = cache is None
        data_root = Path(tempfile.mkdtemp(prefix="pusoy-dk-", dir="/var/tmp")) if temp_root else (
            cache / "docker"
        )  # fmt: skip
        socket = run_dir / "docker.sock"
        log = open(run_dir / "dockerd.log", "w")  # noqa: SIM115
        daemon = subprocess.Popen(
            [
                "/usr/sbin/dockerd",
                "--data-root", str(data_root),
                "--exec-root", str(run_dir / "exec"),
                "--pidfile", str(run_dir / "dockerd.pid"),
                "--host", f"unix://{socket}",
                "--storage-driver", "overlay2",
                # This daemon changes nothing on the host's network: no default bridge, no
                # iptables rules, no forwarding. Compose networks are bridges of its own,
                # and published ports go through docker-proxy on loopback.
                "--bridge", "none",
                "--iptables=false", "--ip6tables=false", "--ip-forward=false", "--ip-masq=false",
                "--log-level", "warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        env = {
            **os.environ,
            "DOCKER_HOST": f"unix://{socket}",
            "DOCKER": DOCKER,
            "PUSOY_DOCKER_CACHE": str(cache) if cache else "",
        }
        env.pop("DOCKER_CONTEXT", None)
        eng = Engine(env, run_dir, data_root)
        try:
            deadline = time.monotonic() + 120
            while eng.docker("version", check=False, timeout=30).returncode != 0:
                if daemon.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(
                        "dockerd did not start:\n" + (run_dir / "dockerd.log").read_text()[-3000:],
                        pytrace=False,
                    )
                time.sleep(0.5)
            note(f"dockerd ready in {time.monotonic() - started:.0f} s (data in {data_root})")
            yield eng
        finally:
            eng.compose("down", "-v", "--remove-orphans", check=False, timeout=300)
            if cache is not None:  # keep the images, not what a later run cannot use
                eng.docker("image", "prune", "-f", check=False, timeout=300)
                eng.docker("builder", "prune", "-f", "--keep-storage", "4gb", check=False)
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait(30)
            for pid in _our_processes(str(run_dir)):  # containerd and shims left behind
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            log.close()
            leftovers = _our_processes(str(run_dir))
            shutil.rmtree(run_dir, ignore_errors=True)
            if temp_root:
                subprocess.run(["umount", "-R", str(data_root)], capture_output=True, check=False)
                shutil.rmtree(data_root, ignore_errors=True)
            took = time.monotonic() - started
            note(f"everything stopped; the whole container step took {took:.0f} s")
            assert not leftovers, f"processes of this run still alive: {leftovers}"


@pytest.fixture(scope="module")
def images(engine: Engine, note: Callable[[str], None]) -> Engine:
    started = time.monotonic()
    engine.run("bash", "docker/make-base-image")
    based = time.monotonic()
    note(f"base images in {based - started:.0f} s")
    ca = os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    built = engine.run(
        "bash", "docker/build-images", "--tag", TAG,
        "--base-image", "pusoy-local/bookworm-python",
        "--node-image", "pusoy-local/bookworm-node",
        "--network", "host",
        *(["--ca-bundle", ca] if Path(ca).is_file() else []),
    )  # fmt: skip
    for line in built.stdout.splitlines():
        note(line.removeprefix("build-images: "))
    note(f"kits and images in {time.monotonic() - based:.0f} s")
    return engine


def _published(engine: Engine, container: str, port: int) -> str:
    out = engine.docker("port", container, f"{port}/tcp").stdout.split()
    assert out, f"{container} publishes no port {port}"
    return out[0]


def _wait_healthy(engine: Engine, container: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while True:
        state = json.loads(engine.docker("inspect", "-f", "{{json .State}}", container).stdout)
        health = state.get("Health", {}).get("Status")
        if health == "healthy":
            return
        if not state["Running"] or time.monotonic() > deadline:
            logs = engine.docker("logs", container, check=False)
            pytest.fail(
                f"{container} is {health} (running: {state['Running']}):\n"
                f"{json.dumps(state.get('Health'))[-2000:]}\n{logs.stdout[-2000:]}{logs.stderr[-2000:]}",
                pytrace=False,
            )
        time.sleep(1)


def test_the_referee_image_is_healthy_runs_as_a_user_and_stops_on_sigterm(images: Engine):
    name = "pusoy-referee-health"
    images.docker("rm", "-f", name, check=False)
    images.docker("network", "rm", name, check=False)
    images.docker("network", "create", name)  # the daemon has no default bridge
    images.docker(
        "run", "-d", "--name", name, "--network", name, "--read-only", "--tmpfs", "/tmp",
        "-p", "127.0.0.1::50051", f"pusoy-referee:{TAG}",
    )  # fmt: skip
    try:
        _wait_healthy(images, name)
        address = _published(images, name, 50051)
        with grpc.insecure_channel(address) as channel:  # the same check, from the host
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        user = images.docker("exec", name, "id", "-u").stdout.strip()
        assert user == "10001"
        # The old image's bug: `referee match` without --log-dir in the working folder.
        played = images.docker("exec", name, "referee", "match", "--hands", "1", "--seed", "x")
        assert re.search(r"Log: matches/\S+\.jsonl", played.stdout), played.stdout
        images.docker("stop", "-t", "30", name)
        state = json.loads(images.docker("inspect", "-f", "{{json .State}}", name).stdout)
        assert state["ExitCode"] == 0  # SIGTERM: a graceful stop, not a kill
        logs = images.docker("logs", name)
        lines = logs.stdout.splitlines()
        assert lines and all(json.loads(line) for line in lines)  # JSON on stdout
        assert [json.loads(line)["event"] for line in lines][-1] == "stopped"
        assert "referee listening on 0.0.0.0:50051" in logs.stderr
    finally:
        images.docker("rm", "-f", "-v", name, check=False)
        images.docker("network", "rm", name, check=False)


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(address: str) -> Samples:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _containers(engine: Engine) -> dict[str, str]:
    """Each compose service's container id (one docker call: compose's own is slow)."""
    listed = engine.docker(
        "ps", "-a", "--filter", f"label=com.docker.compose.project={PROJECT}",
        "--format", '{{.ID}} {{.Label "com.docker.compose.service"}}',
    )  # fmt: skip
    return {service: cid for cid, service in (ln.split() for ln in listed.stdout.splitlines())}


def _assert_metrics_match_log(samples: Samples, log: Path) -> None:
    read = read_log(log)
    events = collections.Counter(ln.entry.event.WhichOneof("kind") for ln in read.lines)
    p = "pusoy_referee_"
    for kind in {*events, "played", "passed", "action_rejected", "match_ended"}:
        assert samples[(p + "events_total", (("type", kind),))] == events[kind], kind
    assert samples[(p + "moves_total", (("move", "play"),))] == events["played"]
    assert samples[(p + "moves_total", (("move", "pass"),))] == events["passed"]
    decisions = sum(ln.entry.HasField("command") for ln in read.lines)
    assert samples[(p + "log_append_seconds_count", ())] == decisions


def _volume_path(engine: Engine, volume: str) -> Path:
    mount = engine.docker("volume", "inspect", "-f", "{{.Mountpoint}}", f"{PROJECT}_{volume}")
    return Path(mount.stdout.strip())


def test_compose_plays_a_match_of_four_kits_and_leaves_its_verified_log(
    images: Engine, tmp_path: Path, note: Callable[[str], None]
):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    images.run("env", f"PUSOY_SECRETS={secrets}", "bash", "docker/make-secrets")
    images.env.update(
        PUSOY_TAG=TAG,
        PUSOY_SECRETS=str(secrets),
        REFEREE_PUBLISH="127.0.0.1:",
        METRICS_PUBLISH="127.0.0.1:",
        MATCH_HANDS="4",
    )
    started = time.monotonic()
    # Three bots first: the match waits for the fourth, so a scrape now is exact.
    images.compose("up", "-d", "--no-build", "referee", "match", *(f"bot-{k}" for k in KITS[:3]))
    ids = _containers(images)
    metrics_at = _published(images, ids["referee"], 9464)
    p = "pusoy_referee_"
    deadline = time.monotonic() + 300
    while True:
        during = _scrape(metrics_at)
        if (
            during[(p + "connected_seats", ())] == 3
            and during[(p + "matches", (("status", "waiting"),))] == 1
        ):
            break
        assert time.monotonic() < deadline, f"three bots never connected: {during}"
        time.sleep(0.5)
    (log,) = (_volume_path(images, "data") / "matches").glob("*.jsonl")
    _assert_metrics_match_log(during, log)
    assert during[(p + "seat_connects_total", (("kind", "first"),))] == 3

    # The fourth bot: the match plays to its end.
    images.compose("up", "-d", "--no-build", f"bot-{KITS[3]}")
    ids = _containers(images)
    code = images.docker("wait", ids["match"], timeout=600).stdout.strip()
    match_logs = images.docker("logs", ids["match"]).stdout
    assert code == "0", (
        match_logs + images.compose("logs", "--no-color", check=False).stdout[-6000:]
    )
    note(f"compose: the match played and verified in {time.monotonic() - started:.0f} s")
    for kit in KITS:
        bot = ids[f"bot-{kit}"]
        assert images.docker("wait", bot, timeout=120).stdout.strip() == "0", images.docker(
            "logs", bot
        ).stderr[-3000:]
    verified = re.search(r"match: OK: \S+/(\S+)\.jsonl", match_logs)
    assert verified, match_logs
    match_id = verified.group(1)

    # The referee's own log, read from its volume, verifies and is the organiser's copy.
    assert log == _volume_path(images, "data") / "matches" / f"{match_id}.jsonl"
    copy = _volume_path(images, "results") / f"{match_id}.jsonl"
    assert log.read_bytes() == copy.read_bytes()
    report = verify_log(log)
    assert report.ok, report.summary()
    read = read_log(log)
    created = read.lines[0].entry.event.match_created
    assert list(created.config.seat_names) == list(KITS)
    bot_names = [
        ln.entry.event.seat_connected.bot_name
        for ln in read.lines
        if ln.entry.event.WhichOneof("kind") == "seat_connected"
    ]
    assert len(set(bot_names)) == 4, bot_names  # four different programs took the seats

    # The figures the referee exposes agree with the log.
    after = _scrape(metrics_at)
    _assert_metrics_match_log(after, log)
    assert after[(p + "matches_ended_total", (("status", "finished"),))] == 1
    assert after[(p + "matches", (("status", "running"),))] == 0
    assert after[(p + "connected_seats", ())] == 0

    # The referee stops gracefully (SIGTERM, exit 0); then everything goes.
    images.compose("stop", "-t", "30", "referee")
    state = json.loads(images.docker("inspect", "-f", "{{json .State}}", ids["referee"]).stdout)
    assert state["ExitCode"] == 0
    images.compose("down", "-v")
    assert images.docker("ps", "-aq").stdout.strip() == ""
