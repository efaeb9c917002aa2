"""Crash recovery: a referee killed mid-match (SIGKILL) and started again resumes it.

Real processes: ``referee serve`` and four bots of the Python starter kit, each in its own
process, reconnecting with their same seat tokens. After each restart the match finishes,
the whole log verifies, no committed line is lost or duplicated, and the restart shows
where it happened. In-process: a suspended server resumed by another shows its seats
nothing of the other hands in the snapshots it sends on reconnect.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from referee_process import Serve, kind_is, wait_for_line

from referee.log import read_log
from referee.log.replay import replay_lines
from referee.log.verify import verify_log
from referee.protocol import common, match_service, match_service_grpc, play_service
from referee.server.app import RefereeServer
from referee.view.fold import fold_log

from .conftest import Seat, create

ROOT = Path(__file__).resolve().parents[2]
REFEREE = [sys.executable, "-m", "referee.cli"]
KIT_BOT = ROOT / "clients" / "python" / "bot"


def start_bots(
    address: str, tokens: list[str], misbehave: int | None = None
) -> list[subprocess.Popen[bytes]]:
    bots = []
    for seat, token in enumerate(tokens):
        argv = [str(KIT_BOT), "--address", address, "--token", token]
        if seat == misbehave:
            argv.append("--misbehave")
        bots.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    return bots


POINTS = {
    "between events, early": (None, lambda: kind_is("turn_started", 3)),
    "mid-hand": (None, lambda: kind_is("played", 12)),
    "right after a rejected attempt": (2, lambda: kind_is("action_rejected")),
    "at a hand's end": (None, lambda: kind_is("hand_ended")),
}


@pytest.mark.parametrize("point", list(POINTS))
def test_a_referee_killed_mid_match_resumes_it_and_the_log_verifies(tmp_path, point):
    misbehave, pred = POINTS[point]
    serve = Serve(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        serve.start()
        created = serve.create(seed=f"kill {point}")
        log = tmp_path / "logs" / f"{created.match_id}.jsonl"
        bots = start_bots(serve.address, list(created.seat_tokens), misbehave)
        wait_for_line(log, pred())
        serve.kill()
        before = log.read_bytes()
        committed = before[: before.rfind(b"\n") + 1]
        resumed = serve.start()
        assert any(f"match {created.match_id} resumed" in line for line in resumed), resumed
        for bot in bots:
            assert bot.wait(90) == 0, bot.stderr.read() if bot.stderr else ""
        after = log.read_bytes()
        assert after.startswith(committed)  # nothing committed was lost or rewritten
        report = verify_log(log)
        assert report.ok, report.summary()
        kinds = [ln.kind for ln in read_log(log).lines]
        assert kinds.count("referee_restarted") == 1
        replay = "\n".join(replay_lines(read_log(log)))
        assert "[the referee restarted (" in replay
        assert kinds.index("referee_restarted") == committed.count(b"\n")
        assert kinds[-1] == "match_ended"
        ended = read_log(log).lines[-1].entry.event.match_ended
        assert ended.status == common.MATCH_STATUS_FINISHED
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()


def test_a_torn_last_line_is_cut_off_and_reported(tmp_path):
    serve = Serve(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        serve.start()
        created = serve.create(seed="torn")
        log = tmp_path / "logs" / f"{created.match_id}.jsonl"
        bots = start_bots(serve.address, list(created.seat_tokens))
        wait_for_line(log, kind_is("played", 4))
        serve.kill()
        with log.open("ab") as f:
            f.write(b'{"match_id":"' + created.match_id.encode() + b'","seq":"99","ti')
        serve.start()
        for bot in bots:
            assert bot.wait(90) == 0
        report = verify_log(log)
        assert report.ok, report.summary()
        restart = next(
            ln for ln in read_log(log).lines if ln.kind == "referee_restarted"
        ).entry.event.referee_restarted
        assert restart.torn_bytes == len(
            b'{"match_id":"' + created.match_id.encode() + b'","seq":"99","ti'
        )
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()


def cut_short(log: Path, torn: bool) -> tuple[bytes, list[str]]:
    """Cut the log as a crash in the middle of its last decision of three entries or more
    would: after its first two lines (and the first bytes of its third when ``torn``).
    The bytes kept, and the kinds of the two lines left of the decision."""
    lines = log.read_bytes().split(b"\n")[:-1]
    entries = [json.loads(line) for line in lines]
    heads = [i for i, e in enumerate(entries) if "command" in e] + [len(entries)]
    head = max(a for a, b in itertools.pairwise(heads) if b - a >= 3)
    kept = b"".join(line + b"\n" for line in lines[: head + 2])
    log.write_bytes(kept + (lines[head + 2][:30] if torn else b""))
    return kept, [next(iter(e["event"])) for e in entries[head : head + 2]]


@pytest.mark.parametrize("torn", [False, True], ids=["whole lines", "whole lines and a torn one"])
def test_a_decision_the_crash_cut_short_is_cut_off_and_the_match_verifies(tmp_path, torn):
    """A decision is one write, but SIGKILL (or a lost machine) can leave its first lines
    on disk without its last ones: the restarted referee cuts them off, says so, and
    decides that command again when its bot acts again."""
    serve = Serve(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        serve.start()
        created = serve.create(seed=f"cut short {torn}")
        log = tmp_path / "logs" / f"{created.match_id}.jsonl"
        bots = start_bots(serve.address, list(created.seat_tokens))
        wait_for_line(log, kind_is("trick_cleared", 3))
        serve.kill()
        kept, kinds = cut_short(log, torn)
        first = kept.count(b"\n") - 1
        resumed = serve.start()
        what = f"cut off 2 entries of an unfinished decision (lines {first}-{first + 1}: "
        what += ", ".join(kinds) + ")" + (" and a torn line of 30 bytes" if torn else "")
        assert f"match {created.match_id} resumed ({what})\n" in resumed, resumed
        for bot in bots:
            assert bot.wait(90) == 0, bot.stderr.read() if bot.stderr else ""
        report = verify_log(log)
        assert report.ok, report.summary()
        after = log.read_bytes()
        before = b"".join(line + b"\n" for line in kept.split(b"\n")[: first - 1])
        assert after.startswith(before) and not after.startswith(kept)
        lines = read_log(log).lines
        [restart] = [ln for ln in lines if ln.kind == "referee_restarted"]
        assert restart.number == first
        assert restart.entry.event.referee_restarted.cut_entries == 2
        assert restart.entry.event.referee_restarted.torn_bytes == (30 if torn else 0)
        assert lines[-1].entry.event.match_ended.status == common.MATCH_STATUS_FINISHED
        replay = "\n".join(replay_lines(read_log(log)))
        assert "2 entries of an unfinished decision cut off" in replay
        [shown] = [op for op in fold_log(log).ops if op["t"] == "restart"]  # referee view
        assert (shown["cut"], shown["torn"]) == (2, 30 if torn else 0)
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
        serve.stop()


def test_a_log_damaged_before_its_end_is_set_aside_and_reported(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "state").mkdir()
    bad = logs / "20261201-000000-0badc0de.jsonl"
    bad.write_text('{"not": "an entry"}\n{"also": "not"}\n')
    serve = Serve(tmp_path)
    try:
        lines = serve.start()
        assert any("20261201-000000-0badc0de not resumed" in line for line in lines), lines
        assert not bad.exists() and bad.with_suffix(".jsonl.unresumable").exists()
        with grpc.insecure_channel(serve.address) as channel:
            listed = match_service_grpc.MatchServiceStub(channel).ListMatches(
                match_service.ListMatchesRequest(), metadata=serve.organiser
            )
        [info] = [m for m in listed.matches if m.match_id == "20261201-000000-0badc0de"]
        assert info.status == common.MATCH_STATUS_CANCELLED and info.failure
    finally:
        serve.stop()


async def test_resumed_seats_are_shown_only_their_own_cards(tmp_path):
    """Suspend a server mid-hand, resume on another, reconnect the seats: each snapshot
    and prompt holds the seat's own cards and public ones only."""
    logs, state = tmp_path / "logs", tmp_path / "state"
    first = RefereeServer("127.0.0.1:0", logs, state_dir=state, resume=True)
    await first.start()
    async with first.organiser_channel() as channel:
        created = await create(match_service_grpc.MatchServiceStub(channel), hands=2, seed="snap")
    seats = [Seat(first.address, t) for t in created.seat_tokens]
    for s in seats:
        s.start()
    path = first.matches.log_path(created.match_id)
    for _ in range(500):
        if (await asyncio.to_thread(path.read_bytes)).count(b"\n") > 30:
            break
        await asyncio.sleep(0.01)
    await first.stop(grace=0.2, suspend=True)
    for s in seats:
        await s.finish()
    second = RefereeServer("127.0.0.1:0", logs, state_dir=state, resume=True)
    await second.start()
    try:
        assert [r.match_id for r in second.resumed if r.resumed] == [created.match_id]
        again = [Seat(second.address, t) for t in created.seat_tokens]
        for s in again:
            s.start()
        for s in again:
            await s.finish(60)
        report = verify_log(path)
        assert report.ok, report.summary()
        lines = read_log(path).lines
        restart_at = next(i for i, ln in enumerate(lines) if ln.kind == "referee_restarted")
        hands = [ln.entry.event.hand_dealt for ln in lines[:restart_at] if ln.kind == "hand_dealt"]
        dealt = {sc.seat: set(sc.cards) for sc in hands[-1].hands}
        for s in again:
            snapshot = s.messages("snapshot")[0]
            assert set(snapshot.hand) <= dealt[s.seat]
            others = set().union(*(dealt[o] for o in range(4) if o != s.seat))
            public = set(snapshot.state.played_cards)
            text = str(snapshot)
            hidden = {c for c in others - public if re.search(rf'"{c}"', text)}
            assert not hidden, f"seat {s.seat} was shown {hidden}"
            assert any(w.reconnect for w in s.messages("welcome"))
            assert all(
                m.WhichOneof("kind") != "refusal"
                or m.refusal.reason != play_service.REFUSAL_REASON_BAD_TOKEN
                for m in s.received
            )
    finally:
        await second.stop(grace=0.2)
