"""One hand and one match: leads, turn order, passes, tricks, going out, every rejection."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from brute import random_action

from referee.rules import (
    PASS,
    Action,
    HandResult,
    HandState,
    IllegalActionError,
    InvalidCardsError,
    Kind,
    MatchState,
    Outcome,
    Reason,
    Rules,
    SeatView,
    deal,
    format_cards,
    parse_card,
    parse_cards,
)


def rules_of(profile: str, **options: Any) -> Rules:
    return Rules.for_profile(profile, options)


def make_hand(
    profile: str,
    hands: tuple[str, str, str, str],
    leader: int = 0,
    must: str = "",
    **options: Any,
) -> HandState:
    masks = [parse_cards(h, allow_empty=True) for h in hands]
    must_mask = parse_cards(must) if must else 0
    return HandState(rules_of(profile, **options), masks, leader, must_mask)


def action(text: str) -> Action:
    return PASS if text == "pass" else Action(parse_cards(text))


def act(state: HandState, seat: int, text: str) -> Outcome:
    return state.apply(seat, action(text))


def run(state: HandState, *moves: tuple[int, str]) -> list[Outcome]:
    return [act(state, seat, text) for seat, text in moves]


def snapshot(state: HandState) -> tuple[Any, ...]:
    return (
        tuple(state.hands),
        state.turn,
        state.table,
        state.table_seat,
        state.passes,
        tuple(state.locked),
        state.must_include,
        state.revolution,
        state.lone_two_rule,
        state.lead_passes,
        state.winner,
        state.ctx,
        tuple(state.view(s) for s in range(4)),
    )


def rejected(state: HandState, seat: int, text: str) -> Reason:
    """Apply an illegal action; check that it raised and changed nothing; the reason."""
    before = snapshot(state)
    with pytest.raises(IllegalActionError) as info:
        act(state, seat, text)
    assert snapshot(state) == before
    error = state.check(seat, action(text))
    assert error is not None and error.reason is info.value.reason
    return info.value.reason


def finish_hand(match: MatchState, rng: random.Random) -> HandResult:
    """Play random legal actions until the current hand ends."""
    assert match.hand is not None
    while True:
        seat = match.hand.turn
        assert seat is not None
        _, result = match.apply(seat, random_action(match.hand, rng))
        if result is not None:
            return result


def holder(hands: tuple[int, ...], card: str) -> int:
    bit = 1 << parse_card(card)
    return next(s for s in range(4) if hands[s] & bit)


# -- who leads ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "opening"),
    [("pusoy-dos", "3C"), ("pusoy-dos-chips", "3C"), ("big-two", "3D")],
)
def test_first_hand_is_led_by_the_opening_card_holder_who_must_play_it(
    profile: str, opening: str
) -> None:
    for seed in ("a", "b", "c", "d"):
        match = MatchState(rules_of(profile))
        hands = deal(seed, 1)
        state = match.start_hand(hands)
        leader = holder(hands, opening)
        assert state.turn == leader
        assert state.must_include == parse_cards(opening)
        plays = state.legal_plays()
        assert len(plays) > 0
        assert all(m & parse_cards(opening) for m in plays.masks)
        assert not plays.can_pass
        others = hands[leader] & ~state.must_include
        without = others & -others  # one card of the leader's other than the opening card
        reason = rejected(state, leader, format_cards(without))
        assert reason is Reason.MISSING_OPENING_CARD


def test_opening_card_may_be_inside_any_play() -> None:
    state = make_hand("pusoy-dos", ("3C 3S 4C 5H 6D 7C", "9C", "9S", "9H"), leader=0, must="3C")
    texts = state.legal_plays().texts()
    assert texts == ["3C", "3C 3S", "3C 4C 5H 6D 7C"]
    assert rejected(state, 0, "3S") is Reason.MISSING_OPENING_CARD
    act(state, 0, "3C 4C 5H 6D 7C")
    assert state.must_include == 0


def test_the_opening_card_follows_the_suit_order_option() -> None:
    rules = rules_of("pusoy-dos", suit_order="diamonds-low")
    match = MatchState(rules)
    hands = deal("opening", 1)
    state = match.start_hand(hands)
    assert state.turn == holder(hands, "3D")
    assert state.must_include == parse_cards("3D")


@pytest.mark.parametrize("profile", ["pusoy-dos", "pusoy-dos-chips"])
def test_later_hands_are_led_by_the_previous_winner_with_anything(profile: str) -> None:
    rng = random.Random(7)
    match = MatchState(rules_of(profile, match_end="hands 5"))
    match.start_hand(deal("winner-leads", 1))
    for number in range(2, 5):
        result = finish_hand(match, rng)
        hands = deal("winner-leads", number)
        state = match.start_hand(hands)
        assert state.turn == result.winner
        assert state.must_include == 0
        plays = state.legal_plays()
        # Any single of the winner's hand may be led, the 3♣ or not.
        singles = [c for c in plays if c.kind is Kind.SINGLE]
        assert len(singles) == 13
        assert not plays.can_pass


def test_big_two_every_hand_is_led_by_the_three_of_diamonds() -> None:
    rng = random.Random(8)
    match = MatchState(rules_of("big-two", match_end="hands 5"))
    for number in range(1, 5):
        hands = deal("every-hand", number)
        state = match.start_hand(hands)
        assert state.turn == holder(hands, "3D")
        assert state.must_include == parse_cards("3D")
        assert all(m & parse_cards("3D") for m in state.legal_plays().masks)
        finish_hand(match, rng)


def test_a_hand_cannot_start_before_the_current_one_ends() -> None:
    match = MatchState(rules_of("pusoy-dos"))
    match.start_hand(deal("x", 1))
    with pytest.raises(ValueError):
        match.start_hand(deal("x", 2))


def test_each_seat_is_dealt_13_cards_of_one_deck() -> None:
    match = MatchState(rules_of("pusoy-dos"))
    with pytest.raises(ValueError):
        match.start_hand([parse_cards("3C")] * 4)
    with pytest.raises(ValueError):
        HandState(rules_of("pusoy-dos"), [parse_cards("3C"), parse_cards("3C"), 0, 0], 0)
    with pytest.raises(ValueError):
        HandState(rules_of("pusoy-dos"), [0, 0, 0], 0)
    with pytest.raises(ValueError):
        HandState(rules_of("pusoy-dos"), [0, 0, 0, 0], 4)


# -- turn order ----------------------------------------------------------------------


def test_clockwise_turn_order_0_1_2_3() -> None:
    state = make_hand("pusoy-dos", ("3C 7C", "4C 8C", "5C 9C", "6C TC"))
    turns = [act(state, s, c).next_seat for s, c in [(0, "3C"), (1, "4C"), (2, "5C"), (3, "6C")]]
    assert turns == [1, 2, 3, 0]


def test_counterclockwise_turn_order_0_3_2_1() -> None:
    state = make_hand("big-two", ("3C 7C", "6C TC", "5C 9C", "4C 8C"))
    turns = [act(state, s, c).next_seat for s, c in [(0, "3C"), (3, "4C"), (2, "5C"), (1, "6C")]]
    assert turns == [3, 2, 1, 0]


@pytest.mark.parametrize(
    ("profile", "direction", "order"),
    [
        ("big-two", "clockwise", [1, 2, 3, 0]),
        ("pusoy-dos", "counterclockwise", [3, 2, 1, 0]),
    ],
)
def test_the_direction_option_sets_turn_order(
    profile: str, direction: str, order: list[int]
) -> None:
    state = make_hand(profile, ("3S 4H", "4S 5S", "6S 7S", "8S 9S"), direction=direction)
    state.apply(0, Action(parse_cards("3S")))
    seen = [state.turn]
    for _ in range(3):
        seat = state.turn
        assert seat is not None
        act(state, seat, "pass")
        seen.append(state.turn)
    assert seen == order  # after the third pass the trick is back with seat 0


def test_acting_out_of_turn_is_not_your_turn() -> None:
    state = make_hand("pusoy-dos", ("3C 7C", "4C 8C", "5C 9C", "6C TC"))
    assert rejected(state, 1, "4C") is Reason.NOT_YOUR_TURN
    assert rejected(state, 2, "pass") is Reason.NOT_YOUR_TURN
    act(state, 0, "3C")
    assert rejected(state, 0, "7C") is Reason.NOT_YOUR_TURN
    assert rejected(state, 3, "6C") is Reason.NOT_YOUR_TURN


def test_only_seats_0_to_3_hold_a_seat() -> None:
    state = make_hand("pusoy-dos", ("3C 7C", "4C 8C", "5C 9C", "6C TC"))
    assert rejected(state, 4, "3C") is Reason.NOT_SEAT_HOLDER
    assert rejected(state, -1, "pass") is Reason.NOT_SEAT_HOLDER


# -- passes and tricks -------------------------------------------------------------


def test_a_pass_only_skips_the_turn_in_pusoy_dos() -> None:
    state = make_hand("pusoy-dos", ("3C 9C", "4C TC", "5C JC", "6C QC"))
    run(state, (0, "3C"), (1, "pass"), (2, "5C"), (3, "pass"), (0, "pass"))
    assert state.turn == 1
    outcome = act(state, 1, "TC")  # seat 1 passed earlier in this trick and plays again
    assert outcome.kind is Kind.SINGLE and not outcome.trick_cleared
    assert state.locked == [False] * 4


def test_a_player_may_pass_even_when_able_to_beat() -> None:
    state = make_hand("pusoy-dos", ("3C 9C", "2D TC", "5C JC", "6C QC"))
    act(state, 0, "3C")
    assert len(state.legal_plays()) > 0
    outcome = act(state, 1, "pass")
    assert outcome.next_seat == 2


def test_three_passes_in_a_row_clear_the_trick_for_the_last_player() -> None:
    state = make_hand("pusoy-dos", ("3C 9C", "4C TC", "5C JC", "6C QC"))
    run(state, (0, "3C"), (1, "pass"), (2, "pass"))
    last = act(state, 3, "6C")
    assert not last.trick_cleared and state.table is not None
    outcomes = run(state, (0, "pass"), (1, "pass"), (2, "pass"))
    assert [o.trick_cleared for o in outcomes] == [False, False, True]
    assert outcomes[-1].next_seat == 3
    assert state.table is None and state.turn == 3
    # The fresh lead takes any play, of any size.
    assert state.legal_plays().texts() == ["QC"]
    assert rejected(state, 3, "pass") is Reason.PASS_ON_LEAD


def test_pass_locks_out_until_the_next_fresh_lead_in_pusoy_dos_chips() -> None:
    # Counterclockwise: 0 → 3 → 2 → 1.
    state = make_hand("pusoy-dos-chips", ("3C 9C KC AC", "6C QC", "5C JC", "4C TC"))
    run(state, (0, "3C"), (3, "pass"))
    assert state.locked == [False, False, False, True]
    run(state, (2, "5C"), (1, "6C"), (0, "9C"))
    assert state.turn == 2  # seat 3 is skipped: it is locked out
    assert rejected(state, 3, "TC") is Reason.LOCKED_OUT
    assert rejected(state, 3, "pass") is Reason.LOCKED_OUT
    assert state.view(2).locked_out == (False, False, False, True)
    act(state, 2, "pass")
    outcome = act(state, 1, "pass")
    # Nobody but seat 0 may still act: the trick is over and seat 0 leads.
    assert outcome.trick_cleared and outcome.next_seat == 0
    assert state.table is None and state.turn == 0
    assert state.locked == [False] * 4
    act(state, 0, "KC")
    assert state.turn == 3  # seat 3 plays again in the new trick


def test_without_lock_out_the_chips_profile_skips_only() -> None:
    state = make_hand(
        "pusoy-dos-chips", ("3C 9C KC", "6C QC", "5C JC", "4C TC"), pass_locks_out=False
    )
    run(state, (0, "3C"), (3, "pass"), (2, "5C"), (1, "6C"), (0, "9C"))
    assert state.turn == 3
    act(state, 3, "TC")


def test_lock_out_option_on_pusoy_dos() -> None:
    state = make_hand("pusoy-dos", ("3C 9C KC", "4C TC", "5C JC", "6C QC"), pass_locks_out=True)
    run(state, (0, "3C"), (1, "pass"), (2, "5C"), (3, "pass"))
    assert state.turn == 0
    act(state, 0, "9C")
    assert state.turn == 2  # 1 and 3 are locked
    outcome = act(state, 2, "pass")
    assert outcome.trick_cleared and state.turn == 0


# -- going out -----------------------------------------------------------------------


def test_going_out_ends_the_hand_at_once() -> None:
    state = make_hand("pusoy-dos", ("3C 9C", "4C", "5C JC", "6C QC"))
    act(state, 0, "3C")
    outcome = act(state, 1, "4C")
    assert outcome.hand_over and outcome.next_seat is None
    assert state.is_over and state.winner == 1 and state.turn is None
    # Nobody may answer the last play.
    for seat in range(4):
        assert rejected(state, seat, "pass") is Reason.HAND_OVER
    assert rejected(state, 2, "5C") is Reason.HAND_OVER
    assert state.card_counts() == (1, 0, 2, 2)


def test_going_out_on_a_lead() -> None:
    state = make_hand("big-two", ("3D 4D 5D 6D 7S", "4C", "5C JC", "6C QC"))
    outcome = act(state, 0, "3D 4D 5D 6D 7S")
    assert outcome.hand_over and outcome.kind is Kind.STRAIGHT and state.winner == 0


# -- no finish on a lone 2 ------------------------------------------------------------


def test_lone_two_leader_must_pass_and_the_next_player_leads() -> None:
    # big-two turns go 1 → 0 → 3 → 2.
    state = make_hand(
        "big-two", ("3D 4D", "2S", "5C JC", "6C QC"), leader=1, no_finish_on_lone_two=True
    )
    plays = state.legal_plays()
    assert plays.masks == [] and plays.can_pass
    assert rejected(state, 1, "2S") is Reason.LONE_TWO_FINISH
    outcome = act(state, 1, "pass")
    assert outcome.forced_lead_pass and outcome.next_seat == 0
    assert state.table is None and state.turn == 0
    assert rejected(state, 0, "pass") is Reason.PASS_ON_LEAD
    # Going out with a 2 that beats a play on the table stays legal.
    run(state, (0, "3D"), (3, "pass"), (2, "pass"))
    outcome = act(state, 1, "2S")
    assert outcome.hand_over and state.winner == 1


def test_lone_two_rule_lapses_when_the_lead_goes_round() -> None:
    state = make_hand("pusoy-dos", ("2C", "2S", "2H", "2D"), no_finish_on_lone_two=True)
    for seat in (0, 1, 2):
        assert rejected(state, seat, "2" + "CSH"[seat]) is Reason.LONE_TWO_FINISH
        assert act(state, seat, "pass").forced_lead_pass
    assert state.view(3).lone_two_rule
    assert rejected(state, 3, "2D") is Reason.LONE_TWO_FINISH
    act(state, 3, "pass")
    assert not state.lone_two_rule and not state.view(0).lone_two_rule
    assert state.turn == 0
    outcome = act(state, 0, "2C")
    assert outcome.hand_over and state.winner == 0


def test_lone_two_rule_does_not_stop_leading_a_two_with_cards_left() -> None:
    state = make_hand("pusoy-dos", ("2C 5C", "4C", "5H", "6C"), no_finish_on_lone_two=True)
    act(state, 0, "2C")
    assert state.table is not None


def test_without_the_option_a_lone_two_may_go_out_on_a_lead() -> None:
    state = make_hand("pusoy-dos", ("2C", "4C", "5H", "6C"))
    assert not state.legal_plays().can_pass
    assert rejected(state, 0, "pass") is Reason.PASS_ON_LEAD
    assert act(state, 0, "2C").hand_over


# -- revolution ----------------------------------------------------------------------


def test_each_four_of_a_kind_toggles_the_revolution_for_the_rest_of_the_hand() -> None:
    state = make_hand(
        "pusoy-dos",
        ("9C 9S 9H 9D 3C 2C KH", "5C 5S 5H 5D 4C 3S", "KC QS", "KD QD"),
        revolution=True,
    )
    outcome = act(state, 0, "9C 9S 9H 9D 3C")
    assert outcome.revolution and state.revolution and state.view(1).revolution
    run(state, (1, "pass"), (2, "pass"), (3, "pass"))
    act(state, 0, "2C")  # a fresh trick: the 2 is now the lowest card
    # Every single of seat 1 beats the 2 now, weakest first: the 3 is the highest rank.
    assert state.legal_plays().texts() == ["5C", "5S", "5H", "5D", "4C", "3S"]
    act(state, 1, "4C")
    assert rejected(state, 2, "KC") is Reason.DOES_NOT_BEAT  # a king is below a 4 now
    assert state.legal_plays().texts() == []
    run(state, (2, "pass"), (3, "pass"), (0, "pass"))
    # Seat 1 leads a four of a kind: the second revolution restores the order.
    outcome = act(state, 1, "5C 5S 5H 5D 3S")
    assert outcome.revolution and not state.revolution
    assert state.table is not None and state.table.kind is Kind.FOUR_OF_A_KIND


def test_without_the_option_four_of_a_kind_changes_nothing() -> None:
    state = make_hand("pusoy-dos", ("9C 9S 9H 9D 3C 2C", "5C", "KC", "KD"))
    outcome = act(state, 0, "9C 9S 9H 9D 3C")
    assert not outcome.revolution and not state.revolution


def test_a_new_hand_starts_without_revolution() -> None:
    rules = rules_of("pusoy-dos", revolution=True)
    match = MatchState(rules)
    state = match.start_hand(deal("rev", 1))
    assert not state.revolution and not state.ctx.revolution


# -- every rejection reason, and that a rejection changes nothing ----------------

REJECTIONS: list[tuple[Any, ...]] = [
    ("not_your_turn", "pusoy-dos", {}, ("3C 4C", "5C", "6C", "7C"), "", [], (2, "6C")),
    (
        "locked_out",
        "pusoy-dos-chips",
        {},
        ("3C 4C", "5C 9C", "6C TC", "7C JC"),
        "",
        [(0, "3C"), (3, "pass")],
        (3, "JC"),
    ),
    ("hand_over", "pusoy-dos", {}, ("3C", "5C", "6C", "7C"), "", [(0, "3C")], (1, "pass")),
    ("pass_on_lead", "big-two", {}, ("3D 4D", "5C", "6C", "7C"), "3D", [], (0, "pass")),
    (
        "missing_opening_card",
        "big-two",
        {},
        ("3D 4D", "5C", "6C", "7C"),
        "3D",
        [],
        (0, "4D"),
    ),
    ("card_not_in_hand", "pusoy-dos", {}, ("3C 4C", "5C", "6C", "7C"), "", [], (0, "3C 4D")),
    ("not_a_combination", "pusoy-dos", {}, ("3C 4C", "5C", "6C", "7C"), "", [], (0, "3C 4C")),
    (  # big-two turns go 0 → 3: a pair on a single
        "wrong_card_count",
        "big-two",
        {},
        ("3D 4C", "6C", "7C", "9S 9D"),
        "",
        [(0, "3D")],
        (3, "9S 9D"),
    ),
    ("does_not_beat", "pusoy-dos", {}, ("9C 4C", "5C", "6C", "7C"), "", [(0, "9C")], (1, "5C")),
    (
        "lone_two_finish",
        "pusoy-dos",
        {"no_finish_on_lone_two": True},
        ("2C", "5C", "6C", "7C"),
        "",
        [],
        (0, "2C"),
    ),
]


@pytest.mark.parametrize(
    ("reason", "profile", "options", "hands", "must", "setup", "bad"),
    REJECTIONS,
    ids=[r[0] for r in REJECTIONS],
)
def test_each_illegal_action_is_rejected_with_its_reason_and_changes_nothing(
    reason: str,
    profile: str,
    options: dict[str, Any],
    hands: tuple[str, str, str, str],
    must: str,
    setup: list[tuple[int, str]],
    bad: tuple[int, str],
) -> None:
    state = make_hand(profile, hands, 0, must, **options)
    run(state, *setup)
    assert rejected(state, *bad) == Reason(reason)


def test_every_reason_code_is_covered() -> None:
    covered = {r[0] for r in REJECTIONS} | {
        "match_over",
        "empty_play",
        "not_seat_holder",
        "unparseable_card",
        "duplicate_card",
    }
    assert covered == {r.value for r in Reason}


def test_an_empty_play_is_refused_before_it_reaches_the_hand() -> None:
    # An Action without cards is a pass, so an empty play is caught where cards are read.
    with pytest.raises(InvalidCardsError) as info:
        parse_cards([])
    assert info.value.reason is Reason.EMPTY_PLAY
    state = make_hand("pusoy-dos", ("3C 4C", "5C", "6C", "7C"))
    error = state.legal_plays().why_not(0)
    assert error is not None and error.reason is Reason.EMPTY_PLAY
    assert Action(0).is_pass and Action.pass_() == PASS


def test_match_apply_after_the_match_is_over_is_match_over() -> None:
    rng = random.Random(3)
    match = MatchState(rules_of("big-two", match_end="hands 1"))
    match.start_hand(deal("over", 1))
    finish_hand(match, rng)
    assert match.over
    totals = list(match.totals)
    for seat in range(4):
        with pytest.raises(IllegalActionError) as info:
            match.apply(seat, PASS)
        assert info.value.reason is Reason.MATCH_OVER
        error = match.check(seat, PASS)
        assert error is not None and error.reason is Reason.MATCH_OVER
    with pytest.raises(IllegalActionError) as info:
        match.start_hand(deal("over", 2))
    assert info.value.reason is Reason.MATCH_OVER
    assert match.totals == totals and len(match.results) == 1


def test_match_apply_between_hands_is_hand_over() -> None:
    rng = random.Random(4)
    match = MatchState(rules_of("big-two", match_end="hands 3"))
    error = match.check(0, PASS)
    assert error is not None and error.reason is Reason.HAND_OVER  # no hand dealt yet
    match.start_hand(deal("between", 1))
    finish_hand(match, rng)
    assert not match.over
    with pytest.raises(IllegalActionError) as info:
        match.apply(1, PASS)
    assert info.value.reason is Reason.HAND_OVER


def test_match_rejections_change_nothing() -> None:
    match = MatchState(rules_of("big-two"))
    hands = deal("unchanged", 1)
    state = match.start_hand(hands)
    leader = holder(hands, "3D")
    before = snapshot(state)
    for seat, act_ in [((leader + 1) % 4, PASS), (leader, PASS)]:
        with pytest.raises(IllegalActionError):
            match.apply(seat, act_)
    assert snapshot(state) == before
    assert match.totals == [0, 0, 0, 0] and match.results == []


# -- what each seat sees ------------------------------------------------------------


def test_seat_view_shows_only_its_own_hand() -> None:
    state = make_hand("pusoy-dos", ("3C 9C", "4C TC", "5C JC", "6C QC KC"))
    act(state, 0, "3C")
    for seat in range(4):
        view = state.view(seat)
        assert view.seat == seat
        assert view.hand == state.hands[seat]
        assert view.card_counts == (1, 2, 2, 3)
        assert view.table == parse_cards("3C")
        assert view.table_kind is Kind.SINGLE and view.table_seat == 0
        assert view.turn == 1
        others = 0
        for other in range(4):
            if other != seat:
                others |= state.hands[other]
        for field in dataclasses.fields(SeatView):
            value = getattr(view, field.name)
            if isinstance(value, int) and not isinstance(value, bool) and field.name != "seat":
                assert value & others == 0, f"seat {seat} sees another hand in {field.name}"
        names = {f.name for f in dataclasses.fields(SeatView)}
        assert "hands" not in names


@pytest.mark.parametrize(
    "text",
    [
        "9C 9S 9H 9D",  # four cards
        "9C 9S 8H 8D",  # two pairs
        "3C 5C 7H 9S JC",  # five cards of no category
        "AC 2D 3C 4C 5C",  # a straight pusoy-dos-chips does not allow
        "JC QD KC AC 2C",  # J-Q-K-A-2
        "3C 4C",  # two ranks
    ],
)
def test_a_set_that_is_no_play_is_not_a_combination(text: str) -> None:
    hand = "AC 2D 3C 4C 5C 7H 9S 9C 9H 9D 8H 8D JC QD KC 2C"
    state = make_hand("pusoy-dos-chips", (hand, "2H", "2S", "3D"))
    assert rejected(state, 0, text) is Reason.NOT_A_COMBINATION
