"""The compose match (issue 13, part 1), in CI.

Every image of docker/compose.yaml (the referee, and the sample bots of the Python, Go,
Rust and TypeScript kits, the compiled ones built on the host and copied in; built once
by conftest.py's ``images``), then `docker compose up`: a referee, the organiser's match
and four bots, each in its own container on the compose network. The referee's metrics,
scraped while the match waits for its fourth bot and after it, agree with the log; the
log on the referee's volume verifies and is the organiser's copy; everything stops.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from referee.log import read_log
from referee.log.verify import verify_log

from .engine import (
    KITS,
    PROJECT,
    TAG,
    Engine,
    assert_metrics_match_log,
    published,
    scrape,
    volume_path,
)


def containers(engine: Engine) -> dict[str, str]:
    """Each compose service's container id (one docker call: compose's own is slow)."""
    listed = engine.docker(
        "ps", "-a", "--filter", f"label=com.docker.compose.project={PROJECT}",
        "--format", '{{.ID}} {{.Label "com.docker.compose.service"}}',
    )  # fmt: skip
    return {service: cid for cid, service in (ln.split() for ln in listed.stdout.splitlines())}


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
    ids = containers(images)
    metrics_at = published(images, ids["referee"], 9464)
    p = "pusoy_referee_"
    deadline = time.monotonic() + 300
    while True:
        during = scrape(metrics_at)
        if (
            during[(p + "connected_seats", ())] == 3
            and during[(p + "matches", (("status", "waiting"),))] == 1
        ):
            break
        assert time.monotonic() < deadline, f"three bots never connected: {during}"
        time.sleep(0.5)
    (log,) = (volume_path(images, f"{PROJECT}_data") / "matches").glob("*.jsonl")
    assert_metrics_match_log(during, log)
    assert during[(p + "seat_connects_total", (("kind", "first"),))] == 3

    # The fourth bot: the match plays to its end.
    images.compose("up", "-d", "--no-build", f"bot-{KITS[3]}")
    ids = containers(images)
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
    assert log == volume_path(images, f"{PROJECT}_data") / "matches" / f"{match_id}.jsonl"
    copy = volume_path(images, f"{PROJECT}_results") / f"{match_id}.jsonl"
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
    after = scrape(metrics_at)
    assert_metrics_match_log(after, log)
    assert after[(p + "matches_ended_total", (("status", "finished"),))] == 1
    assert after[(p + "matches", (("status", "running"),))] == 0
    assert after[(p + "connected_seats", ())] == 0

    # The organiser's command line in the referee's container: its token is the secret.
    listed = images.compose("exec", "-T", "referee", "referee", "organiser", "list")
    assert f"{match_id}  finished" in listed.stdout, listed.stdout + listed.stderr

    # The referee stops gracefully (SIGTERM, exit 0); then everything goes.
    images.compose("stop", "-t", "30", "referee")
    state = json.loads(images.docker("inspect", "-f", "{{json .State}}", ids["referee"]).stdout)
    assert state["ExitCode"] == 0
    images.compose("down", "-v")
    assert images.docker("ps", "-aq").stdout.strip() == ""
