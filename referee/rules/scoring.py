"""Hand scores and match standings, per profile (docs/rules.md).

Scores are signed per seat: with penalty scoring a loser gets a positive penalty and a
lower total is better; with chips scoring losers pay (negative) and the winner collects,
so every hand sums to zero and a higher total is better.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from referee.rules.cards import HAND_SIZE, TWOS_MASK
from referee.rules.options import MatchEnd, Rules, Scoring, TieBreak

TEAMS: tuple[tuple[int, int], tuple[int, int]] = ((0, 2), (1, 3))


def team_of(seat: int) -> int:
    return seat % 2


def card_cost(rules: Rules, cards_left: int) -> int:
    """What ``cards_left`` cards cost a loser: n, 2n from ``multiplier_from``, 3n for 13."""
    if cards_left >= HAND_SIZE:
        return 3 * cards_left
    if cards_left >= rules.multiplier_from:
        return 2 * cards_left
    return cards_left


def loser_amount(rules: Rules, hand: int) -> int:
    """A loser's penalty or payment; chips add +1 for the top card and +4 for all four 2s."""
    amount = card_cost(rules, hand.bit_count())
    if rules.scoring is Scoring.CHIPS:
        if hand >> rules.highest_card & 1:
            amount += 1
        if hand & TWOS_MASK == TWOS_MASK:
            amount += 4
    return amount


def score_hand(rules: Rules, hands_left: Sequence[int], winner: int) -> tuple[int, ...]:
    """Each seat's signed score for one hand, given the cards left and the winner."""
    amounts = [0 if s == winner else loser_amount(rules, h) for s, h in enumerate(hands_left)]
    if rules.scoring is Scoring.PENALTY:
        return tuple(amounts)
    scores = [0, 0, 0, 0]
    if not rules.teams:
        for s in range(4):
            if s != winner:
                scores[s] = -amounts[s]
        scores[winner] = sum(amounts)
        return tuple(scores)
    partner = (winner + 2) % 4
    opponents = [s for s in range(4) if team_of(s) != team_of(winner)]
    for s in opponents:
        scores[s] = -amounts[s]
    scores[winner] = sum(amounts[s] for s in opponents)
    # The winner's partner pays what his cards cost to the opposing team, split between
    # its two players (the odd chip to the lower seat) so that every hand sums to zero.
    paid = amounts[partner]
    scores[partner] = -paid
    low, high = opponents
    scores[low] += paid - paid // 2
    scores[high] += paid // 2
    return tuple(scores)


@dataclasses.dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings: a place (shared on ties), the seats, total, hands won."""

    place: int
    seats: tuple[int, ...]
    total: int
    hands_won: int


def standings(rules: Rules, totals: Sequence[int], hands_won: Sequence[int]) -> list[Standing]:
    """The order of finish; with teams, one line per team (seats 0+2 and 1+3)."""
    entries: list[tuple[tuple[int, ...], int, int]]
    if rules.teams:
        entries = [
            (seats, sum(totals[s] for s in seats), sum(hands_won[s] for s in seats))
            for seats in TEAMS
        ]
    else:
        entries = [((s,), totals[s], hands_won[s]) for s in range(4)]
    better_low = rules.scoring is Scoring.PENALTY

    def sort_key(entry: tuple[tuple[int, ...], int, int]) -> tuple[int, ...]:
        seats, total, won = entry
        primary = total if better_low else -total
        if rules.tie_break is TieBreak.HANDS_WON_THEN_SEAT:
            return (primary, -won, seats[0])
        return (primary, seats[0])

    ordered = sorted(entries, key=sort_key)
    out: list[Standing] = []
    for i, (seats, total, won) in enumerate(ordered):
        place = i + 1
        if rules.tie_break is TieBreak.SHARED and out and out[-1].total == total:
            place = out[-1].place
        out.append(Standing(place, seats, total, won))
    return out


def match_over(rules: Rules, totals: Sequence[int], hands_played: int) -> bool:
    """Whether the match ends after the hand just scored."""
    if rules.max_hands and hands_played >= rules.max_hands:
        return True
    if rules.match_end is MatchEnd.HANDS:
        return hands_played >= rules.match_end_value
    limit = rules.match_end_value
    sides = [totals[a] + totals[b] for a, b in TEAMS] if rules.teams else list(totals)
    if rules.scoring is Scoring.PENALTY:
        return any(t >= limit for t in sides)
    return any(-t >= limit for t in sides)
