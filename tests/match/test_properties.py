"""Properties of the machine under random inputs: bots acting, late, illegal, leaving.

For any sequence of commands, folding the events the machine emitted gives its state, and
the log those decisions make (written by the real writer) passes ``referee verify``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim import MS, T0, Sim, write_log
from sim import settings as match_settings

from referee.log.verify import verify_log

STEP = st.tuples(
    st.sampled_from(
        ["legal", "legal", "legal", "illegal", "stale", "late", "tick", "drop", "join", "stray"]
    ),
    st.integers(0, 3),
    st.integers(0, 3000 * MS),
)


def drive(sim: Sim, steps: list[tuple[str, int, int]]) -> None:
    t = T0
    for kind, seat, delay in steps:
        if sim.state.over:
            return
        t += delay
        turn = sim.turn
        acting = turn is not None and turn.prompted
        if kind == "legal" and acting:
            sim.act(turn.seat, t, sim.lowest())
        elif kind == "illegal" and acting:
            sim.act(turn.seat, t, [sim.unheld(turn.seat)])
        elif kind == "stale" and acting:
            sim.act(turn.seat, t, sim.lowest(), turn_id=turn.turn_id + 1)
        elif kind == "late" and acting:
            sim.act(
                turn.seat,
                turn.deadline + sim.state.seats[turn.seat].bank_us + 1 + delay,
                sim.lowest(),
            )
            t = max(t, sim.state.clock)
        elif kind == "drop":
            sim.disconnect(seat, t)
        elif kind == "join":
            sim.connect(seat, t)
        elif kind == "stray":
            sim.act(seat, t, ["3D"], turn_id=0)
        else:
            due = sim.state.due()
            sim.tick(max(t, due or t))
            t = max(t, sim.state.clock)
    if not sim.state.over:
        sim.cancel(max(t, sim.state.clock) + 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    profile=st.sampled_from(["pusoy-dos", "pusoy-dos-chips", "big-two"]),
    strikes=st.integers(0, 3),
    bank=st.sampled_from([0, 250]),
    steps=st.lists(STEP, min_size=1, max_size=120),
)
def test_folding_the_events_gives_the_state_and_the_log_verifies(profile, strikes, bank, steps):
    sim = Sim(
        match_settings(
            profile,
            hands=2,
            turn_time_ms=1000,
            time_bank_ms=bank,
            max_strikes=strikes,
            reconnect_grace_ms=300,
            max_actions_out_of_turn=3,
        )
    )
    sim.connect_all(T0)
    drive(sim, steps)
    folded = sim.folded()
    live = sim.state
    assert folded.seq == live.seq
    assert folded.phase == live.phase and folded.status == live.status
    assert folded.rules.totals == live.rules.totals
    assert [
        (s.connected, s.strikes, s.benched, s.bank_us, s.out_of_turn) for s in folded.seats
    ] == [(s.connected, s.strikes, s.benched, s.bank_us, s.out_of_turn) for s in live.seats]
    assert folded.turn == live.turn
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sim.jsonl"
        write_log(sim, path)
        report = verify_log(path)
        assert report.ok, report.summary()
