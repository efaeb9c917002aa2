"""Cards as small ints and sets of cards as 52-bit masks.

A card is ``rank * 4 + suit``: rank 0..12 stands for 3 4 5 6 7 8 9 T J Q K A 2 and suit
0..3 for clubs, spades, hearts, diamonds. The numbering is physical and the same for
every profile; how strong a card is depends on the suit order in force, which the
rules context applies on top. Keeping all four cards of a rank in one nibble lets the
move generator work per rank group with table look-ups.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

from referee.rules.errors import InvalidCardsError, Reason

Card = int
"""A card, 0..51 (``rank * 4 + suit``)."""

RANK_CHARS = "3456789TJQKA2"
SUIT_CHARS = "CSHD"
SUIT_SYMBOLS = "♣♠♥♦"
ALL_CARDS_MASK = (1 << 52) - 1
HAND_SIZE = 13  # cards dealt to each of the four seats
TWO_RANK = 12
TWOS_MASK = 0xF << (4 * TWO_RANK)
"""The four 2s."""


class SuitOrder(enum.StrEnum):
    """The order of the suits, low to high (option ``suit_order``, docs/rules.md)."""

    CLUBS_LOW = "clubs-low"
    """♣ < ♠ < ♥ < ♦ (Pusoy Dos)."""
    DIAMONDS_LOW = "diamonds-low"
    """♦ < ♣ < ♥ < ♠ (Big Two)."""


# Strength of each physical suit (C, S, H, D) under each order.
SUIT_RANKS: dict[SuitOrder, tuple[int, int, int, int]] = {
    SuitOrder.CLUBS_LOW: (0, 1, 2, 3),
    SuitOrder.DIAMONDS_LOW: (1, 3, 2, 0),
}

_SUIT_INPUT = {
    "C": 0,
    "S": 1,
    "H": 2,
    "D": 3,
    "♣": 0,
    "♠": 1,
    "♥": 2,
    "♦": 3,
    "♧": 0,
    "♤": 1,
    "♡": 2,
    "♢": 3,
}
_RANK_INPUT = {c: i for i, c in enumerate(RANK_CHARS)} | {"10": 7}


def card(rank: int, suit: int) -> Card:
    """The card of a rank index (0 = 3 … 12 = 2) and a physical suit (C S H D)."""
    return rank * 4 + suit


def rank_of(c: Card) -> int:
    return c >> 2


def suit_of(c: Card) -> int:
    return c & 3


def parse_card(token: str) -> Card:
    """Read one card: ``3C``, ``td``, ``10D``, ``2♠``.

    >>> parse_card("10d") == parse_card("TD")
    True
    """
    t = token.strip().upper()
    if len(t) >= 2:
        rank = _RANK_INPUT.get(t[:-1])
        suit = _SUIT_INPUT.get(t[-1])
        if rank is not None and suit is not None:
            return card(rank, suit)
    raise InvalidCardsError(
        Reason.UNPARSEABLE_CARD,
        f"cannot read card {token!r}: expected a rank (3-9, T or 10, J, Q, K, A, 2) "
        "followed by a suit (C, S, H, D or ♣ ♠ ♥ ♦)",
        token,
    )


def parse_cards(text: str | Iterable[str], *, allow_empty: bool = False) -> int:
    """Read a space- or comma-separated list of distinct cards into a mask."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    mask = 0
    for token in tokens:
        bit = 1 << parse_card(token)
        if mask & bit:
            raise InvalidCardsError(Reason.DUPLICATE_CARD, f"card {token!r} is listed twice", token)
        mask |= bit
    if not mask and not allow_empty:
        raise InvalidCardsError(Reason.EMPTY_PLAY, "no cards given")
    return mask


def card_text(c: Card) -> str:
    """Canonical text of a card: ``3C``, ``TD``, ``2S``."""
    return RANK_CHARS[c >> 2] + SUIT_CHARS[c & 3]


def card_strength(c: Card, order: SuitOrder) -> int:
    """Position of a card in card order (rank, then suit) under a suit order."""
    return (c >> 2) * 4 + SUIT_RANKS[order][c & 3]


def iter_cards(mask: int) -> Iterator[Card]:
    """The cards of a mask in ascending physical order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def sorted_cards(mask: int, order: SuitOrder = SuitOrder.CLUBS_LOW) -> list[Card]:
    """The cards of a mask in ascending card order under ``order``."""
    ranks = SUIT_RANKS[order]
    return sorted(iter_cards(mask), key=lambda c: (c >> 2) * 4 + ranks[c & 3])


def format_cards(mask: int, order: SuitOrder = SuitOrder.CLUBS_LOW) -> str:
    """Canonical text of a set of cards, ascending in card order: ``3D 3C``."""
    return " ".join(card_text(c) for c in sorted_cards(mask, order))


class CardSet:
    """An immutable set of cards backed by a 52-bit mask.

    >>> hand = CardSet.parse("9S 9D 3c")
    >>> len(hand), CardSet.parse("9d") in hand, str(hand)
    (3, True, '3C 9S 9D')
    >>> hand - CardSet.parse("9D")
    CardSet.parse('3C 9S')
    """

    __slots__ = ("mask",)

    def __init__(self, mask: int = 0) -> None:
        if not 0 <= mask <= ALL_CARDS_MASK:
            raise ValueError(f"not a 52-card mask: {mask}")
        self.mask = mask

    @classmethod
    def parse(cls, text: str | Iterable[str], *, allow_empty: bool = True) -> CardSet:
        return cls(parse_cards(text, allow_empty=allow_empty))

    @classmethod
    def of(cls, cards: Iterable[Card]) -> CardSet:
        mask = 0
        for c in cards:
            mask |= 1 << c
        return cls(mask)

    def __iter__(self) -> Iterator[Card]:
        return iter_cards(self.mask)

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, item: object) -> bool:
        if isinstance(item, CardSet):
            return item.mask & self.mask == item.mask
        if isinstance(item, int):
            return 0 <= item < 52 and bool(self.mask >> item & 1)
        return False

    def __bool__(self) -> bool:
        return self.mask != 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(self.mask)

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __xor__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask ^ other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def text(self, order: SuitOrder = SuitOrder.CLUBS_LOW) -> str:
        return format_cards(self.mask, order)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"CardSet.parse({self.text()!r})"
