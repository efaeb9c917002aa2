"""The compose ladder service (issue 24, "Operating it"), built and run for real, in CI.

The ladder image (conftest.py's ``ladder_image``: `docker/build-images --images ladder`,
on the referee's stages), then docker/compose.yaml's ``ladder`` service with a small
config of its own mounted where the service mounts docker/ladder.toml: the house's two
built-in bots and two of the examples' bots (a ladder needs four versions to rank; the
entries play jailed, validated first). It plays and rates matches: the web's
/api/leaderboard and /api/status show them, the metrics agree, a recorded match's log on
the ladder volume verifies; SIGTERM stops it within its grace period, exit status 0.

This machine's docker-compose is 1.29 (Debian's), which cannot pass the service's
``systempaths=unconfined`` (bubblewrap's fresh /proc needs Docker's masked /proc paths
lifted; Compose v2 and `docker run` can). So the test checks that 1.29 refuses just that,
then starts the container with `docker run` from the service as compose resolves it
(`docker-compose config`: image, hardening, security options, volumes, ports, grace
period), on the network and volume compose made; a setting it does not know fails the
test rather than being dropped.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from referee.log.verify import verify_log
from tests.support.polls import until_sync

from .engine import PROJECT, ROOT, TAG, Engine, published, scrape, volume_path

NAME = f"{PROJECT}-ladder-ci"
CONFIG = """\
[ladder]
name = "ci ladder"
folder = "/ladder/data"

[rules]
profile = "pusoy-dos"
hands = 1

[matchmaking]
queue = 4

[workers]
count = 2

[[entry]]
team = "ci-weak"
bot = "weak"
files = ["bots/weak_bot.py"]
command = ["weak_bot.py"]

[[entry]]
team = "ci-random"
bot = "random"
files = ["bots/random_bot.py"]
command = ["random_bot.py"]
"""
RATED_GROUPS = 1  # one ranked deal group (four seatings) rated for every version
DEADLINE_S = 240


def _override(tmp_path: Path) -> Path:
    """The test's config and its entries' files, mounted where compose mounts its own."""
    folder = tmp_path / "ladder-config"
    (folder / "bots").mkdir(parents=True)
    (folder / "ladder.toml").write_text(CONFIG)
    for bot in ("weak_bot.py", "random_bot.py"):
        shutil.copy(ROOT / "examples" / bot, folder / "bots" / bot)
    folder.chmod(0o755)
    override = tmp_path / "ladder-override.yaml"
    volumes = [f"{folder}/ladder.toml:/ladder/ladder.toml:ro", f"{folder}/bots:/ladder/bots:ro"]
    override.write_text(yaml.safe_dump({"services": {"ladder": {"volumes": volumes}}}))
    return override


def _run_args(service: dict[str, Any], network: str) -> list[str]:
    """`docker run`'s options for a compose service as `docker-compose config` prints it."""
    args = ["--name", NAME, "--detach", "--network", network, "--network-alias", "ladder"]
    service = dict(service)
    for key in ("build", "profiles"):  # the image is built already; profiles select it
        service.pop(key, None)
    image = service.pop("image")
    if service.pop("read_only", False):
        args.append("--read-only")
    if service.pop("init", False):
        args.append("--init")
    args += [f"--cap-drop={c}" for c in service.pop("cap_drop", [])]
    args += [f"--tmpfs={t}" for t in service.pop("tmpfs", [])]
    args += [f"--security-opt={o}" for o in service.pop("security_opt", [])]
    args += [f"--publish={p}" for p in service.pop("ports", [])]
    for volume in service.pop("volumes", []):
        source = volume.split(":", 1)[0]
        named = not source.startswith("/")
        args.append(f"--volume={PROJECT}_{volume}" if named else f"--volume={volume}")
    args += [f"--env={k}={v}" for k, v in service.pop("environment", {}).items()]
    grace = service.pop("stop_grace_period", "10s")
    assert grace.endswith("s") and grace[:-1].isdigit(), grace
    args.append(f"--stop-timeout={grace[:-1]}")
    args.append(f"--restart={service.pop('restart', 'no')}")
    assert not service, f"settings of the ladder service this test cannot pass on: {service}"
    return [*args, image]


def _get(address: str, path: str) -> Any:
    with urllib.request.urlopen(f"http://{address}{path}", timeout=10) as answer:
        return json.load(answer)


