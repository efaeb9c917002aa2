"""The match machine's rules of a match, with a fake clock: each at its exact microsecond."""

from __future__ import annotations

import pytest
from sim import MS, T0, Sim, body, kinds, settings

from referee.match.state import Phase
from referee.protocol import common, play_service
from referee.protocol.convert import ts_us

TURN = 2000 * MS


def started(turn_time_ms: int = 2000, **kw: object) -> Sim:
    sim = Sim(settings(turn_time_ms=turn_time_ms, **kw))  # type: ignore[arg-type]
    sim.connect_all(T0)
    return sim


# -- connecting ------------------------------------------------------------------


def test_the_fourth_connect_deals_and_prompts_the_leader():
    sim = Sim(settings())
    for seat in range(3):
        assert kinds(sim.connect(seat, T0 + seat)) == ["seat_connected"]
    d = sim.connect(3, T0 + 3)
    assert kinds(d) == ["seat_connected", "hand_dealt", "turn_started"]
    dealt, prompt = body(d.events[1]), body(d.events[2])
    assert prompt.seat == dealt.leader and prompt.turn_id == 1
    assert ts_us(prompt.deadline) == T0 + 3 + 5000 * MS  # the default turn time
    assert sim.state.phase is Phase.PLAYING


def test_a_taken_seat_is_refused_and_nothing_is_logged():
    sim = Sim(settings())
    sim.connect(0, T0)
    d = sim.connect(0, T0 + 1)
    assert d.events == () and d.refusal is not None
    assert d.refusal.reason == play_service.REFUSAL_REASON_SEAT_TAKEN


def test_the_connect_limit_is_inclusive_then_starts_with_the_seats_there():
    sim = Sim(settings(connect_timeout_ms=1000))
    sim.connect(0, T0)
    assert sim.state.due() == T0 + 1000 * MS + 1
    assert kinds(sim.tick(T0 + 1000 * MS)) == []
    assert kinds(sim.connect(1, T0 + 1000 * MS)) == ["seat_connected"]  # just in time
    d = sim.tick(T0 + 1000 * MS + 1)
    assert kinds(d)[0] == "hand_dealt"


def test_a_match_no_bot_joins_is_closed_at_the_connect_limit():
    sim = Sim(settings(connect_timeout_ms=1000))
    d = sim.tick(T0 + 1000 * MS + 1)
    assert kinds(d) == ["match_ended"]
    ended = body(d.events[0])
    assert ended.status == common.MATCH_STATUS_CANCELLED
    assert "no bot connected" in ended.cancel_reason
    assert sim.state.over


# -- the turn clock and the bank -------------------------------------------------


def test_an_answer_at_the_deadline_microsecond_is_in_time():
    sim = started()
    turn = sim.turn
    d = sim.act(turn.seat, turn.deadline, sim.lowest())
    assert kinds(d)[0] in ("played", "passed")
    assert body(d.events[0]).default_cause == common.DEFAULT_CAUSE_UNSPECIFIED
    assert body(d.events[0]).elapsed_ms == 2000


def test_one_microsecond_late_is_a_timeout_and_the_answer_is_rejected_as_late():
    sim = started()
    turn = sim.turn
    cards = sim.lowest()
    d = sim.act(turn.seat, turn.deadline + 1, cards)
    assert kinds(d)[0] in ("played", "passed")
    default = body(d.events[0])
    assert default.default_cause == common.DEFAULT_CAUSE_TIMEOUT
    assert default.strikes == 1
    late = [body(e) for e in d.events if e.WhichOneof("kind") == "action_rejected"]
    assert len(late) == 1 and late[0].late
    assert late[0].reason == common.REJECTION_REASON_STALE_TURN and late[0].attempt == 0


def test_the_timer_fires_one_microsecond_after_the_deadline():
    sim = started()
    turn = sim.turn
    assert sim.state.due() == turn.deadline + 1
    assert kinds(sim.tick(turn.deadline)) == []
    assert body(sim.tick(turn.deadline + 1).events[0]).default_cause == (
        common.DEFAULT_CAUSE_TIMEOUT
    )


def test_the_time_bank_pays_for_an_overrun_to_the_microsecond():
    sim = started(time_bank_ms=100)
    turn = sim.turn
    seat = turn.seat
    assert sim.state.due() == turn.deadline + 100 * MS + 1
    sim.act(seat, turn.deadline + 30 * MS + 7, sim.lowest())
    assert sim.state.seats[seat].bank_us == 70 * MS - 7


def test_an_answer_at_the_end_of_the_bank_is_in_time_and_empties_it():
    sim = started(time_bank_ms=100)
    turn = sim.turn
    d = sim.act(turn.seat, turn.deadline + 100 * MS, sim.lowest())
    assert body(d.events[0]).default_cause == common.DEFAULT_CAUSE_UNSPECIFIED
    assert sim.state.seats[turn.seat].bank_us == 0


