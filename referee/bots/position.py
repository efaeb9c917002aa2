"""What a seat knows when it is to act, in the engine's terms (card masks), for the
strategies that think: the rule-based expert and the search.

A ``Position`` is made from a prompt (``from_prompt``: the gRPC bots) or from the engine's
own state (``from_hand``: the environments' opponents, the frozen positions that hash the
anchors' decisions); both give the same value for the same moment, so a strategy decides
the same way wherever it is seated. It holds nothing the seat may not know: its own
cards and the public state. ``deal_unseen`` fills in the others' cards at random (a
determinisation) and ``hand_state`` makes the engine's ``HandState`` of the result, which
a search plays on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Sequence

from referee.protocol import play_service
from referee.rules import SEATS, HandState, Rules, parse_cards
from referee.rules.cards import ALL_CARDS_MASK, iter_cards

IGNORED_OPTIONS = ("match_end", "max_hands")


@dataclasses.dataclass(frozen=True, slots=True)
class Position:
    """One seat to act, what it knows."""

    rules: Rules
    seat: int
    hand: int
    """Its cards (a mask)."""
    counts: tuple[int, int, int, int]
    """Cards left per seat, seats 0..3."""
    played: int
    """Every card played so far in this hand."""
    plays: tuple[int, ...]
    """Its legal plays, weakest first (the engine's order)."""
    can_pass: bool
    table: int = 0
    """The play to beat; 0 on a lead."""
    table_seat: int = -1
    passes: int = 0
    """Passes since the play to beat (the rule without lock-outs)."""
    locked: tuple[bool, bool, bool, bool] = (False, False, False, False)
    must_include: int = 0
    revolution: bool = False
    lone_two_rule: bool = False
    lead_passes: int = 0
    """Forced passes on a lead in a row (``no_finish_on_lone_two``)."""
    hand_number: int = 1

    @property
    def is_lead(self) -> bool:
        return not self.table

    @property
    def unseen(self) -> int:
        """The cards the other seats hold between them."""
        return ALL_CARDS_MASK & ~self.hand & ~self.played

    def next_seat(self, seat: int, step: int = 1) -> int:
        """The seat ``step`` turns after ``seat`` in the rules' direction."""
        forward = 1 if self.rules.direction.value == "clockwise" else 3
        return (seat + forward * step) % SEATS

    def key(self) -> bytes:
        """The position as bytes: what a decision may depend on (seeds, hashes). The
        match's length and a referee's hands cap are left out: no play of a hand
        depends on them."""
        options = self.rules.options()
        for name in IGNORED_OPTIONS:
            options.pop(name, None)
        fields = (
            self.rules.profile,
            sorted(options.items()),
            self.seat,
            self.hand,
            self.counts,
            self.played,
            self.table,
            self.table_seat,
            self.passes,
            self.locked,
            self.must_include,
            self.revolution,
            self.lone_two_rule,
            self.lead_passes,
            self.plays,
            self.can_pass,
        )
        return repr(fields).encode()

    def seed(self, salt: int | str) -> int:
        """A seed for a decision at this position: the same position and salt give the
        same decision, whatever came before."""
        digest = hashlib.sha256(self.key() + b"|" + str(salt).encode()).digest()
        return int.from_bytes(digest[:8], "big")

    def deal_unseen(self, rng: random.Random) -> list[int]:
        """Every seat's cards: this seat's own, the unseen cards dealt at random to the
        others in their numbers."""
        cards = list(iter_cards(self.unseen))
        rng.shuffle(cards)
        hands = [0, 0, 0, 0]
        at = 0
        for s in range(SEATS):
            if s == self.seat:
                hands[s] = self.hand
                continue
            for c in cards[at : at + self.counts[s]]:
                hands[s] |= 1 << c
            at += self.counts[s]
        return hands

    def hand_state(self, hands: Sequence[int]) -> HandState:
        """The engine's hand at this moment with these cards in the seats."""
        return HandState.resume(
            self.rules,
            list(hands),
            self.seat,
            table=self.table,
            table_seat=self.table_seat if self.table else None,
            passes=self.passes,
            locked=self.locked,
            must_include=self.must_include,
            revolution=self.revolution,
            lone_two_rule=self.lone_two_rule,
            lead_passes=self.lead_passes,
        )


def _four(values: Sequence[int]) -> tuple[int, int, int, int]:
    v = [*values, 0, 0, 0, 0]
    return v[0], v[1], v[2], v[3]


def _mask(cards: Sequence[str]) -> int:
    return parse_cards(list(cards), allow_empty=True)


def from_prompt(prompt: play_service.TurnPrompt, rules: Rules) -> Position:
    """The position of a prompt (its legal plays must be listed: the built-in bots ask
    for them), under the match's rules (from the welcome)."""
    st = prompt.state
    passes = 0
    for t in st.trick:  # oldest first: the passes after the last play
        passes = passes + 1 if getattr(t, "pass") else 0
    if rules.pass_locks_out:  # a pass locks its seat out instead of being counted
        passes = passes if not st.table.cards else 0
    table = _mask(st.table.cards)
    locked = tuple(bool(x) for x in [*st.locked_out, False, False, False, False][:4])
    return Position(
        rules=rules,
        seat=prompt.seat,
        hand=_mask(prompt.hand),
        counts=_four(st.card_counts),
        played=_mask(st.played_cards),
        plays=tuple(_mask(p.cards) for p in prompt.legal_plays),
        can_pass=prompt.can_pass,
        table=table,
        table_seat=st.table_seat if table and st.HasField("table_seat") else -1,
        passes=passes if table else 0,
        locked=(locked[0], locked[1], locked[2], locked[3]),
        must_include=_mask([st.must_include]) if st.must_include else 0,
        revolution=st.revolution,
        lone_two_rule=st.lone_two_rule,
        lead_passes=0 if table else passes,
        hand_number=st.hand_number,
    )


def from_hand(hand: HandState, played: int, hand_number: int = 1) -> Position:
    """The position of the seat to act in an engine's hand (``played``: every card
    played in it so far, which the hand itself does not keep)."""
    seat = hand.turn
    if seat is None:
        raise ValueError("nobody is to act: the hand is over")
    legal = hand.legal_plays(seat)
    table = hand.table
    lk = hand.locked
    return Position(
        rules=hand.rules,
        seat=seat,
        hand=hand.hands[seat],
        counts=_four(hand.card_counts()),
        played=played,
        plays=tuple(legal.masks),
        can_pass=legal.can_pass,
        table=table.mask if table is not None else 0,
        table_seat=hand.table_seat if table is not None and hand.table_seat is not None else -1,
        passes=hand.passes if table is not None else 0,
        locked=(lk[0], lk[1], lk[2], lk[3]),
        must_include=hand.must_include,
        revolution=hand.revolution,
        lone_two_rule=hand.lone_two_rule,
        lead_passes=hand.lead_passes if table is None else 0,
        hand_number=hand_number,
    )
