"""A private Docker daemon for the container tests, and what they share.

The daemon is this run's own: its socket, state and networks apart from any other, no
default bridge, no iptables rules (the host's network is left as it was). Everything it
starts is stopped when the run ends, the daemon included. PUSOY_DOCKER_CACHE (default
~/.cache/pusoy-referee) keeps the base's root file system and the daemon's images between
runs on one machine; it is never required: a missing, unwritable or busy cache means a
run from scratch in temporary folders.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from referee.log import read_log

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
        compose = ("docker-compose", "-p", PROJECT, "-f", "docker/compose.yaml")
        return self.run(*compose, *args, **kw)  # type: ignore[arg-type]


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
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pusoy-referee"
    path = Path(os.environ.get("PUSOY_DOCKER_CACHE", default))
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


@contextlib.contextmanager
def private_engine(note: Callable[[str], None], *, compose: bool = False) -> Iterator[Engine]:
    """Installs the engine when missing, starts a private dockerd, yields; then stops all."""
    started = time.monotonic()
    install = ["bash", str(ROOT / "docker" / "install-engine"), *(["--compose"] if compose else [])]
    installed = subprocess.run(install, check=True, timeout=900, capture_output=True, text=True)
    for line in installed.stdout.splitlines():
        note(line)
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
            # Without the cache, the base's tarball goes to this run's folder.
            "PUSOY_DOCKER_CACHE": str(cache or run_dir / "cache"),
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
            if compose:
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


def build_images(engine: Engine, note: Callable[[str], None], images: str) -> None:
    """The base (docker/make-base-image), then ``images`` (docker/build-images --images)."""
    started = time.monotonic()
    node = ["--node"] if "typescript" in images.split(",") else []
    based = engine.run("bash", "docker/make-base-image", *node)
    for line in based.stdout.splitlines():
        note(line.removeprefix("make-base-image: "))
    mid = time.monotonic()
    note(f"base images in {mid - started:.0f} s")
    ca = os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    built = engine.run(
        "bash", "docker/build-images", "--tag", TAG, "--images", images,
        "--base-image", "pusoy-local/bookworm-python",
        *(["--node-image", "pusoy-local/bookworm-node"] if node else []),
        "--network", "host",
        *(["--ca-bundle", ca] if Path(ca).is_file() else []),
    )  # fmt: skip
    for line in built.stdout.splitlines():
        note(line.removeprefix("build-images: "))
    note(f"kits and images in {time.monotonic() - mid:.0f} s")


def published(engine: Engine, container: str, port: int) -> str:
    out = engine.docker("port", container, f"{port}/tcp").stdout.split()
    assert out, f"{container} publishes no port {port}"
    return out[0]


def wait_healthy(engine: Engine, container: str, timeout: float = 300) -> None:
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


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(address: str) -> Samples:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def assert_metrics_match_log(samples: Samples, log: Path) -> None:
    """The referee's counts, as scraped, agree with the match log it wrote."""
    read = read_log(log)
    events = collections.Counter(ln.entry.event.WhichOneof("kind") for ln in read.lines)
    p = "pusoy_referee_"
    for kind in {*events, "played", "passed", "action_rejected", "match_ended"}:
        assert samples[(p + "events_total", (("type", kind),))] == events[kind], kind
    assert samples[(p + "moves_total", (("move", "play"),))] == events["played"]
    assert samples[(p + "moves_total", (("move", "pass"),))] == events["passed"]
    decisions = sum(ln.entry.HasField("command") for ln in read.lines)
    assert samples[(p + "log_append_seconds_count", ())] == decisions


def volume_path(engine: Engine, volume: str) -> Path:
    mount = engine.docker("volume", "inspect", "-f", "{{.Mountpoint}}", volume)
    return Path(mount.stdout.strip())
