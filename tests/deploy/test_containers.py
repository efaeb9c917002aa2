"""The referee image, built and run for real (issue 13, part 1), in CI.

A private dockerd, a base made with mmdebstrap and `docker import` (no registry here),
the images built from docker/ with it (conftest.py's ``images``, shared with
test_compose.py), then one referee container serving with the image's own default
command. Its health check turns healthy; an organiser and four bots on the host play a
match against it over the published port; the log on the data volume verifies and the
metrics scraped from the container agree with it; `referee match` works in the image's
working folder; SIGTERM stops it gracefully with JSON logs on stdout. The compose match
(four kits, each bot in its own container) is test_compose.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.log.verify import verify_log

from .engine import (
    ROOT,
    TAG,
    Engine,
    assert_metrics_match_log,
    published,
    scrape,
    volume_path,
    wait_healthy,
)

NAME = "pusoy-referee-ci"


def _bot(address: str, token_file: Path) -> subprocess.Popen[bytes]:
    """The Python kit's sample bot on the host, started as a bot container starts it."""
    env = {**os.environ, "PUSOY_ADDRESS": address, "PUSOY_TOKEN_FILE": str(token_file)}
    entry = ["sh", str(ROOT / "docker" / "seat-entry.sh")]
    return subprocess.Popen(
        [*entry, sys.executable, "-m", "pusoy_client", "random"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_the_referee_image_serves_a_match_and_stops_gracefully(
    images: Engine, tmp_path: Path, note: Callable[[str], None]
) -> None:
    run = images.docker
    run("rm", "-f", "-v", NAME, check=False)  # a run before that was killed
    run("volume", "rm", f"{NAME}-data", f"{NAME}-state", check=False)
    run("network", "rm", NAME, check=False)
    run("network", "create", NAME)  # the daemon has no default bridge
    run(
        "run", "-d", "--name", NAME, "--network", NAME, "--read-only", "--tmpfs", "/tmp",
        "-v", f"{NAME}-data:/data", "-v", f"{NAME}-state:/state",
        "-p", "127.0.0.1::50051", "-p", "127.0.0.1::9464", f"pusoy-referee:{TAG}",
    )  # fmt: skip
    bots: list[subprocess.Popen[bytes]] = []
    try:
        started = time.monotonic()
        wait_healthy(images, NAME)
        note(f"referee container healthy in {time.monotonic() - started:.0f} s")
        address = published(images, NAME, 50051)
        metrics_at = published(images, NAME, 9464)
        with grpc.insecure_channel(address) as channel:  # the same check, from the host
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        assert run("exec", NAME, "id", "-u").stdout.strip() == "10001"
        before = scrape(metrics_at)
        assert before[("pusoy_referee_matches_created_total", ())] == 0

        # A match on the served referee: the organiser's script and four bots on the host.
        seats, results = tmp_path / "seats", tmp_path / "results"
        for seat in range(4):
            (seats / str(seat)).mkdir(parents=True)
        results.mkdir()
        # The referee made its organiser token in its state volume at its first start.
        token_file = volume_path(images, f"{NAME}-state") / "organiser-token"
        assert token_file.is_file()
        started = time.monotonic()
        bots = [_bot(address, seats / str(seat) / "token") for seat in range(4)]
        organiser = subprocess.run(
            [
                sys.executable, str(ROOT / "docker" / "play_match.py"),
                f"--referee={address}", f"--seats={seats}", f"--results={results}",
                "--hands=2", "--names=north,east,south,west", "--seed=containers",
                f"--organiser-token-file={token_file}",
            ],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert organiser.returncode == 0, organiser.stdout + organiser.stderr
        for bot in bots:
            _, err = bot.communicate(timeout=60)
            assert bot.returncode == 0, err.decode()[-2000:]
        note(f"a match against the container in {time.monotonic() - started:.0f} s")
        verified = re.search(r"match: OK: \S+/(\S+)\.jsonl", organiser.stdout)
        assert verified, organiser.stdout

        # The referee's own log, on its data volume: it verifies, it is what the organiser
        # fetched, and the metrics the container serves agree with it.
        log = volume_path(images, f"{NAME}-data") / "matches" / f"{verified.group(1)}.jsonl"
        report = verify_log(log)
        assert report.ok, report.summary()
        assert log.read_bytes() == (results / log.name).read_bytes()
        after = scrape(metrics_at)
        assert_metrics_match_log(after, log)
        p = "pusoy_referee_"
        assert after[(p + "matches_created_total", ())] == 1
        assert after[(p + "matches_ended_total", (("status", "finished"),))] == 1
        assert after[(p + "connected_seats", ())] == 0

        # The organiser's command line in the container, as docs/deploy.md shows it.
        listed = run(
            "exec", NAME, "referee", "organiser", "list", "--token-file", "/state/organiser-token"
        )
        assert f"{verified.group(1)}  finished" in listed.stdout, listed.stdout

        # The old image's bug: `referee match` without --log-dir in the working folder.
        played = run("exec", NAME, "referee", "match", "--hands", "1", "--seed", "x")
        assert re.search(r"Log: matches/\S+\.jsonl", played.stdout), played.stdout

        run("stop", "-t", "30", NAME)
        state = json.loads(run("inspect", "-f", "{{json .State}}", NAME).stdout)
        assert state["ExitCode"] == 0  # SIGTERM: a graceful stop, not a kill
        logs = run("logs", NAME)
        lines = logs.stdout.splitlines()
        assert lines and all(json.loads(line) for line in lines)  # JSON on stdout
        assert [json.loads(line)["event"] for line in lines][-1] == "stopped"
        assert "referee listening on 0.0.0.0:50051" in logs.stderr
        assert "metrics on http://0.0.0.0:9464/metrics" in logs.stderr
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
        run("rm", "-f", "-v", NAME, check=False)
        run("volume", "rm", f"{NAME}-data", f"{NAME}-state", check=False)
        run("network", "rm", NAME, check=False)
