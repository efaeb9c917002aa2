"""The action index: one fixed number for every play the rules can allow, and the pass.

A policy's output layer needs a fixed set of actions, but a hand's plays depend on its
cards. So the index numbers the plays by *positions* in the seat's hand: at the deal the
13 dealt cards are sorted once in the profile's normal card order (rank, then suit under
the suit order in force; a revolution does not re-sort) and keep those positions, 0 the
weakest, until the hand ends; cards that leave the hand leave holes, and no card moves.
An action is a set of 1, 2, 3 or 5 positions:

====================  ==========  =========================================
actions               count       order
====================  ==========  =========================================
0 .. 12               13          singles: position 0 .. 12
13 .. 90              78          pairs of positions, lexicographic
91 .. 376             286         triples of positions, lexicographic
377 .. 1663           1287        five-card sets of positions, lexicographic
1664                  1           the pass
====================  ==========  =========================================

Every set of positions has an index whether or not its cards form a play (four positions
never do); the engine's legal plays decide which are allowed now (the mask). Pure Python,
no numpy: a bot that only needs to turn an index into cards imports this alone.

>>> hand = HandIndex.from_text(["9S", "3D", "2S", "9D"], "diamonds-low")
>>> [hand.text_of(a) for a in (0, 3, hand.action_of(hand.mask_of(["9S", "9D"])))]
[['3D'], ['2S'], ['9D', '9S']]
>>> hand.action_of(hand.mask_of(["9S", "9D"])), NUM_ACTIONS, PASS_ACTION
(25, 1665, 1664)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from pusoy_client.rules import RANKS, SUIT_RANKS, SUITS, parse_card

HAND_SIZE = 13
"""Cards dealt to each seat: every profile and option deals all 52 cards to four seats."""
PLAY_SIZES = (1, 2, 3, 5)
PASS_ACTION = 1664
NUM_ACTIONS = 1665


def _tables() -> tuple[tuple[int, ...], dict[int, int], tuple[int, ...]]:
    masks: list[int] = []
    for size in PLAY_SIZES:
        for combo in itertools.combinations(range(HAND_SIZE), size):
            m = 0
            for p in combo:
                m |= 1 << p
            masks.append(m)
    starts = (0, 13, 91, 377)
    return tuple(masks), {m: i for i, m in enumerate(masks)}, starts


POSITIONS, _INDEX_OF, SIZE_STARTS = _tables()
"""``POSITIONS[action]``: the action's positions as a 13-bit mask (not for the pass);
``SIZE_STARTS``: the first action of each play size (1, 2, 3, 5)."""


def action_of_positions(positions: int) -> int:
    """The action of a set of positions (a 13-bit mask); ValueError when it has none.

    >>> action_of_positions(0b11), action_of_positions(0b11111 << 8)
    (13, 1663)
    """
    try:
        return _INDEX_OF[positions]
    except KeyError:
        raise ValueError(f"no action holds the positions {positions:#b}") from None


def positions_of(action: int) -> tuple[int, ...]:
    """The positions of an action, ascending; () for the pass.

    >>> positions_of(13), positions_of(PASS_ACTION)
    ((0, 1), ())
    """
    if action == PASS_ACTION:
        return ()
    if not 0 <= action < PASS_ACTION:
        raise ValueError(f"no action {action}: actions are 0..{PASS_ACTION}")
    m = POSITIONS[action]
    return tuple(p for p in range(HAND_SIZE) if m >> p & 1)


def card_id(text: str) -> int:
    """A card's number, ``rank * 4 + suit`` (ranks 3..2, suits C S H D): the referee's."""
    rank, suit = parse_card(text)
    return rank * 4 + suit


def card_text(card: int) -> str:
    return RANKS[card >> 2] + SUITS[card & 3]


def card_strength(card: int, suit_order: str) -> int:
    """0 (the deck's lowest card) .. 51 (its highest) in the normal card order."""
    return STRENGTH[suit_order][card]


STRENGTH = {
    order: tuple((c >> 2) * 4 + ranks[c & 3] for c in range(52))
    for order, ranks in SUIT_RANKS.items()
}
"""``STRENGTH[suit_order][card]``: ``card_strength`` as a table (a deal sorts 52 cards)."""


def cards_mask(texts: Iterable[str]) -> int:
    """A set of cards as the referee's 52-bit mask (bit ``card_id``)."""
    m = 0
    for t in texts:
        m |= 1 << card_id(t)
    return m


class HandIndex:
    """One seat's dealt hand in position order: cards to actions and back.

    ``cards``: the dealt card numbers, weakest first. Fewer than 13 is allowed (a bot
    that joined a hand after its deal knows only the cards it still holds).
    """

    __slots__ = ("cards", "known", "memo", "pos_bit", "suit_order")

    def __init__(self, cards: Iterable[int], suit_order: str) -> None:
        ordered = sorted(set(cards))
        if len(ordered) > HAND_SIZE or any(not 0 <= c < 52 for c in ordered):
            raise ValueError(f"not a dealt hand: {ordered}")
        ordered.sort(key=STRENGTH[suit_order].__getitem__)
        self.cards: tuple[int, ...] = tuple(ordered)
        self.suit_order = suit_order
        self.pos_bit = {1 << c: 1 << p for p, c in enumerate(ordered)}
        """A card's bit (``1 << card``) to its position's bit."""
        self.known: dict[int, int] = {}
        """Actions of the card masks seen so far (``action_of``'s memory)."""
        self.memo: bytes | None = None
        """The encoder's position block of this hand, made once (``Encoder``)."""

    @classmethod
    def from_text(cls, cards: Iterable[str], suit_order: str) -> HandIndex:
        return cls((card_id(c) for c in cards), suit_order)

    @staticmethod
    def mask_of(texts: Iterable[str]) -> int:
        return cards_mask(texts)

    def action_of(self, cards: int) -> int:
        """The action of a play given as a card mask (0: the pass); ValueError when a card
        was not dealt to this hand or the number of cards is no play size."""
        action = self.known.get(cards)
        if action is not None:
            return action
        if not cards:
            return PASS_ACTION
        positions = 0
        rest = cards
        pos_bit = self.pos_bit
        while rest:
            low = rest & -rest
            bit = pos_bit.get(low)
            if bit is None:
                raise ValueError(f"{card_text(low.bit_length() - 1)} was not dealt to this hand")
            positions |= bit
            rest ^= low
        action = action_of_positions(positions)
        self.known[cards] = action
        return action

    def actions_of(self, plays: Iterable[int]) -> list[int]:
        """The actions of several plays (card masks)."""
        return [self.action_of(m) for m in plays]

    def mask_of_action(self, action: int) -> int:
        """The cards of an action as a card mask (0 for the pass); ValueError when the
        action names a position this hand has no card at."""
        if action == PASS_ACTION:
            return 0
        mask = 0
        for p in positions_of(action):
            if p >= len(self.cards):
                raise ValueError(f"action {action} names position {p}, past this hand's cards")
            mask |= 1 << self.cards[p]
        return mask

    def text_of(self, action: int) -> list[str]:
        """The cards of an action as text, weakest first ([] for the pass)."""
        return [card_text(self.cards[p]) for p in positions_of(action)]

    def held_positions(self, hand: int) -> int:
        """The positions (13-bit mask) of the cards of ``hand`` (a card mask) still held."""
        out = 0
        for bit, pos in self.pos_bit.items():
            if hand & bit:
                out |= pos
        return out


def legal_mask_indices(hand: HandIndex, plays: Iterable[int], can_pass: bool) -> list[int]:
    """The legal actions: the plays' actions, and the pass when it is allowed."""
    out = hand.actions_of(plays)
    if can_pass:
        out.append(PASS_ACTION)
    return out


__all__ = [
    "HAND_SIZE",
    "NUM_ACTIONS",
    "PASS_ACTION",
    "PLAY_SIZES",
    "POSITIONS",
    "SIZE_STARTS",
    "HandIndex",
    "action_of_positions",
    "card_id",
    "card_strength",
    "card_text",
    "cards_mask",
    "legal_mask_indices",
    "positions_of",
]
