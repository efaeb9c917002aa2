"""One match on the rules engine, with what each seat has seen: the core of every
environment and of ``referee dataset``.

The environments need, at every turn, the facts the kit's encoder turns into an
observation (``pusoy_client.rl.SeatFacts``) and the legal actions. The referee's own
path to them (the match machine, the observer's prompt messages) builds protobuf
messages at every turn, several times the cost of the engine's turn itself; this keeps
the engine's ``MatchState`` and the few facts a seat learns from events (its dealt
hand's positions, who played which cards, who passed since the last play), and
``tests/rl/test_parity.py`` shows that both paths give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from pusoy_client.rl import NUM_ACTIONS, PASS_ACTION, Encoder, HandIndex, SeatFacts
from pusoy_client.rl.index import POSITIONS
from referee.rules import (
    Action,
    HandResult,
    HandState,
    Kind,
    MatchState,
    Outcome,
    Rules,
    Scoring,
    deal,
)
from referee.rules.cards import iter_cards

if TYPE_CHECKING:
    from referee.rl.render import TextRecord

KIND_INDEX = {
    Kind.SINGLE: 0,
    Kind.PAIR: 1,
    Kind.TRIPLE: 2,
    Kind.STRAIGHT: 3,
    Kind.FLUSH: 4,
    Kind.FULL_HOUSE: 5,
    Kind.FOUR_OF_A_KIND: 6,
    Kind.STRAIGHT_FLUSH: 7,
}


_new_facts = tuple.__new__


class IllegalAction(ValueError):
    """An action outside the mask of the seat to act (or no seat is to act)."""


def reward_sign(rules: Rules) -> int:
    """+1 with chips (a seat's score is what it won), -1 with penalty points (a seat's
    score is what it lost): a reward is ``sign * score``, so more is always better."""
    return 1 if rules.scoring is Scoring.CHIPS else -1


class Game:
    """A match of one ``Rules`` value: deals from a seed (as the referee deals them),
    actions by index, and each seat's facts.

    ``hands_cap``: the match is *truncated* (not over) after this many hands.
    ``auto_deal``: deal the next hand from the seed as soon as one ends (the
    environments); ``referee dataset`` deals what the log says instead.
    """

    def __init__(self, rules: Rules, hands_cap: int | None = None, auto_deal: bool = True) -> None:
        if hands_cap is not None and hands_cap < 1:
            raise ValueError("hands_cap must be at least 1 (or None: no cap)")
        self.rules = rules
        self.encoder = Encoder(rules.options())
        self.suit_order = rules.suit_order.value
        self.sign = reward_sign(rules)
        self.hands_cap = hands_cap
        self.auto_deal = auto_deal
        self.seed = ""
        self.match = MatchState(rules)
        self.hand: HandState | None = None
        self.truncated = False
        self.dealt: list[HandIndex] = []
        self.played = [0, 0, 0, 0]
        self.played_all = 0
        self.passed = 0
        self.held = [0, 0, 0, 0]
        """Each seat's held positions (13-bit masks), kept as cards are played."""
        self.last_result: HandResult | None = None
        self._legal: tuple[list[int], list[int], bool] | None = None
        self.to_act: int | None = None
        """The seat to act; None when the match is over."""
        self.record: TextRecord | None = None
        """Set by a render mode: every event is recorded for the text replay."""

    # -- life ------------------------------------------------------------------------

    def reset(self, seed: str) -> None:
        """A new match dealt from ``seed`` (hand n is ``deal(seed, n)``, as at the referee)."""
        self.seed = seed
        self.match = MatchState(self.rules)
        self.truncated = False
        self.last_result = None
        self.hand = None
        self.to_act = None
        self._legal = None
        if self.record is not None:
            self.record.started(seed)
        if self.auto_deal:
            self.start_hand(deal(seed, 1))

    def start_hand(self, hands: Sequence[int]) -> None:
        """Deal the next hand (four disjoint 13-card masks)."""
        self.hand = self.match.start_hand(list(hands))
        order = self.suit_order
        self.dealt = [HandIndex(iter_cards(h), order) for h in hands]
        self.held = [(1 << len(d.cards)) - 1 for d in self.dealt]
        self.played = [0, 0, 0, 0]
        self.played_all = 0
        self.passed = 0
        self._legal = None
        self._update_turn()
        if self.record is not None:
            self.record.dealt(self.match, hands)

    @property
    def over(self) -> bool:
        """The match ended, or was truncated at the hands cap."""
        return self.match.over or self.truncated

    def _update_turn(self) -> None:
        hand = self.hand
        self.to_act = None if hand is None or self.over else hand.turn

    # -- the seat to act -------------------------------------------------------------

    def _legal_now(self) -> tuple[list[int], list[int], bool]:
        legal = self._legal
        if legal is None:
            seat = self.to_act
            hand = self.hand
            if seat is None or hand is None:
                legal = ([], [], False)  # the match is over
            else:
                plays = hand.legal_plays(seat)
                masks, can_pass = plays.masks, plays.can_pass
                dealt = self.dealt[seat]
                try:
                    actions = [dealt.known[m] for m in masks]
                except KeyError:
                    actions = dealt.actions_of(masks)
                if can_pass:
                    actions.append(PASS_ACTION)
                legal = (masks, actions, can_pass)
            self._legal = legal
        return legal

    def legal_plays(self) -> tuple[list[int], bool]:
        """The seat to act's legal plays (card masks, the engine's order) and the pass."""
        masks, _, can_pass = self._legal_now()
        return masks, can_pass

    def legal_actions(self) -> list[int]:
        """The seat to act's legal action indices (plays in the engine's order, then the
        pass when it is allowed)."""
        return self._legal_now()[1]

    def action_mask(self) -> npt.NDArray[np.int8]:
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[self._legal_now()[1]] = 1
        return mask

    def step(self, action: int) -> HandResult | None:
        """Play an action index for the seat to act; the hand's result when it ended.

        Raises ``IllegalAction`` for an index outside the mask.
        """
        actions = (self._legal or self._legal_now())[1]
        try:
            i = actions.index(action)
        except ValueError:
            if self.to_act is None:
                raise IllegalAction("no seat is to act: the match is over") from None
            raise IllegalAction(
                f"action {action} is not legal for seat {self.to_act} now"
            ) from None
        return self.step_at(i)

    def step_at(self, i: int) -> HandResult | None:
        """Play the ``i``-th of ``legal_actions()`` (for policies over the legal list)."""
        masks, actions, _ = self._legal or self._legal_now()
        seat = self.to_act
        if seat is None or not 0 <= i < len(actions):
            raise IllegalAction(f"no legal action {i}: {len(actions)} are legal now")
        return self.play(seat, masks[i] if i < len(masks) else 0, actions[i])[1]

    def play(
        self, seat: int, cards: int, action: int | None = None
    ) -> tuple[Outcome, HandResult | None]:
        """Apply a play (a card mask; 0 passes) through the engine, which checks it.
        ``action``: its index, when the caller knows it."""
        outcome, result = self.match.apply(seat, Action(cards))
        self._legal = None
        if cards:
            if action is None:
                action = self.dealt[seat].action_of(cards)
            self.held[seat] &= ~POSITIONS[action]
            self.played[seat] |= cards
            self.played_all |= cards
            self.passed = 0
        else:
            self.passed |= 1 << seat
        if outcome.trick_cleared:
            self.passed = 0
        record = self.record
        if record is not None:
            record.acted(self.match, outcome)
            if result is not None:
                record.hand_ended(result)
                if self.match.over:
                    record.match_ended(self.match, self.seed)
        if result is None:
            self.to_act = outcome.next_seat
            return outcome, None
        self.last_result = result
        cap = self.hands_cap
        if not self.match.over and cap is not None and self.match.hand_number >= cap:
            self.truncated = True
        if self.auto_deal and not self.over:
            self.start_hand(deal(self.seed, self.match.hand_number + 1))
        self._update_turn()
        return outcome, result

    def rewards(self, result: HandResult) -> list[float]:
        """Each seat's reward for a hand: ``sign * score`` (see ``reward_sign``)."""
        return [float(self.sign * s) for s in result.scores]

    # -- what a seat knows -------------------------------------------------------------

    def facts(self, seat: int) -> SeatFacts:
        hand = self.hand
        if hand is None:
            raise RuntimeError("no hand has been dealt")
        match = self.match
        table = hand.table
        held = hand.hands
        lk = hand.locked
        # tuple.__new__ rather than SeatFacts(...): this runs at every step, and the
        # named tuple's own constructor is a Python function.
        return _new_facts(
            SeatFacts,
            (
                seat,
                self.dealt[seat],
                held[seat],
                tuple(self.played),
                self.played_all,
                (
                    held[0].bit_count(),
                    held[1].bit_count(),
                    held[2].bit_count(),
                    held[3].bit_count(),
                ),
                0 if table is None else table.mask,
                -1 if table is None else KIND_INDEX[table.kind],
                -1 if table is None or hand.table_seat is None else hand.table_seat,
                self.passed,
                lk[0] | lk[1] << 1 | lk[2] << 2 | lk[3] << 3,
                bool(hand.must_include),
                hand.revolution,
                hand.lone_two_rule,
                match.hand_number,
                tuple(match.totals),
                tuple(match.hands_won),
                self.held[seat],
            ),
        )

    def observe(self, seat: int) -> npt.NDArray[np.int8]:
        return self.encoder.encode(self.facts(seat))
