"""Misbehaving stdio bots get the referee's typed rejections and fault policy, and the
bridge stays bounded: garbage, floods, over-long lines, a bot that stops reading, one that
exits, one that answers late. Real processes and real gRPC throughout."""

from __future__ import annotations

import sys

from referee.log.verify import verify_log
from referee.protocol import common

from .conftest import MISBEHAVING, events, referee_match, seat_stderr

BRIDGE = f"{sys.executable} -m referee.cli stdio-bot"


def own_defaults(log, seat):
    return [e.default_cause for k in ("played", "passed") for e in events(log, k, seat=seat)]


def test_garbage_lines_are_typed_rejections_and_the_bot_plays_on(tmp_path):
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} garbage", "greedy", "greedy", "random"],
        "--hands",
        "2",
        "--seed",
        "garbage",
    )
    assert verify_log(log).ok
    rejected = events(log, "action_rejected", seat=0)
    reasons = {e.reason for e in rejected}
    assert reasons == {
        common.REJECTION_REASON_MALFORMED_ACTION,  # not JSON, not UTF-8, no Action, [1, 2, 3]
        common.REJECTION_REASON_UNPARSEABLE_CARD,  # "hello world"
        common.REJECTION_REASON_EMPTY_PLAY,  # an empty line
    }
    assert all(e.attempt == 1 for e in rejected)  # one garbage line per turn, then a retry
    assert not [d for d in own_defaults(log, 0) if d]  # every retry was the bot's own
    assert list(events(log, "match_ended")[0].strikes) == [0, 0, 0, 0]
    stderr = seat_stderr(log, 0)
    assert "not JSON" in stderr and "not UTF-8" in stderr and "malformed action" in stderr


def test_a_flood_is_cut_off_by_the_referee_and_the_bridge_reconnects(tmp_path):
    # The out-of-turn count starts again at each of the flooder's prompts, so the others
    # think a little: the flood always gets more than the limit in before the next one
    # (with instant bots, a loaded machine's bridge once lost that race).
    thinker = f"stdio:{MISBEHAVING} slow 0.1"
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} flood", thinker, thinker, thinker],
        "--hands",
        "1",
        "--seed",
        "flood",
    )
    report = verify_log(log)  # also checks the out-of-turn limit was held
    assert report.ok, report.summary()
    cut = [e for e in events(log, "seat_disconnected", seat=0) if "out of turn" in e.cause]
    assert cut, "the referee never cut the flooding seat off"
    assert any(e.reconnect for e in events(log, "seat_connected", seat=0))
    out_of_turn = [
        e
        for e in events(log, "action_rejected", seat=0)
        if e.reason in (common.REJECTION_REASON_STALE_TURN, common.REJECTION_REASON_NOT_YOUR_TURN)
    ]
    assert len(out_of_turn) >= 16
    assert events(log, "match_ended")[0].status == common.MATCH_STATUS_FINISHED
    # The other seats were not held up: they played every turn themselves.
    for seat in (1, 2, 3):
        assert not [d for d in own_defaults(log, seat) if d]
    assert "reconnects" in seat_stderr(log, 0)


def test_an_overlong_line_is_one_malformed_action(tmp_path):
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} overlong", "greedy", "greedy", "greedy"],
        "--hands",
        "2",
        "--seed",
        "overlong",
    )
    assert verify_log(log).ok
    rejected = events(log, "action_rejected", seat=0)
    # One per hand: the 100 kB line is one answer; the rest of it is dropped, not read as more.
    assert [e.reason for e in rejected] == [common.REJECTION_REASON_MALFORMED_ACTION] * 2
    assert all(not e.cards for e in rejected)
    assert not [d for d in own_defaults(log, 0) if d]
    assert "longer than 4096 bytes" in seat_stderr(log, 0)


