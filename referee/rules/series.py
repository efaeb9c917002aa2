"""A series of hands (a match, as the rules see it): who leads each, totals, the end and
the standings. Named apart from `referee.match`, the referee's match machine."""

from __future__ import annotations

import dataclasses

from referee.rules.errors import IllegalActionError, Reason
from referee.rules.hand import SEATS, Action, HandState, Outcome
from referee.rules.options import FirstLead, Rules
from referee.rules.scoring import Standing, match_over, score_hand, standings


@dataclasses.dataclass(frozen=True, slots=True)
class HandResult:
    """The end of one hand: the winner, every seat's remaining cards, the scores."""

    hand_number: int
    winner: int
    cards_left: tuple[int, ...]
    """Masks of the cards each seat still held (revealed when the hand ends)."""
    scores: tuple[int, ...]
    totals: tuple[int, ...]


class MatchState:
    """A match of one rules value: start each hand with a deal, apply actions."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.hand_number = 0
        self.hand: HandState | None = None
        self.totals = [0] * SEATS
        self.hands_won = [0] * SEATS
        self.results: list[HandResult] = []
        self.over = False
        self.last_winner: int | None = None

    def clone(self) -> MatchState:
        """An independent copy (hand results are shared: they never change)."""
        other = object.__new__(MatchState)
        other.__dict__.update(self.__dict__)
        other.hand = self.hand.clone() if self.hand is not None else None
        other.totals = list(self.totals)
        other.hands_won = list(self.hands_won)
        other.results = list(self.results)
        return other

    def leader_for(self, hands: tuple[int, ...] | list[int]) -> tuple[int, int]:
        """Who leads the next hand and which card the first play must contain (0: none)."""
        opening = 1 << self.rules.opening_card
        first = self.hand_number == 0
        if self.rules.first_lead is FirstLead.OPENING_CARD_EVERY_HAND or first:
            holder = next(s for s in range(SEATS) if hands[s] & opening)
            return holder, opening
        assert self.last_winner is not None
        return self.last_winner, 0

    def start_hand(self, hands: tuple[int, int, int, int] | list[int]) -> HandState:
        """Deal the next hand (four disjoint 13-card masks)."""
        if self.over:
            raise IllegalActionError(Reason.MATCH_OVER, "the match is over")
        if self.hand is not None and not self.hand.is_over:
            raise ValueError("the current hand is not over")
        if sorted(h.bit_count() for h in hands) != [13] * SEATS:
            raise ValueError("each seat is dealt 13 cards")
        leader, must = self.leader_for(hands)
        self.hand_number += 1
        self.hand = HandState(self.rules, hands, leader, must)
        return self.hand

    def check(self, seat: int, action: Action) -> IllegalActionError | None:
        if self.over:
            return IllegalActionError(Reason.MATCH_OVER, "the match is over")
        if self.hand is None:
            return IllegalActionError(Reason.HAND_OVER, "no hand is being played")
        return self.hand.check(seat, action)

    def apply(self, seat: int, action: Action) -> tuple[Outcome, HandResult | None]:
        """Apply a legal action; when it ends the hand, score it and maybe the match."""
        if self.over or self.hand is None:
            error = self.check(seat, action)
            assert error is not None
            raise error
        outcome = self.hand.apply(seat, action)  # checks the action (once: it is the cost)
        if not outcome.hand_over:
            return outcome, None
        return outcome, self._finish_hand(seat)

    def _finish_hand(self, winner: int) -> HandResult:
        assert self.hand is not None
        left = tuple(self.hand.hands)
        scores = score_hand(self.rules, left, winner)
        for s in range(SEATS):
            self.totals[s] += scores[s]
        self.hands_won[winner] += 1
        self.last_winner = winner
        result = HandResult(self.hand_number, winner, left, scores, tuple(self.totals))
        self.results.append(result)
        self.over = match_over(self.rules, self.totals, self.hand_number)
        return result

    def standings(self) -> list[Standing]:
        return standings(self.rules, self.totals, self.hands_won)

    def winners(self) -> tuple[int, ...]:
        """The seats in first place (several when a tie is shared)."""
        out: list[int] = []
        for st in self.standings():
            if st.place == 1:
                out.extend(st.seats)
        return tuple(sorted(out))
