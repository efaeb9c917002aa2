"""Hand scores, match totals, standings and the end of a match (docs/rules.md)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from brute import random_action, random_deal

from referee.rules import (
    MatchState,
    Rules,
    Standing,
    card_cost,
    parse_cards,
    score_hand,
    standings,
)
from referee.rules.scoring import match_over

PROFILES = ("pusoy-dos", "pusoy-dos-chips", "big-two")
RANKS = "3456789TJQKA2"


def rules_of(profile: str, **options: Any) -> Rules:
    return Rules.for_profile(profile, options)


def cards_without_twos(n: int, suit_first: str = "CSHD") -> int:
    """``n`` cards, none of them a 2."""
    tokens = [r + s for s in suit_first for r in RANKS[:-1]]
    return parse_cards(tokens[:n], allow_empty=True)


# -- what a loser's cards cost ----------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("n", "cost"),
    [(0, 0), (1, 1), (4, 4), (9, 9), (10, 20), (11, 22), (12, 24), (13, 39)],
)
def test_card_cost_n_then_2n_from_10_then_39_for_13(profile: str, n: int, cost: int) -> None:
    assert card_cost(rules_of(profile), n) == cost


@pytest.mark.parametrize(
    ("multiplier_from", "n", "cost"),
    [(8, 7, 7), (8, 8, 16), (8, 12, 24), (8, 13, 39), (5, 5, 10), (13, 12, 12), (13, 13, 39)],
)
def test_multiplier_from_moves_where_the_double_penalty_starts(
    multiplier_from: int, n: int, cost: int
) -> None:
    rules = rules_of("pusoy-dos", multiplier_from=multiplier_from)
    assert card_cost(rules, n) == cost


@pytest.mark.parametrize("profile", ["pusoy-dos", "big-two"])
def test_penalty_scoring_winner_zero_losers_their_cost(profile: str) -> None:
    rules = rules_of(profile)
    hands = [cards_without_twos(4), 0, cards_without_twos(10, "SHDC"), parse_cards("2C 2S 2H 2D")]
    assert score_hand(rules, hands, winner=1) == (4, 0, 20, 4)


def test_penalty_scoring_has_no_extras_for_twos() -> None:
    rules = rules_of("pusoy-dos")
    twos = parse_cards("2C 2S 2H 2D 3C")
    assert score_hand(rules, [0, twos, 0, 0], winner=0)[1] == 5


def test_chips_losers_pay_the_winner_collects_the_sum() -> None:
    rules = rules_of("pusoy-dos-chips")
    hands = [
        0,
        cards_without_twos(3),
        cards_without_twos(11, "SHDC"),
        cards_without_twos(13, "HDCS"),
    ]
    scores = score_hand(rules, hands, winner=0)
    assert scores == (3 + 22 + 39, -3, -22, -39)
    assert sum(scores) == 0


def test_chips_plus_one_for_the_highest_card_added_after_the_multiplier() -> None:
    rules = rules_of("pusoy-dos-chips")
    ten_with_2d = cards_without_twos(9) | parse_cards("2D")
    scores = score_hand(rules, [ten_with_2d, 0, parse_cards("2S"), parse_cards("2H")], winner=1)
    assert scores[0] == -(2 * 10 + 1)
    assert scores[2] == -1 and scores[3] == -1  # 2♠ and 2♥ are not the highest card
    assert sum(scores) == 0


def test_chips_plus_four_for_all_four_twos_and_plus_one_for_the_top_two() -> None:
    rules = rules_of("pusoy-dos-chips")
    all_twos = parse_cards("2C 2S 2H 2D 3C")
    assert score_hand(rules, [0, all_twos, 0, 0], winner=0) == (10, -10, 0, 0)


def test_chips_with_diamonds_low_the_highest_card_is_the_two_of_spades() -> None:
    rules = rules_of("pusoy-dos-chips", suit_order="diamonds-low")
    assert rules.highest_card == parse_cards("2S").bit_length() - 1
    scores = score_hand(rules, [0, parse_cards("2S 3C"), parse_cards("2D 3D"), 0], winner=0)
    assert scores == (3 + 2, -3, -2, 0)


def test_chips_option_on_big_two() -> None:
    rules = rules_of("big-two", scoring="chips")
    scores = score_hand(rules, [0, parse_cards("2S"), parse_cards("2D"), 0], winner=3)
    assert scores == (0, -2, -1, 3)


# -- teams ---------------------------------------------------------------------------


def test_teams_penalty_each_player_counts_and_the_team_sums() -> None:
    rules = rules_of("pusoy-dos", teams=True)
    hands = [
        0,
        cards_without_twos(3),
        cards_without_twos(5, "SHDC"),
        cards_without_twos(10, "HDCS"),
    ]
    scores = score_hand(rules, hands, winner=0)
    assert scores == (0, 3, 5, 20)  # the winner's partner (seat 2) still counts his cards
    table = standings(rules, [0 + 0, 3, 5, 20], [1, 0, 0, 0])
    assert [(s.seats, s.total) for s in table] == [((0, 2), 5), ((1, 3), 23)]


@pytest.mark.parametrize("winner", range(4))
def test_teams_chips_winner_collects_from_opponents_and_partner_pays_them(winner: int) -> None:
    rules = rules_of("pusoy-dos-chips", teams=True)
    hands = [
        cards_without_twos(n, suits)
        for n, suits in [(2, "CSHD"), (4, "SHDC"), (7, "HDCS"), (10, "DCSH")]
    ]
    hands[winner] = 0
    cost = [0 if s == winner else card_cost(rules, hands[s].bit_count()) for s in range(4)]
    scores = score_hand(rules, hands, winner)
    partner = (winner + 2) % 4
    opponents = [s for s in range(4) if s % 2 != winner % 2]
    assert sum(scores) == 0
    assert scores[winner] == sum(cost[s] for s in opponents)
    assert scores[partner] == -cost[partner]
    team = scores[winner] + scores[partner]
    assert team == sum(cost[s] for s in opponents) - cost[partner]
    assert sum(scores[s] for s in opponents) == -team


# -- standings -------------------------------------------------------------------------


def places(table: list[Standing]) -> list[tuple[int, tuple[int, ...]]]:
    return [(s.place, s.seats) for s in table]


def test_pusoy_dos_lowest_total_wins_ties_by_hands_won_then_lower_seat() -> None:
    rules = rules_of("pusoy-dos")
    assert places(standings(rules, [12, 5, 30, 7], [1, 2, 0, 1])) == [
        (1, (1,)),
        (2, (3,)),
        (3, (0,)),
        (4, (2,)),
    ]
    # Seats 1 and 3 tie on 5: seat 3 won more hands.
    assert places(standings(rules, [12, 5, 30, 5], [0, 1, 0, 3]))[:2] == [(1, (3,)), (2, (1,))]
    # Seats 0 and 2 tie on total and hands won: the lower seat is ahead.
    assert places(standings(rules, [9, 20, 9, 31], [2, 0, 2, 0]))[:2] == [(1, (0,)), (2, (2,))]


def test_chips_highest_total_wins_and_ties_are_shared() -> None:
    rules = rules_of("pusoy-dos-chips")
    table = standings(rules, [10, -30, 10, 10], [5, 0, 1, 1])
    assert places(table) == [(1, (0,)), (1, (2,)), (1, (3,)), (4, (1,))]
    assert [s.total for s in table] == [10, 10, 10, -30]


def test_big_two_lowest_total_wins_and_ties_are_shared() -> None:
    rules = rules_of("big-two")
    table = standings(rules, [8, 8, 3, 40], [0, 5, 2, 3])
    assert places(table) == [(1, (2,)), (2, (0,)), (2, (1,)), (4, (3,))]
    assert table[0].hands_won == 2


def test_team_standings_tie_by_hands_won_in_pusoy_dos() -> None:
    rules = rules_of("pusoy-dos", teams=True)
    table = standings(rules, [5, 6, 5, 4], [1, 2, 0, 0])
    assert places(table) == [(1, (1, 3)), (2, (0, 2))]  # both 10; team 1+3 won 2 hands


# -- the end of a match --------------------------------------------------------------


def test_threshold_ends_after_the_hand_in_which_a_total_reaches_it() -> None:
    rules = rules_of("pusoy-dos")
    assert not match_over(rules, [29, 0, 10, 5], 7)
    assert match_over(rules, [30, 0, 10, 5], 7)
    assert match_over(rules, [0, 44, 10, 5], 1)
    short = rules_of("pusoy-dos", match_end="threshold 12")
    assert match_over(short, [0, 12, 0, 0], 1)


def test_fixed_number_of_hands() -> None:
    rules = rules_of("big-two")
    assert rules.match_end_value == 10
    assert not match_over(rules, [100, 0, 0, 0], 9)
    assert match_over(rules, [0, 0, 0, 0], 10)
    assert match_over(rules_of("pusoy-dos-chips", match_end="hands 3"), [0, 0, 0, 0], 3)


def test_chips_loss_limit_ends_when_a_cumulative_loss_reaches_it() -> None:
    rules = rules_of("pusoy-dos-chips", match_end="threshold 50")
    assert not match_over(rules, [49, -49, 0, 0], 1)
    assert match_over(rules, [50, -50, 0, 0], 1)
    assert not match_over(rules, [-20, 60, -20, -20], 1)  # a win is not a loss


def test_team_threshold_uses_team_totals() -> None:
    rules = rules_of("pusoy-dos", teams=True)
    assert match_over(rules, [15, 0, 15, 0], 2)
    assert not match_over(rules, [14, 14, 15, 15], 2)


@pytest.mark.parametrize(
    ("profile", "options"),
    [
        ("pusoy-dos", {}),
        ("pusoy-dos", {"match_end": "threshold 12"}),
        ("pusoy-dos-chips", {"match_end": "hands 3"}),
        ("pusoy-dos-chips", {"match_end": "threshold 20"}),
        ("big-two", {"match_end": "hands 2"}),
        ("pusoy-dos", {"teams": True, "match_end": "threshold 15"}),
    ],
)
def test_a_match_ends_exactly_after_the_first_hand_that_meets_its_end(
    profile: str, options: dict[str, Any]
) -> None:
    rules = rules_of(profile, **options)
    rng = random.Random(f"{profile}{options}")
    match = MatchState(rules)
    totals = [0, 0, 0, 0]
    for _ in range(60):
        state = match.start_hand(random_deal(rng))
        result = None
        while result is None:
            seat = state.turn
            assert seat is not None
            _, result = match.apply(seat, random_action(state, rng))
        totals = [t + s for t, s in zip(totals, result.scores, strict=True)]
        assert list(result.totals) == totals == match.totals
        assert match.over == match_over(rules, totals, match.hand_number)
        if match.over:
            break
    assert match.over
    assert all(not match_over(rules, r.totals, r.hand_number) for r in match.results[:-1])
    assert sum(match.hands_won) == len(match.results)
    first = match.standings()[0]
    assert set(first.seats) <= set(match.winners())


def test_max_hands_ends_a_threshold_match_nobody_reaches():
    from referee.rules import MatchState, Rules, deal

    rules = Rules.for_profile("pusoy-dos", {"match_end": "threshold 1000000000", "max_hands": 3})
    match = MatchState(rules)
    number = 0
    while not match.over:
        number += 1
        hand = match.start_hand(deal("cap", number))
        while not hand.is_over:
            from referee.match.actions import default_action

            assert hand.turn is not None
            match.apply(hand.turn, default_action(hand))
    assert match.hand_number == 3
    assert max(match.totals) < 1000000000
