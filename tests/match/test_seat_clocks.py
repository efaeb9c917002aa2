"""A seat's own clock (``TimeControl.seat_clocks``): a model's minutes beside the bots'
milliseconds. The machine gives that seat its own deadline and bank, the log records the
clocks, and ``referee verify`` decides them again; a bad clock is refused by name."""

from __future__ import annotations

import dataclasses

import pytest
from sim import MS, T0, Sim, body, settings, write_log

from referee.log.verify import verify_log
from referee.match.settings import SeatClock, SettingsError, settings_from_config
from referee.protocol.convert import ts_us


def clocked() -> Sim:
    base = settings(hands=1, turn_time_ms=2000, time_bank_ms=0)
    sim = Sim(dataclasses.replace(base, seat_clocks=(SeatClock(1, 60_000, 30_000),)))
    sim.connect_all(T0)
    return sim


def prompt_of(sim: Sim) -> tuple[int, int, int]:
    started = next(body(e) for _, e, _ in reversed(sim.log) if e.HasField("turn_started"))
    return started.seat, ts_us(started.deadline), started.time_bank_ms


def test_the_seat_with_its_own_clock_gets_its_own_deadline_and_bank():
    sim = clocked()
    seen = {}
    at = T0
    while len(seen) < 4 and sim.turn is not None:
        seat, deadline, bank = prompt_of(sim)
        seen.setdefault(seat, (deadline - at, bank))
        at += 5 * MS
        sim.play_lowest(at)
    assert seen[1] == (60_000 * MS, 30_000)
    assert all(seen[s] == (2000 * MS, 0) for s in seen if s != 1)


def test_the_seat_clock_times_out_on_its_own_clock_and_verifies(tmp_path):
    sim = clocked()
    at = T0
    while sim.turn.seat != 1:
        at += MS
        sim.play_lowest(at)
    started = sim.turn.began
    sim.tick(started + 2000 * MS + 1)  # the match's clock would have run out here
    assert sim.turn.seat == 1
    sim.tick(started + (60_000 + 30_000) * MS + 1)  # its turn and its bank
    assert sim.turn is None or sim.turn.seat != 1
    played = [body(e) for _, e, _ in sim.log if e.HasField("passed") or e.HasField("played")]
    assert played[-1].seat == 1 and played[-1].default_cause  # its own clock ran out
    sim.cancel(started + 100_000 * MS)
    path = tmp_path / "clocks.jsonl"
    write_log(sim, path)
    assert verify_log(path).ok
    config = next(body(e) for _, e, _ in sim.log if e.HasField("match_created")).config
    assert settings_from_config(config).seat_clocks == (SeatClock(1, 60_000, 30_000),)


@pytest.mark.parametrize(
    ("clocks", "problem"),
    [
        ((SeatClock(4, 1000),), "a seat is 0 to 3"),
        ((SeatClock(1, 1000), SeatClock(1, 2000)), "one clock per seat"),
        ((SeatClock(1, 0),), "turn_time_ms should be 1 ms to one hour"),
        ((SeatClock(1, 1000, 3_600_001),), "time_bank_ms should be 0 to one hour"),
    ],
)
def test_a_bad_seat_clock_is_refused_by_name(clocks, problem):
    with pytest.raises(SettingsError, match=problem) as err:
        dataclasses.replace(settings(), seat_clocks=clocks)
    assert err.value.field == "seat_clocks"


@pytest.mark.parametrize("text", ["1", "1:x", "1:2:3:4", ":100", "-1:100"])
def test_the_flags_form_is_seat_turn_and_bank(text):
    with pytest.raises(SettingsError, match="SEAT:TURN_MS"):
        SeatClock.parse(text)


def test_a_request_carries_the_seat_clocks_to_the_server():
    from referee.match.settings import settings_from_request

    with_clock = settings().with_seat_clock(SeatClock(2, 90_000, 0))
    again = settings_from_request(with_clock.request_pb())
    assert again.seat_clocks == (SeatClock(2, 90_000, 0),)
    assert again.turn_time_for(2) == 90_000 and again.turn_time_for(0) == again.turn_time_ms