def test_a_bot_that_stops_reading_times_out_like_a_grpc_bot(tmp_path):
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} silent", "greedy", "greedy", "greedy"],
        "--hands",
        "2",
        "--seed",
        "silent",
        "--turn-time-ms",
        "300",
        "--max-strikes",
        "2",
    )
    assert verify_log(log).ok
    causes = [d for d in own_defaults(log, 0) if d]
    assert causes[:2] == [common.DEFAULT_CAUSE_TIMEOUT] * 2
    assert set(causes[2:]) <= {common.DEFAULT_CAUSE_STRIKE_LIMIT}
    assert events(log, "match_ended")[0].strikes[0] == 2


def test_a_bot_that_stops_reading_is_stopped_once_its_input_passes_the_bound(tmp_path):
    # The bridge as a plain command bot, as a remote stdio bot runs it, with a small bound.
    # Benched at its first timeout, the silent bot is sent events only, fast.
    log, _ = referee_match(
        tmp_path,
        [f"{BRIDGE} --max-pending-bytes 2000 -- {MISBEHAVING} silent", *["greedy"] * 3],
        "--hands",
        "24",  # the bound (beyond the OS pipe's 64 kB) is passed in hand 12 or so
        "--seed",
        "stops-reading",
        "--turn-time-ms",
        "300",
        "--max-strikes",
        "1",
        "--sandbox",
        "off",  # unjailed, as a remote bridge runs (jailed, a benched seat is always stopped)
        expect=3,  # the bridge ended before the match did: referee match says so
    )
    assert verify_log(log).ok
    stderr = seat_stderr(log, 0)
    assert "has not read its input" in stderr and "exit 4 (stopped reading)" in stderr
    assert events(log, "seat_disconnected", seat=0)
    assert events(log, "match_ended")[0].status == common.MATCH_STATUS_FINISHED


def test_a_bot_that_exits_early_leaves_the_seat_and_says_so(tmp_path):
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} exit", "greedy", "greedy", "greedy"],
        "--hands",
        "2",
        "--seed",
        "exit",
        expect=3,  # a bot that ended before the match: referee match says so
    )
    assert verify_log(log).ok
    stderr = seat_stderr(log, 0)
    assert "exited with status 3 before the match ended" in stderr
    assert "exit 5 (bot ended)" in stderr
    assert events(log, "seat_disconnected", seat=0)
    causes = [d for d in own_defaults(log, 0) if d]
    assert causes and set(causes) == {common.DEFAULT_CAUSE_DISCONNECTED}


def test_late_answers_are_judged_stale_not_taken_for_later_turns(tmp_path):
    # The bot sleeps through its second prompt: that turn (and, on a slow machine, the
    # next ones) time out. Its answers, late, name the turns they were meant for.
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} late 0.6", "greedy", "greedy", "greedy"],
        "--hands",
        "1",
        "--seed",
        "late",
        "--turn-time-ms",
        "400",
    )
    assert verify_log(log).ok
    timed_out = [
        e.turn_id
        for k in ("played", "passed")
        for e in events(log, k, seat=0)
        if e.default_cause == common.DEFAULT_CAUSE_TIMEOUT
    ]
    assert timed_out
    late = events(log, "action_rejected", seat=0)
    assert sorted(e.turn_id for e in late) == sorted(timed_out)
    assert {e.reason for e in late} <= {
        common.REJECTION_REASON_STALE_TURN,
        common.REJECTION_REASON_NOT_YOUR_TURN,
    }
    # Then the bot was back in step: every other turn was its own.
    assert len([d for d in own_defaults(log, 0) if d]) == len(timed_out)


def test_a_second_guess_sent_before_the_rejection_is_read_keeps_the_bot_in_step(tmp_path):
    log, _ = referee_match(
        tmp_path,
        [f"stdio:{MISBEHAVING} eager", "greedy", "greedy", "greedy"],
        "--hands",
        "2",
        "--seed",
        "eager",
    )
    assert verify_log(log).ok
    rejected = events(log, "action_rejected", seat=0)
    acted = [e for k in ("played", "passed") for e in events(log, k, seat=0)]
    assert {e.reason for e in rejected} == {common.REJECTION_REASON_CARD_NOT_IN_HAND}
    assert len(rejected) == len(acted)  # one wrong guess per turn, then the real answer
    assert not [e for e in acted if e.default_cause]
