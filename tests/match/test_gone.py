"""A seat whose bot is gone for good (its process exited): the match stops waiting for it.

Whoever seats the bots (``referee match``, a tournament) tells the machine with a
``disconnect`` command marked ``gone``, also for a seat that never connected.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sim import MS, T0, Sim, body, kinds, settings

from referee.log.verify import verify_log
from referee.log.writer import EventLogWriter
from referee.match.machine import Decision
from referee.match.state import Phase
from referee.protocol import common

LIMIT = 60_000 * MS


def gone(sim: Sim, seat: int, at: int, cause: str = "its bot exited with status 1") -> Decision:
    command = common.DisconnectCommand(seat=seat, cause=cause, gone=True)
    return sim.do(common.Command(disconnect=command), at)


def write(sim: Sim, path: Path) -> None:
    """The log the server would have written: each decision's events in one append."""
    writer = EventLogWriter.create(path, "sim")
    decisions: list[tuple[common.Command, list[common.Event], int]] = []
    for cmd, event, at in sim.log:
        if decisions and decisions[-1][0] is cmd:
            decisions[-1][1].append(event)
        else:
            decisions.append((cmd, [event], at))
    for cmd, events, at in decisions:
        writer.append(events, at, cmd)
    writer.close()


def verifies(sim: Sim) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sim.jsonl"
        write(sim, path)
        report = verify_log(path)
        return report.ok


def play_out(sim: Sim, at: int) -> None:
    """Every present seat plays its lowest at once; absent seats' turns as they fall due."""
    while not sim.state.over:
        turn = sim.turn
        if turn is not None and turn.prompted:
            sim.play_lowest(at)
        else:
            due = sim.state.due()
            assert due is not None and due <= at, "an absent seat's turn is waited for"
            sim.tick(at)


def test_a_gone_seat_that_never_connected_is_not_waited_for():
    sim = Sim(settings(connect_timeout_ms=60_000))
    for seat in (0, 1, 2):
        sim.connect(seat, T0)
    d = gone(sim, 3, T0 + 5 * MS)
    assert kinds(d)[:2] == ["seat_disconnected", "hand_dealt"]
    assert body(d.events[0]).gone and body(d.events[0]).seat == 3
    assert sim.state.phase is Phase.PLAYING
    play_out(sim, T0 + 5 * MS)  # no clock moves: seat 3's turns are played at once
    assert sim.state.status == common.MATCH_STATUS_FINISHED
    defaults = [
        e
        for _, e, _ in sim.log
        if e.WhichOneof("kind") in ("played", "passed")
        and body(e).seat == 3
        and body(e).default_cause == common.DEFAULT_CAUSE_DISCONNECTED
    ]
    assert defaults
    assert sim.folded().seats[3].gone
    assert verifies(sim)


def test_a_seat_gone_before_the_others_connect_lets_the_last_connect_deal():
    sim = Sim(settings(connect_timeout_ms=60_000))
    assert kinds(gone(sim, 0, T0)) == ["seat_disconnected"]
    sim.connect(1, T0 + 1)
    sim.connect(2, T0 + 2)
    assert kinds(sim.connect(3, T0 + 3))[:2] == ["seat_connected", "hand_dealt"]
    assert verifies_after_cancel(sim)


def verifies_after_cancel(sim: Sim) -> bool:
    sim.cancel(sim.state.clock + 1)
    return verifies(sim)


def test_a_match_whose_every_bot_is_gone_ends_at_once():
    sim = Sim(settings(connect_timeout_ms=60_000))
    for seat in range(3):
        gone(sim, seat, T0 + seat)
    d = gone(sim, 3, T0 + 3)
    assert kinds(d) == ["seat_disconnected", "match_ended"]
    ended = body(d.events[1])
    assert ended.status == common.MATCH_STATUS_CANCELLED and "gone" in ended.cancel_reason
    assert verifies(sim)


def test_gone_twice_is_news_once_and_a_plain_disconnect_of_an_absent_seat_is_none():
    sim = Sim(settings(connect_timeout_ms=60_000))
    sim.connect(0, T0)
    assert kinds(gone(sim, 1, T0 + 1)) == ["seat_disconnected"]
    assert kinds(gone(sim, 1, T0 + 2)) == []
    assert kinds(sim.disconnect(2, T0 + 3)) == []
    assert sim.state.phase is Phase.WAITING  # seats 2 and 3 are still waited for


def test_a_connected_seat_gone_mid_match_is_played_at_once_without_its_grace():
    sim = Sim(settings(connect_timeout_ms=60_000, reconnect_grace_ms=5000))
    sim.connect_all(T0)
    seat = (sim.turn.seat + 1) % 4
    d = gone(sim, seat, T0 + 1)
    assert kinds(d) == ["seat_disconnected"] and body(d.events[0]).gone
    assert not sim.state.seats[seat].connected
    play_out(sim, T0 + 1)
    assert sim.state.status == common.MATCH_STATUS_FINISHED
    assert verifies(sim)


def test_a_gone_seat_that_connects_after_all_is_seated_again():
    sim = Sim(settings(connect_timeout_ms=60_000, reconnect_grace_ms=5000))
    for seat in (0, 1, 2):
        sim.connect(seat, T0)
    gone(sim, 3, T0 + 1)
    d = sim.connect(3, T0 + 2)
    assert not sim.state.seats[3].gone and sim.state.seats[3].connected
    assert "seat_connected" in kinds(d)
    assert verifies_after_cancel(sim)


def test_without_gone_the_connect_limit_still_rules():
    sim = Sim(settings(connect_timeout_ms=60_000))
    for seat in (0, 1, 2):
        sim.connect(seat, T0)
    assert sim.state.due() == T0 + LIMIT + 1