def test_a_timeout_empties_the_bank():
    sim = started(time_bank_ms=100)
    seat = sim.turn.seat
    sim.tick(sim.turn.deadline + 100 * MS + 1)
    assert sim.state.seats[seat].bank_us == 0


def test_the_prompt_tells_the_bank_left():
    sim = started(time_bank_ms=100)
    first = sim.turn.seat
    for _ in range(4):  # once round the table, the first seat overruns by 40 ms
        t = sim.turn
        at = t.deadline + 40 * MS if t.seat == first else t.started + 1
        sim.act(t.seat, at, sim.lowest())
        if sim.turn is not None and sim.turn.seat == first:
            break
    prompts = [body(e) for _, e, _ in sim.log if e.WhichOneof("kind") == "turn_started"]
    again = [p for p in prompts if p.seat == first]
    assert again[-1].time_bank_ms == 60


# -- rejections, strikes, default actions ---------------------------------------


def test_each_rejection_counts_an_attempt_and_the_last_plays_the_default():
    sim = started(max_rejections_per_turn=3)
    seat = sim.turn.seat
    bad = sim.unheld(seat)
    for attempt in (1, 2):
        d = sim.act(seat, T0 + attempt, [bad])
        assert kinds(d) == ["action_rejected"]
        rj = body(d.events[0])
        assert rj.attempt == attempt and rj.reason == common.REJECTION_REASON_CARD_NOT_IN_HAND
    d = sim.act(seat, T0 + 3, [bad])
    assert kinds(d)[:2] == ["action_rejected", "played"]  # the lowest legal lead
    default = body(d.events[1])
    assert default.default_cause == common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS and default.strikes == 1


def test_a_stale_turn_id_from_the_acting_seat_is_an_attempt():
    sim = started()
    turn = sim.turn
    d = sim.act(turn.seat, T0 + 1, sim.lowest(), turn_id=turn.turn_id + 5)
    rj = body(d.events[0])
    assert rj.reason == common.REJECTION_REASON_STALE_TURN and rj.attempt == 1


def test_a_malformed_action_is_an_attempt_logged_without_cards():
    sim = started()
    d = sim.act(sim.turn.seat, T0 + 1, malformed=True)
    rj = body(d.events[0])
    assert rj.reason == common.REJECTION_REASON_MALFORMED_ACTION
    assert list(rj.cards) == [] and not getattr(rj, "pass")


def test_the_strike_limit_benches_a_seat_whose_later_turns_are_played_at_once():
    sim = started(max_strikes=1)
    seat = sim.turn.seat
    sim.tick(sim.turn.deadline + 1)  # timeout: strike 1, benched
    assert sim.state.seats[seat].benched
    guard = 0
    while sim.turn is not None and sim.turn.seat != seat and guard < 50:
        sim.play_lowest(sim.state.clock + 1)
        guard += 1
    assert sim.turn is not None and sim.turn.seat == seat and not sim.turn.prompted
    assert sim.state.due() == sim.turn.began  # no waiting for a benched seat
    d = sim.tick(sim.turn.began)
    assert body(d.events[0]).default_cause == common.DEFAULT_CAUSE_STRIKE_LIMIT


# -- out of turn ---------------------------------------------------------------


def test_actions_out_of_turn_are_rejected_up_to_the_limit_then_the_stream_is_cut():
    sim = started(max_actions_out_of_turn=2)
    other = (sim.turn.seat + 1) % 4
    for i in range(2):
        d = sim.act(other, T0 + i, ["3D"], turn_id=0)
        rj = body(d.events[0])
        assert rj.reason == common.REJECTION_REASON_NOT_YOUR_TURN and rj.attempt == 0
    d = sim.act(other, T0 + 5, ["3D"], turn_id=0)
    assert kinds(d) == ["seat_disconnected"]
    assert "more than 2" in body(d.events[0]).cause


def test_a_prompt_resets_the_out_of_turn_count():
    sim = started(max_actions_out_of_turn=1)
    nxt = sim.state.rules.hand._next(sim.turn.seat)  # the seat after the leader
    sim.act(nxt, T0 + 1, ["3D"], turn_id=0)
    sim.play_lowest(T0 + 2)  # now it is nxt's prompt
    assert sim.turn.seat == nxt and sim.state.seats[nxt].out_of_turn == 0


# -- disconnects and reconnects ----------------------------------------------------


def test_a_seat_that_drops_during_its_turn_is_played_by_default_at_once():
    sim = started()
    seat = sim.turn.seat
    d = sim.disconnect(seat, T0 + 10)
    assert kinds(d)[:2] == ["seat_disconnected", kinds(d)[1]]
    assert body(d.events[1]).default_cause == common.DEFAULT_CAUSE_DISCONNECTED


