"""Every starter kit builds, passes its own unit tests, plays, and recovers from faults.

Bots of different languages share each table; every kit plays every profile; every log
is verified. A kit whose toolchain is missing fails here (its build.sh says which).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.log import read_log
from referee.log.verify import verify_log
from referee.protocol import common

from .conftest import KITS, ROOT, build

PROFILES = ["pusoy-dos", "pusoy-dos-chips", "big-two"]


def tables() -> list[tuple[str, list[str]]]:
    """Two tables per profile, four languages each, so that all six play every profile."""
    out = []
    for i, profile in enumerate(PROFILES):
        for start in (2 * i, 2 * i + 4):
            out.append((profile, [KITS[(start + k) % len(KITS)] for k in range(4)]))
    return out


def referee_match(tmp: Path, bots: list[str], *extra: str) -> Path:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "match",
            "--log-dir",
            str(tmp),
            "--turn-time-ms",
            "5000",
            "--connect-timeout-ms",
            "60000",
            *extra,
            *[a for b in bots for a in ("--bot", b)],
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        check=False,
    )
    stderr = "".join(p.read_text()[-2000:] for p in tmp.glob("*.stderr"))
    assert done.returncode == 0, done.stdout + done.stderr + stderr
    log = next(
        line.split("Log: ")[1] for line in done.stdout.splitlines() if line.startswith("Log: ")
    )
    return Path(log)


def events(path: Path, kind: str) -> list:
    return [
        getattr(ln.entry.event, kind)
        for ln in read_log(path).lines
        if ln.entry.event.WhichOneof("kind") == kind
    ]


@pytest.mark.parametrize("kit", KITS)
def test_kit_unit_tests_and_conformance(kit):
    """The kit's own tests, then the shared conformance transcripts (clients/conformance),
    with the fake referee on this Python (it has grpcio and protobuf)."""
    build(kit)
    done = subprocess.run(
        ["bash", str(ROOT / "clients" / kit / "test.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "PUSOY_CONFORMANCE_PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


@pytest.mark.parametrize(
    ("profile", "langs"), tables(), ids=lambda v: "-".join(v) if isinstance(v, list) else v
)
def test_four_languages_play_a_full_match(tmp_path, profile, langs):
    bots = [str(build(lang)) for lang in langs]
    log = referee_match(
        tmp_path,
        bots,
        "--profile",
        profile,
        "--hands",
        "2",
        "--seed",
        f"{profile}-{'-'.join(langs)}",
    )
    report = verify_log(log)
    assert report.ok, report.summary()
    ended = events(log, "match_ended")[0]
    assert ended.status == common.MATCH_STATUS_FINISHED
    names = {e.seat: e.bot_name for e in events(log, "seat_connected")}
    assert len(names) == 4, f"not every bot connected: {names}"
    # Every seat played for itself: no default actions, no strikes.
    for kind in ("played", "passed"):
        assert not [e for e in events(log, kind) if e.default_cause], f"default actions in {log}"
    assert list(ended.strikes) == [0, 0, 0, 0]


@pytest.mark.parametrize("kit", KITS)
def test_kit_recovers_from_a_rejection_and_a_dropped_stream(tmp_path, kit):
    bot = str(build(kit))
    log = referee_match(
        tmp_path,
        [f"{bot} --misbehave", "greedy", "random", "greedy"],
        "--profile",
        "big-two",
        "--hands",
        "10",
        "--seed",
        f"drill-{kit}",
        "--drill-disconnect-after",
        "2",
    )
    report = verify_log(log)
    assert report.ok, report.summary()
    rejected = [e for e in events(log, "action_rejected") if e.seat == 0]
    assert rejected and {e.reason for e in rejected} == {common.REJECTION_REASON_CARD_NOT_IN_HAND}
    # Each rejection was followed by the seat's own (not a default) action in that turn.
    acted = {e.turn_id: e for k in ("played", "passed") for e in events(log, k) if e.seat == 0}
    recovered = [
        t for t in {e.turn_id for e in rejected} if t in acted and not acted[t].default_cause
    ]
    assert recovered, "the bot never answered after a rejection"
    connects = [e.reconnect for e in events(log, "seat_connected") if e.seat == 0]
    assert connects[:2] == [False, True], f"the bot did not reconnect: {connects}"
    assert any(e.seat == 0 for e in events(log, "seat_disconnected"))


BATCHING_KITS = ["python", "typescript", "go", "rust"]


def test_four_kits_batching_their_events_play_a_full_match(tmp_path):
    """One table where every seat asks for batched events (Hello.batch_events), one kit
    each; each also misbehaves once a hand, so the rejection path runs while batching."""
    bots = [f"{build(kit)} --batch-events --misbehave" for kit in BATCHING_KITS]
    log = referee_match(
        tmp_path, bots, "--profile", "pusoy-dos", "--hands", "2", "--seed", "batched-kits"
    )
    report = verify_log(log)
    assert report.ok, report.summary()
    ended = events(log, "match_ended")[0]
    assert ended.status == common.MATCH_STATUS_FINISHED
    connected = events(log, "seat_connected")
    assert sorted(e.seat for e in connected) == [0, 1, 2, 3], "a bot reconnected or never came"
    assert all(e.batch_events for e in connected), [(e.seat, e.bot_name) for e in connected]
    # Each seat's deliberate bad answers were rejected and it then played for itself.
    rejected = events(log, "action_rejected")
    assert {e.seat for e in rejected} == {0, 1, 2, 3}
    for kind in ("played", "passed"):
        assert not [e for e in events(log, kind) if e.default_cause], f"default actions in {log}"
    assert list(ended.strikes) == [0, 0, 0, 0]
