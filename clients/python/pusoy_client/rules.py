"""Cards and combinations under the rules in force: what a play is and what it beats.

The same answers as the referee's engine (docs/rules.md), checked against the reference
judge's verdicts in clients/conformance/judge_cases.jsonl.

>>> big_two = Rules(suit_order="diamonds-low", straights="wrap-low")
>>> classify(big_two, ["9S", "9D"]).kind
'pair'
>>> beats(big_two, ["2S"], ["2H"])
True
>>> beats(big_two, ["3D", "4D", "5D", "6D", "7D"], ["9S", "9D", "9H", "3C", "3S"])
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

RANKS = "3456789TJQKA2"
SUITS = "CSHD"
SUIT_RANKS = {"clubs-low": (0, 1, 2, 3), "diamonds-low": (1, 3, 2, 0)}
"""Strength of the suits C, S, H, D under each suit order (0 weakest)."""
FIVES = ("straight", "flush", "full_house", "four_of_a_kind", "straight_flush")
_NORMAL = [tuple(range(i, i + 5)) for i in range(8)]  # 3-7 ... T-A
_A2345 = (11, 12, 0, 1, 2)
_23456 = (12, 0, 1, 2, 3)


@dataclasses.dataclass(frozen=True)
class Rules:
    """The options that decide what beats what (from ``Welcome.config.rules``)."""

    suit_order: str = "clubs-low"
    straights: str = "wrap-high"
    five_card_categories: str = "ranked"
    five_card_hands: bool = True
    lowest_straight_beats_straights: bool = False
    bomb: bool = False

    @classmethod
    def from_proto(cls, rules: object) -> Rules:
        """From a ``pusoy.referee.v1.Rules`` message (or anything with those fields)."""
        return cls(
            suit_order=getattr(rules, "suit_order", "") or "clubs-low",
            straights=getattr(rules, "straights", "") or "wrap-high",
            five_card_categories=getattr(rules, "five_card_categories", "") or "ranked",
            five_card_hands=bool(getattr(rules, "five_card_hands", True)),
            lowest_straight_beats_straights=bool(
                getattr(rules, "lowest_straight_beats_straights", False)
            ),
            bomb=bool(getattr(rules, "bomb", False)),
        )

    def sequences(self) -> list[tuple[tuple[int, ...], int]]:
        """The straights, weakest first, each with the rank whose suit breaks ties."""
        if self.straights == "none-with-two":
            return [(s, s[-1]) for s in _NORMAL]
        if self.straights == "wrap-high":
            return [(s, s[-1]) for s in _NORMAL] + [(_A2345, 12), (_23456, 12)]
        return [(_A2345, 2), (_23456, 3)] + [(s, s[-1]) for s in _NORMAL]


def parse_card(text: str) -> tuple[int, int]:
    """(rank 0..12, suit 0..3 as C S H D) of a card such as ``"9S"``, ``"10h"``, ``"2♠"``."""
    t = text.strip().upper().replace("10", "T")
    t = t.translate(str.maketrans("♣♠♥♦", "CSHD"))
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return RANKS.index(t[0]), SUITS.index(t[1])


def card_key(rules: Rules, card: str, revolution: bool = False) -> int:
    """A card's strength (larger is stronger)."""
    rank, suit = parse_card(card)
    eff = 12 - rank if revolution else rank
    return eff * 4 + SUIT_RANKS[rules.suit_order][suit]


def sort_cards(rules: Rules, cards: Iterable[str], revolution: bool = False) -> list[str]:
    """Cards in ascending order under the rules (the referee's canonical order)."""
    return sorted(cards, key=lambda c: card_key(rules, c, revolution))


@dataclasses.dataclass(frozen=True)
class Combo:
    """A classified play: its kind (the judge's names), cards and strength key."""

    kind: str
    cards: tuple[str, ...]
    key: int

    @property
    def size(self) -> int:
        return len(self.cards)


def classify(rules: Rules, cards: Sequence[str], revolution: bool = False) -> Combo | None:
    """The combination the cards form, or None when they are no play (ValueError for
    unreadable or repeated cards)."""
    parsed = [parse_card(c) for c in cards]
    if len(set(parsed)) != len(parsed):
        raise ValueError(f"a card is repeated: {list(cards)}")
    sr = SUIT_RANKS[rules.suit_order]

    def eff(rank: int) -> int:
        return 12 - rank if revolution else rank

    n = len(parsed)
    ranks = {r for r, _ in parsed}
    out = tuple(cards)
    if n == 1:
        r, s = parsed[0]
        return Combo("single", out, eff(r) * 4 + sr[s])
    if n in (2, 3):
        if len(ranks) != 1:
            return None
        r = parsed[0][0]
        if n == 3:
            return Combo("triple", out, eff(r))
        return Combo("pair", out, eff(r) * 4 + max(sr[s] for _, s in parsed))
    if n != 5 or not rules.five_card_hands:
        return None
    counts: dict[int, int] = {}
    for r, _ in parsed:
        counts[r] = counts.get(r, 0) + 1
    suits = {s for _, s in parsed}
    flush = len(suits) == 1
    if len(counts) == 5:
        seqs = rules.sequences()
        for i, (seq, tie) in enumerate(seqs):
            if set(seq) != ranks:
                continue
            order = len(seqs) - 1 - i if revolution else i
            flush_order = order
            if rules.lowest_straight_beats_straights and seq == _NORMAL[0]:
                order = len(seqs)
            tie_suit = max(s for r, s in parsed if r == tie)
            if flush:
                return Combo("straight_flush", out, (4 << 20) | flush_order * 4 + sr[tie_suit])
            return Combo("straight", out, order * 4 + sr[tie_suit])
        if flush:
            eff_ranks = sum(1 << eff(r) for r in ranks)
            return Combo("flush", out, (1 << 20) | sr[parsed[0][1]] << 13 | eff_ranks)
        return None
    if len(counts) == 2:
        (r1, c1), (r2, c2) = counts.items()
        if {c1, c2} == {3, 2}:
            return Combo("full_house", out, (2 << 20) | eff(r1 if c1 == 3 else r2))
        return Combo("four_of_a_kind", out, (3 << 20) | eff(r1 if c1 == 4 else r2))
    return None


def beats(
    rules: Rules, play: Sequence[str], table: Sequence[str], revolution: bool = False
) -> bool:
    """Whether ``play`` may answer ``table`` (size, category and strength rules)."""
    p = classify(rules, play, revolution)
    t = classify(rules, table, revolution)
    if p is None or t is None:
        return False
    if rules.bomb and p.kind == "four_of_a_kind":
        if t.kind == "straight_flush":
            return False
        return p.key > t.key if t.kind == "four_of_a_kind" else True
    if p.size != t.size:
        return False
    if rules.five_card_categories == "locked" and p.kind != t.kind:
        return False
    return p.key > t.key


__all__ = ["Combo", "Rules", "beats", "card_key", "classify", "parse_card", "sort_cards"]