def test_the_compose_ladder_plays_rates_and_stops(
    ladder_image: Engine, tmp_path: Path, note: Callable[[str], None]
) -> None:
    eng = ladder_image
    eng.docker("rm", "-f", "-v", NAME, check=False)  # a run before that was killed
    eng.env.update(
        PUSOY_TAG=TAG,
        LADDER_WEB_PUBLISH="127.0.0.1:",
        LADDER_METRICS_PUBLISH="127.0.0.1:",
        LADDER_LOBBY_PUBLISH="127.0.0.1:",
    )
    files = ("-f", "docker/compose.yaml", "-f", str(_override(tmp_path)), "--profile", "ladder")
    started = time.monotonic()
    try:
        up = eng.compose(*files, "up", "-d", "--no-build", "ladder", check=False)
        # docker-compose 1.29 makes the network and volume, then refuses the one option.
        assert up.returncode != 0 and "systempaths=unconfined" in up.stderr, (
            "docker-compose now starts the ladder service itself: run it with compose here"
            f" ({up.returncode}):\n{up.stdout}{up.stderr}"
        )
        resolved = yaml.safe_load(eng.compose(*files, "config").stdout)
        service = resolved["services"]["ladder"]
        assert service["image"] == f"pusoy-ladder:{TAG}"
        eng.docker("run", *_run_args(service, f"{PROJECT}_default"))

        web = published(eng, NAME, 8080)
        metrics = published(eng, NAME, 9465)
        deadline = time.monotonic() + DEADLINE_S
        while True:
            state = json.loads(eng.docker("inspect", "-f", "{{json .State}}", NAME).stdout)
            status: dict[str, Any] | None = None
            if state["Running"]:
                with contextlib.suppress(OSError):  # the web is not listening yet
                    status = _get(web, "/api/status")
            board = status["leaderboard"] if status else []
            if len(board) == 4 and all(r["matches"] >= 4 * RATED_GROUPS for r in board):
                break
            rejected = status["rejected"] if status else []
            if rejected or not state["Running"] or time.monotonic() > deadline:
                logs = eng.docker("logs", NAME, check=False)
                raise AssertionError(
                    f"the ladder did not rate four versions (running: {state['Running']}):\n"
                    f"{json.dumps(status)[-3000:]}\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}"
                )
            time.sleep(1)
        note(f"ladder: four versions rated in {time.monotonic() - started:.0f} s")

        # The house's built-in bots and the two entries, active, rated, ranked.
        assert {r["label"] for r in board} == {
            "house/random#1", "house/greedy#1", "ci-weak/weak#1", "ci-random/random#1",
        }  # fmt: skip
        assert sum(r["house"] for r in board) == 2
        assert all(r["sigma"] < 25 / 3 for r in board), board  # rated: less uncertain
        assert [r["rank"] for r in board] == [1, 2, 3, 4]
        assert status is not None and status["finished"] >= 2 + 4 * RATED_GROUPS
        assert not status["rejected"] and not status["pending"], status
        assert status["problems"] == [], status["problems"]
        leaderboard = _get(web, "/api/leaderboard")["leaderboard"]
        assert {r["label"] for r in leaderboard} == {r["label"] for r in board}
        said = eng.docker("logs", NAME)
        assert "jails: light jail" in said.stdout + said.stderr, said.stdout[-3000:]

        # The metrics: the queue, the matches, the versions, no failure.
        samples = scrape(metrics)
        p = "pusoy_ladder_"
        assert {
            k[1] for k in samples if k[0] == p + "queue_length"
        } == {(("purpose", "ranked"),), (("purpose", "validation"),)}  # fmt: skip
        assert samples[(p + "matches_finished_total", ())] >= status["finished"]
        assert samples[(p + "versions", (("state", "active"),))] == 4
        assert samples[(p + "running_matches", ())] <= 2  # two workers
        failures = {k: v for k, v in samples.items() if k[0] == p + "match_failures_total"}
        assert failures and not any(failures.values()), failures

        # A recorded match's signed log, read from the ladder volume, verifies.
        logs_dir = volume_path(eng, f"{PROJECT}_ladder") / "data" / "logs"
        recorded = sorted(logs_dir.glob("*.jsonl"))
        assert len(recorded) >= status["finished"], recorded
        report = verify_log(recorded[-1])
        assert report.ok, report.summary()
        match_id = recorded[-1].stem.rsplit("-", 2)[0]  # ID-a<attempt>-<hash>.jsonl
        # A log lands in the volume before its match's record is written (the worker
        # verifies it there first), and the ladder plays on: wait for the record.
        match = until_sync(
            lambda: (m := _get(web, f"/api/matches/{match_id}"))["state"] != "running" and m,
            f"match {match_id} to be recorded",
            timeout=60,
        )
        assert (match["state"], match["hands"]) == ("finished", 1), match
        assert match["log_signed_by"] and len(match["seats"]) == 4, match

        # SIGTERM: both processes stop within the grace period, exit status 0.
        stopping = time.monotonic()
        eng.docker("stop", NAME)
        took = time.monotonic() - stopping
        state = json.loads(eng.docker("inspect", "-f", "{{json .State}}", NAME).stdout)
        assert state["ExitCode"] == 0 and took < 30, (state, took)
        note(f"ladder: stopped in {took:.1f} s; the whole test took "
             f"{time.monotonic() - started:.0f} s")  # fmt: skip
    finally:
        eng.docker("rm", "-f", "-v", NAME, check=False)
        eng.compose(*files, "down", "-v", check=False)
    left = eng.docker("ps", "-aq", "--filter", f"name={NAME}").stdout.strip()
    assert not left, left
