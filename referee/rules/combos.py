"""Combinations: what a set of cards is as a play, and which play beats which.

Every play gets an integer *key* under a rules context; inside one kind a larger key is
a stronger play, so "beats" is one integer comparison plus the few cross-kind rules
(locked categories, bombs). A context is the rules plus the revolution flag, since a
revolution inverts every rank comparison for the rest of a hand.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Final

from referee.rules.cards import SUIT_RANKS, SuitOrder, format_cards
from referee.rules.errors import IllegalActionError, Reason
from referee.rules.options import FiveCardCategories, Rules, Straights


class Kind(enum.StrEnum):
    """What a play is; values are the judge's ``combination`` names."""

    SINGLE = "single"
    PAIR = "pair"
    TRIPLE = "triple"
    STRAIGHT = "straight"
    FLUSH = "flush"
    FULL_HOUSE = "full_house"
    FOUR_OF_A_KIND = "four_of_a_kind"
    STRAIGHT_FLUSH = "straight_flush"

    @property
    def size(self) -> int:
        return _KIND_SIZE[self]

    @property
    def category(self) -> int:
        """Rank of a five-card category, straight 0 … straight flush 4; -1 otherwise."""
        return _CATEGORY.get(self, -1)


_KIND_SIZE = {Kind.SINGLE: 1, Kind.PAIR: 2, Kind.TRIPLE: 3}
_FIVES = (Kind.STRAIGHT, Kind.FLUSH, Kind.FULL_HOUSE, Kind.FOUR_OF_A_KIND, Kind.STRAIGHT_FLUSH)
_CATEGORY = {k: i for i, k in enumerate(_FIVES)}
for _k in _FIVES:
    _KIND_SIZE[_k] = 5

CATEGORY_SHIFT: Final = 20
"""Five-card keys are ``category << CATEGORY_SHIFT | key within the category``."""

RANK_MASKS = tuple(0xF << (4 * r) for r in range(13))
SUIT_MASKS = tuple(sum(1 << (4 * r + s) for r in range(13)) for s in range(4))
_NIBBLE_COUNT = tuple(bin(n).count("1") for n in range(16))


def rank_presence(mask: int) -> int:
    """The 13-bit set of ranks that have at least one card in ``mask``."""
    m = mask | mask >> 1
    m |= m >> 2
    m &= 0x1111111111111
    out = 0
    r = 0
    while m:
        if m & 1:
            out |= 1 << r
        m >>= 4
        r += 1
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Combination:
    """A classified play: its cards, kind and strength key under one context."""

    mask: int
    kind: Kind
    key: int

    @property
    def size(self) -> int:
        return _KIND_SIZE[self.kind]


@dataclasses.dataclass(frozen=True, slots=True)
class StraightShape:
    """One rank sequence that is a straight: its ranks, order and tie-break rank."""

    ranks: tuple[int, ...]
    rank_mask: int
    order: int
    tie_break_rank: int
    flush_order: int
    """The order among straight flushes: ``lowest_straight_beats_straights`` lifts only
    the plain 3-4-5-6-7 straight, so this is ``order`` without that option."""


_NORMAL = [tuple(range(i, i + 5)) for i in range(8)]  # 3-7 … 10-A
_A2345 = (11, 12, 0, 1, 2)
_23456 = (12, 0, 1, 2, 3)


def straight_sequences(straights: Straights) -> list[tuple[tuple[int, ...], int]]:
    """The straights of a setting, low to high, each with its tie-break rank."""
    if straights is Straights.NONE_WITH_TWO:
        return [(seq, seq[-1]) for seq in _NORMAL]
    if straights is Straights.WRAP_HIGH:
        # The highest card by card order breaks ties: the 2 in the wrap straights.
        return [(seq, seq[-1]) for seq in _NORMAL] + [(_A2345, 12), (_23456, 12)]
    # WRAP_LOW: the top of the sequence breaks ties (5 in A-2-3-4-5, 6 in 2-3-4-5-6).
    return [(_A2345, 2), (_23456, 3)] + [(seq, seq[-1]) for seq in _NORMAL]


