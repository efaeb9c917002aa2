"""Legal plays: a lazy view over every play a seat may make now, and why any other is not.

Generation works per rank group: the four cards of a rank are one nibble of the hand
mask, and precomputed tables give, for each rank and nibble, its singles, pairs and
triples already shifted into place and sorted by strength. Five-card hands are built
from those groups. Plays are kept as masks until someone asks for objects.

The stable order of the view: fewer cards first, then weaker before stronger (the
play's key), then by the cards from the strongest down.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterator

from referee.rules.cards import RANK_CHARS, TWO_RANK, card_text, format_cards
from referee.rules.combos import (
    CATEGORY_SHIFT,
    RANK_MASKS,
    SUIT_MASKS,
    Combination,
    Context,
    Kind,
)
from referee.rules.errors import IllegalActionError, Reason

_NIB_COUNT = tuple(bin(n).count("1") for n in range(16))
_STRAIGHT_FLUSH_CAT = 4 << CATEGORY_SHIFT
_first = operator.itemgetter(0)


class _Tables:
    """Per-context look-up tables of rank-group plays, built once per context."""

    def __init__(self, ctx: Context) -> None:
        sr = ctx.suit_rank
        self.ctx = ctx
        # sub[k][r][nib] -> tuple of (mask, key) of the k-card subsets, weakest first.
        self.sub: list[list[list[tuple[tuple[int, int], ...]]]] = []
        for k in (1, 2, 3):
            per_rank = []
            for r in range(13):
                per_nib = []
                for nib in range(16):
                    suits = [s for s in range(4) if nib >> s & 1]
                    items = []
                    for combo in itertools.combinations(suits, k):
                        sub = 0
                        for s in combo:
                            sub |= 1 << s
                        ranks_desc = sorted((sr[s] for s in combo), reverse=True)
                        if k == 1:
                            key = ctx.rank_eff[r] * 4 + sr[combo[0]]
                        elif k == 2:
                            key = ctx.rank_eff[r] * 4 + ranks_desc[0]
                        else:
                            key = ctx.rank_eff[r]
                        items.append((ranks_desc, sub << (4 * r), key))
                    items.sort(key=lambda item: (item[2], item[0]))
                    per_nib.append(tuple((m, key) for _, m, key in items))
                per_rank.append(per_nib)
            self.sub.append(per_rank)
        self.masks_only = [
            [[tuple(m for m, _ in self.sub[k][r][nib]) for nib in range(16)] for r in range(13)]
            for k in range(3)
        ]
        self.rank_pos = {r: i for i, r in enumerate(ctx.rank_order)}
        # Each straight shape with its ranks from the strongest to the weakest, the
        # nesting order that generates plays of equal key weakest first.
        self.straights = tuple(
            (shape, tuple(sorted(shape.ranks, key=lambda r: -ctx.rank_eff[r])))
            for shape in ctx.straights
        )
        # A card's bit (1 << card) -> the bit of its rank.
        self.rank_bit = {1 << c: 1 << (c >> 2) for c in range(52)}


@functools.lru_cache(maxsize=256)
def tables_for(ctx: Context) -> _Tables:
    return _Tables(ctx)


def _fives(
    ctx: Context, tab: _Tables, hand: int, nibs: list[int], presence: int
) -> list[tuple[int, int]]:
    """Every five-card play in ``hand`` as (key, mask).

    Not sorted by key, but plays of equal key come out weakest first (compared by their
    cards from the strongest down), so a stable sort on the key alone gives the stable
    order. Only straights of one shape, full houses of one triple rank and fours of one
    rank can share a key; the loops below are nested so that each group is generated in
    that order.
    """
    out: list[tuple[int, int]] = []
    append = out.append
    s1 = tab.masks_only[0]
    sr = ctx.suit_rank
    for shape, (r0, r1, r2, r3, r4) in tab.straights:
        if presence & shape.rank_mask != shape.rank_mask:
            continue
        # r0 is the strongest rank of the shape and the outermost loop: weakest first.
        tb4 = 4 * shape.tie_break_rank
        base = shape.order * 4
        flush_base = _STRAIGHT_FLUSH_CAT | shape.flush_order * 4
        for a in s1[r0][nibs[r0]]:
            for b in s1[r1][nibs[r1]]:
                ab = a | b
                for c in s1[r2][nibs[r2]]:
                    abc = ab | c
                    for d in s1[r3][nibs[r3]]:
                        abcd = abc | d
                        for e in s1[r4][nibs[r4]]:
                            m = abcd | e
                            suit = ((m >> tb4) & 0xF).bit_length() - 1
                            if m & SUIT_MASKS[suit] == m:
                                append((flush_base + sr[suit], m))
                            else:
                                append((base + sr[suit], m))
    rank_bit = tab.rank_bit
    by_ranks = ctx.straight_by_ranks
    for s in range(4):
        sm = hand & SUIT_MASKS[s]
        if sm.bit_count() < 5:
            continue
        cards = []
        while sm:
            low = sm & -sm
            cards.append(low)
            sm ^= low
        for combo in itertools.combinations(cards, 5):
            c0, c1, c2, c3, c4 = combo
            ranks = rank_bit[c0] | rank_bit[c1] | rank_bit[c2] | rank_bit[c3] | rank_bit[c4]
            if ranks in by_ranks:
                continue  # a straight flush, generated above
            m = c0 | c1 | c2 | c3 | c4
            append((ctx.flush_key(m, s), m))  # flush keys never tie
    s2 = tab.masks_only[1]
    s3 = tab.masks_only[2]
    fh_cat = 2 << CATEGORY_SHIFT
    quad_cat = 3 << CATEGORY_SHIFT
    rank_order = ctx.rank_order
    pairs = [(r, s2[r][nibs[r]]) for r in rank_order if _NIB_COUNT[nibs[r]] >= 2]
    for rt in rank_order:
        nt = nibs[rt]
        if _NIB_COUNT[nt] < 3:
            continue
        key = fh_cat | ctx.rank_eff[rt]
        triples = s3[rt][nt]
        pos = tab.rank_pos[rt]
        below = [ps for rp, ps in pairs if tab.rank_pos[rp] < pos]
        above = [ps for rp, ps in pairs if tab.rank_pos[rp] > pos]
        # Below the triple's rank the triple's cards are the strongest: triple outermost.
        for t in triples:
            for ps in below:
                for p in ps:
                    append((key, t | p))
        # Above it the pair's cards are the strongest: pair outermost.
        for ps in above:
            for p in ps:
                for t in triples:
                    append((key, t | p))
        if nt == 15:
            quad = 0xF << (4 * rt)
            qkey = quad_cat | ctx.rank_eff[rt]
            for r in rank_order:  # kickers weakest first
                if r != rt and nibs[r]:
                    for k in s1[r][nibs[r]]:
                        append((qkey, quad | k))
    return out


def _sort_fives(fives: list[tuple[int, int]]) -> list[int]:
    if len(fives) > 1:
        fives.sort(key=_first)  # stable: equal keys keep their weakest-first order
    return [m for _, m in fives]


def generate(ctx: Context, hand: int, table: Combination | None) -> list[int]:
    """Every play from ``hand`` that is legal on ``table`` (None: a lead), in stable order."""
    tab = tables_for(ctx)
    nibs = [(hand >> (4 * r)) & 0xF for r in range(13)]
    if table is None:
        s1, s2, s3 = tab.masks_only
        singles: list[int] = []
        pairs: list[int] = []
        triples: list[int] = []
        presence = 0
        for r in ctx.rank_order:
            nb = nibs[r]
            if not nb:
                continue
            presence |= 1 << r
            singles += s1[r][nb]
            if _NIB_COUNT[nb] >= 2:
                pairs += s2[r][nb]
                if _NIB_COUNT[nb] >= 3:
                    triples += s3[r][nb]
        out = singles + pairs + triples
        if ctx.five_card_hands and hand.bit_count() >= 5:
            out += _sort_fives(_fives(ctx, tab, hand, nibs, presence))
        return out
    size = table.size
    tk = table.key
    out = []
    if size <= 3:
        sub = tab.sub[size - 1]
        start = tab.rank_pos[(table.mask.bit_length() - 1) >> 2]
        for r in ctx.rank_order[start:]:
            nb = nibs[r]
            if _NIB_COUNT[nb] >= size:
                for m, k in sub[r][nb]:
                    if k > tk:
                        out.append(m)
        if not (ctx.bomb and ctx.five_card_hands and hand.bit_count() >= 5):
            return out
    elif not ctx.five_card_hands:
        return out
    presence = 0
    for r in range(13):
        if nibs[r]:
            presence |= 1 << r
    fives = _fives(ctx, tab, hand, nibs, presence)
    keep = []
    for key, m in fives:
        kind = _kind_of_key(key)
        if ctx.bomb and kind is Kind.FOUR_OF_A_KIND:
            if table.kind is Kind.STRAIGHT_FLUSH:
                continue
            if table.kind is Kind.FOUR_OF_A_KIND and key <= tk:
                continue
            keep.append((key, m))
        elif size == 5 and key > tk and (not ctx.locked or kind is table.kind):
            keep.append((key, m))
    return out + _sort_fives(keep)


_CATEGORY_KINDS = (
    Kind.STRAIGHT,
    Kind.FLUSH,
    Kind.FULL_HOUSE,
    Kind.FOUR_OF_A_KIND,
    Kind.STRAIGHT_FLUSH,
)


def _kind_of_key(key: int) -> Kind:
    return _CATEGORY_KINDS[key >> CATEGORY_SHIFT]


class LegalPlays:
    """The plays a seat may make now: iterate, count, test membership, ask why not.

    The list is computed on first use; ``in`` and ``why_not`` check one play directly.
    """

    __slots__ = ("_masks", "ctx", "hand", "lone_two_rule", "must_include", "table")

    def __init__(
        self,
        ctx: Context,
        hand: int | None,
        table: Combination | None = None,
        must_include: int = 0,
        lone_two_rule: bool = False,
    ) -> None:
        self.ctx = ctx
        self.hand = hand
        self.table = table
        self.must_include = must_include
        self.lone_two_rule = lone_two_rule
        self._masks: list[int] | None = None

    @property
    def is_lead(self) -> bool:
        return self.table is None

    def _lone_two_blocks(self, mask: int) -> bool:
        return (
            self.lone_two_rule
            and self.table is None
            and self.hand is not None
            and self.hand == mask
            and mask.bit_count() == 1
            and bool(mask & RANK_MASKS[TWO_RANK])
        )

    @property
    def masks(self) -> list[int]:
        """The legal plays as card masks, in stable order."""
        if self._masks is None:
            if self.hand is None:
                raise ValueError("listing plays needs the hand")
            masks = generate(self.ctx, self.hand, self.table)
            if self.must_include:
                masks = [m for m in masks if m & self.must_include]
            if self.lone_two_rule and self.table is None:
                masks = [m for m in masks if not self._lone_two_blocks(m)]
            self._masks = masks
        return self._masks

    @property
    def can_pass(self) -> bool:
        """A pass is legal on a response, and on a lead only when nothing may be led."""
        if self.table is not None:
            return True
        return self.hand is not None and not self.masks

    def __iter__(self) -> Iterator[Combination]:
        classify = self.ctx.classify
        for m in self.masks:
            combo = classify(m)
            assert combo is not None
            yield combo

    def __len__(self) -> int:
        return len(self.masks)

    def count(self) -> int:
        return len(self.masks)

    def __contains__(self, play: object) -> bool:
        mask = getattr(play, "mask", play)
        return isinstance(mask, int) and self.why_not(mask) is None

    def texts(self) -> list[str]:
        order = self.ctx.order
        return [format_cards(m, order) for m in self.masks]

    def why_not(self, mask: int) -> IllegalActionError | None:
        """None when ``mask`` is a legal play now, else the error saying why not."""
        ctx = self.ctx
        if not mask:
            return IllegalActionError(
                Reason.EMPTY_PLAY, "a play needs at least one card; send a pass to pass"
            )
        if self.hand is not None and mask & ~self.hand:
            missing = format_cards(mask & ~self.hand, ctx.order)
            return IllegalActionError(Reason.CARD_NOT_IN_HAND, f"not in your hand: {missing}")
        combo = ctx.classify(mask)
        if combo is None:
            return IllegalActionError(Reason.NOT_A_COMBINATION, ctx.describe_no_play(mask))
        if self.table is None:
            if self.must_include and not mask & self.must_include:
                need = card_text(self.must_include.bit_length() - 1)
                return IllegalActionError(
                    Reason.MISSING_OPENING_CARD, f"the first play of this hand must contain {need}"
                )
            if self._lone_two_blocks(mask):
                return IllegalActionError(
                    Reason.LONE_TWO_FINISH,
                    f"you may not go out by leading a lone {RANK_CHARS[TWO_RANK]}; pass instead",
                )
            return None
        try:
            ctx.check_beats(combo, self.table)
        except IllegalActionError as err:
            return err
        return None

    def why_not_pass(self) -> IllegalActionError | None:
        if self.can_pass:
            return None
        return IllegalActionError(
            Reason.PASS_ON_LEAD, "you are leading a fresh trick: you must play"
        )
