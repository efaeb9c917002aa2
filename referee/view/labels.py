"""Names a person reads for a play: "full house, kings", "straight, 5 to 9".

>>> from referee.rules import Rules, context_for, parse_cards
>>> ctx = context_for(Rules.for_profile("big-two"))
>>> play_label(ctx, parse_cards("KS KH KD 4C 4D"))
'full house, kings'
>>> play_label(ctx, parse_cards("AS 2S 3S 4S 5S"))
'straight flush, A to 5, spades'
>>> play_label(ctx, parse_cards("9D"))
'single, nine'
"""

from __future__ import annotations

from referee.rules import Context, Kind
from referee.rules.cards import RANK_CHARS
from referee.rules.combos import rank_presence

RANK_NAMES = (
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
    "two",
)
RANK_PLURALS = (
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
    "twos",
)
SUIT_NAMES = ("clubs", "spades", "hearts", "diamonds")
KIND_NAMES = {kind: kind.value.replace("_", " ") for kind in Kind}


def _short_rank(rank: int) -> str:
    return "10" if RANK_CHARS[rank] == "T" else RANK_CHARS[rank]


def _rank_counts(mask: int) -> dict[int, int]:
    counts: dict[int, int] = {}
    for rank in range(13):
        n = (mask >> (4 * rank) & 0xF).bit_count()
        if n:
            counts[rank] = n
    return counts


def play_label(ctx: Context, mask: int) -> str:
    """The play's combination and what it is made of, or "" when it is no play."""
    combo = ctx.classify(mask)
    if combo is None:
        return ""
    counts = _rank_counts(mask)
    name = KIND_NAMES[combo.kind]
    if combo.kind is Kind.SINGLE:
        return f"{name}, {RANK_NAMES[next(iter(counts))]}"
    if combo.kind in (Kind.PAIR, Kind.TRIPLE):
        return f"{name}, {RANK_PLURALS[next(iter(counts))]}"
    if combo.kind is Kind.FULL_HOUSE:
        triple = next(r for r, n in counts.items() if n == 3)
        return f"{name}, {RANK_PLURALS[triple]}"
    if combo.kind is Kind.FOUR_OF_A_KIND:
        quad = next(r for r, n in counts.items() if n == 4)
        return f"{name}, {RANK_PLURALS[quad]}"
    suit = next(s for s in range(4) if mask >> s & 0x1111111111111)
    if combo.kind is Kind.FLUSH:
        return f"{name}, {SUIT_NAMES[suit]}"
    shape = ctx.straight_by_ranks.get(rank_presence(mask))
    if shape is None:  # cannot happen for a classified straight
        return name
    span = f"{_short_rank(shape.ranks[0])} to {_short_rank(shape.ranks[-1])}"
    if combo.kind is Kind.STRAIGHT_FLUSH:
        return f"{name}, {span}, {SUIT_NAMES[suit]}"
    return f"{name}, {span}"