class Context:
    """Precomputed tables to classify and compare plays under rules and a revolution."""

    def __init__(self, rules: Rules, revolution: bool = False) -> None:
        self.rules = rules
        self.revolution = revolution
        self.order: SuitOrder = rules.suit_order
        self.suit_rank = SUIT_RANKS[rules.suit_order]
        self.locked = rules.five_card_categories is FiveCardCategories.LOCKED
        self.bomb = rules.bomb
        self.five_card_hands = rules.five_card_hands
        # Effective rank (0 weakest) for each rank index.
        self.rank_eff = tuple((12 - r) if revolution else r for r in range(13))
        # Ranks from weakest to strongest, for generation in stable order.
        self.rank_order = tuple(sorted(range(13), key=lambda r: self.rank_eff[r]))
        self.single_key = tuple(
            self.rank_eff[c >> 2] * 4 + self.suit_rank[c & 3] for c in range(52)
        )
        seqs = straight_sequences(rules.straights)
        count = len(seqs)
        shapes: list[StraightShape] = []
        for i, (ranks, tie) in enumerate(seqs):
            flush_order = order = (count - 1 - i) if revolution else i
            if rules.lowest_straight_beats_straights and ranks == _NORMAL[0]:
                order = count  # above every other straight (straight flushes excepted)
            rm = sum(1 << r for r in ranks)
            shapes.append(StraightShape(ranks, rm, order, tie, flush_order))
        self.straights = tuple(shapes)
        self.straight_by_ranks = {s.rank_mask: s for s in shapes}

    # -- classification -------------------------------------------------------

    def classify(self, mask: int) -> Combination | None:
        """The combination a set of cards forms, or None when it is no play."""
        n = mask.bit_count()
        if n == 1:
            return Combination(mask, Kind.SINGLE, self.single_key[mask.bit_length() - 1])
        if n == 2 or n == 3:
            top = mask.bit_length() - 1
            rank = top >> 2
            if mask & ~RANK_MASKS[rank]:
                return None
            if n == 3:
                return Combination(mask, Kind.TRIPLE, self.rank_eff[rank])
            return Combination(mask, Kind.PAIR, self._pair_key(mask, rank))
        if n == 5 and self.five_card_hands:
            return self._classify_five(mask)
        return None

    def _pair_key(self, mask: int, rank: int) -> int:
        nib = mask >> (4 * rank)
        sr = self.suit_rank
        best = max(sr[s] for s in range(4) if nib >> s & 1)
        return self.rank_eff[rank] * 4 + best

    def _classify_five(self, mask: int) -> Combination | None:
        counts: dict[int, int] = {}
        ranks = 0
        m = mask
        while m:
            low = m & -m
            r = (low.bit_length() - 1) >> 2
            counts[r] = counts.get(r, 0) + 1
            ranks |= 1 << r
            m ^= low
        flush_suit = -1
        for s in range(4):
            if mask & SUIT_MASKS[s] == mask:
                flush_suit = s
        if len(counts) == 5:
            shape = self.straight_by_ranks.get(ranks)
            if shape is not None:
                kind = Kind.STRAIGHT if flush_suit < 0 else Kind.STRAIGHT_FLUSH
                return Combination(mask, kind, self.straight_key(kind, mask, shape))
            if flush_suit >= 0:
                return Combination(mask, Kind.FLUSH, self.flush_key(mask, flush_suit))
            return None
        if len(counts) == 2:
            (r1, c1), (r2, c2) = counts.items()
            if {c1, c2} == {3, 2}:
                triple = r1 if c1 == 3 else r2
                key = (2 << CATEGORY_SHIFT) | self.rank_eff[triple]
                return Combination(mask, Kind.FULL_HOUSE, key)
            quad = r1 if c1 == 4 else r2
            return Combination(
                mask, Kind.FOUR_OF_A_KIND, (3 << CATEGORY_SHIFT) | self.rank_eff[quad]
            )
        return None

    def straight_key(self, kind: Kind, mask: int, shape: StraightShape) -> int:
        nib = (mask >> (4 * shape.tie_break_rank)) & 0xF
        suit = nib.bit_length() - 1
        order = shape.flush_order if kind is Kind.STRAIGHT_FLUSH else shape.order
        return (kind.category << CATEGORY_SHIFT) | order * 4 + self.suit_rank[suit]

    def flush_key(self, mask: int, suit: int) -> int:
        eff_ranks = 0
        m = mask
        while m:
            low = m & -m
            eff_ranks |= 1 << self.rank_eff[(low.bit_length() - 1) >> 2]
            m ^= low
        return (1 << CATEGORY_SHIFT) | self.suit_rank[suit] << 13 | eff_ranks

    # -- comparison -----------------------------------------------------------

    def beats(self, play: Combination, table: Combination) -> bool:
        """Whether ``play`` may be played on ``table`` (the size rule included)."""
        if self.bomb and play.kind is Kind.FOUR_OF_A_KIND:
            if table.kind is Kind.STRAIGHT_FLUSH:
                return False
            if table.kind is Kind.FOUR_OF_A_KIND:
                return play.key > table.key
            return True
        if play.size != table.size:
            return False
        if self.locked and play.kind is not table.kind:
            return False
        return play.key > table.key

    def check_beats(self, play: Combination, table: Combination) -> None:
        """Raise the exact reason when ``play`` cannot answer ``table``."""
        if self.beats(play, table):
            return
        text = format_cards(play.mask, self.order)
        on = format_cards(table.mask, self.order)
        if play.size != table.size and not (self.bomb and play.kind is Kind.FOUR_OF_A_KIND):
            raise IllegalActionError(
                Reason.WRONG_CARD_COUNT,
                f"{text} has {play.size} card(s) but the table ({on}) has {table.size}",
            )
        if self.locked and play.kind is not table.kind and play.size == table.size == 5:
            raise IllegalActionError(
                Reason.DOES_NOT_BEAT,
                f"{text} is a {play.kind.value}; five-card categories are locked here, "
                f"so only a higher {table.kind.value} can answer {on}",
            )
        raise IllegalActionError(
            Reason.DOES_NOT_BEAT, f"{text} ({play.kind.value}) does not beat {on}"
        )

    def describe_no_play(self, mask: int) -> str:
        n = mask.bit_count()
        text = format_cards(mask, self.order)
        if n == 5 and not self.five_card_hands:
            return f"{text}: five-card hands are not played under these rules"
        if n in (4,) or n > 5:
            return f"{text}: only plays of 1, 2, 3 or 5 cards exist"
        if n in (2, 3):
            return f"{text}: the cards of a pair or triple must share one rank"
        return f"{text} is not a straight, flush, full house, four of a kind or straight flush"


@functools.lru_cache(maxsize=256)
def context_for(rules: Rules, revolution: bool = False) -> Context:
    """The shared context of a rules value (contexts are immutable after building)."""
    return Context(rules, revolution)