def test_the_reconnect_grace_is_inclusive_to_the_microsecond():
    sim = started(reconnect_grace_ms=500)
    leader = sim.turn.seat
    nxt = sim.state.rules.hand._next(leader)
    sim.disconnect(nxt, T0 + 1)
    sim.play_lowest(T0 + 2)  # nxt's turn begins while it is away
    assert sim.turn.seat == nxt and not sim.turn.prompted
    grace_end = T0 + 1 + 500 * MS
    assert sim.state.due() == grace_end + 1
    d = sim.connect(nxt, grace_end)
    assert kinds(d) == ["seat_connected", "turn_started"]
    assert ts_us(body(d.events[1]).deadline) == grace_end + TURN  # a fresh clock


def test_past_the_grace_an_absent_seat_is_played_by_default():
    sim = started(reconnect_grace_ms=500)
    nxt = sim.state.rules.hand._next(sim.turn.seat)
    sim.disconnect(nxt, T0 + 1)
    sim.play_lowest(T0 + 2)
    d = sim.tick(T0 + 1 + 500 * MS + 1)
    assert body(d.events[0]).default_cause == common.DEFAULT_CAUSE_DISCONNECTED
    assert body(d.events[0]).strikes == 0  # a disconnect is not a strike


def test_the_grace_never_waits_longer_than_a_turn():
    sim = started(reconnect_grace_ms=10_000)
    nxt = sim.state.rules.hand._next(sim.turn.seat)
    sim.disconnect(nxt, T0 + 1)
    sim.play_lowest(T0 + 2)
    assert sim.state.due() == T0 + 2 + TURN + 1


def test_the_drill_closes_a_stream_after_its_nth_prompt():
    sim = started(drill_disconnect_after_prompts=1)
    d = sim.last
    first = kinds(d).index("turn_started")
    assert kinds(d)[first + 1] == "seat_disconnected"
    assert body(d.events[first + 1]).cause.startswith("drill")
    assert body(d.events[first + 2]).default_cause == common.DEFAULT_CAUSE_DISCONNECTED


# -- restart and cancel ----------------------------------------------------------


def test_a_restart_gives_every_seat_the_resume_grace_and_a_new_turn_to_the_acting_seat():
    sim = started(resume_grace_ms=3000)
    old = sim.turn
    d = sim.restart(T0 + 50)
    assert kinds(d) == ["referee_restarted"]
    assert not any(s.connected for s in sim.state.seats)
    assert sim.turn.seat == old.seat and not sim.turn.prompted
    assert sim.state.due() == T0 + 50 + TURN + 1  # the grace (3 s) is cut to one turn
    d = sim.connect(old.seat, T0 + 60)
    assert kinds(d) == ["seat_connected", "turn_started"]
    assert body(d.events[1]).turn_id == old.turn_id + 1
    # the old prompt's answer is stale now
    d = sim.act(old.seat, T0 + 70, sim.lowest(), turn_id=old.turn_id)
    assert body(d.events[0]).reason == common.REJECTION_REASON_STALE_TURN


def test_a_restart_after_the_deadline_is_not_a_timeout():
    sim = started()
    old = sim.turn
    d = sim.restart(old.deadline + 5_000 * MS)  # the referee was down for longer
    assert kinds(d) == ["referee_restarted"]
    assert sim.state.seats[old.seat].strikes == 0
    assert sim.turn.seat == old.seat


def test_a_cancel_ends_the_match_with_its_reason_and_standings():
    sim = started()
    d = sim.cancel(T0 + 5, "the organiser stopped it")
    ended = body(d.events[0])
    assert ended.status == common.MATCH_STATUS_CANCELLED
    assert ended.cancel_reason == "the organiser stopped it"
    assert ended.seed == "machine-tests" and len(ended.standings) >= 1
    assert kinds(sim.cancel(T0 + 6)) == []  # once over, nothing more


def test_time_never_goes_back():
    sim = started()
    d = sim.act(sim.turn.seat, T0 - 5_000_000, sim.lowest())
    assert d.now == T0


@pytest.mark.parametrize("profile", ["pusoy-dos", "pusoy-dos-chips", "big-two"])
def test_a_whole_match_folds_to_the_machines_state(profile):
    sim = Sim(settings(profile, hands=2))
    sim.connect_all(T0)
    t = T0
    while not sim.state.over:
        t += 1000
        sim.play_lowest(t)
    folded = sim.folded()
    assert folded.rules.totals == sim.state.rules.totals
    assert folded.seq == sim.state.seq == len(sim.log)
    assert [s.strikes for s in folded.seats] == [s.strikes for s in sim.state.seats]
