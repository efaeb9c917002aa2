"""Test helpers: a reference reading of docs/rules.md written apart from the engine.

Nothing here imports the engine's internals. Cards are read and written through the
public notation, and the rules are restated from docs/rules.md in the plainest
form: classification by counting ranks and suits, comparison by explicit tuples, legal
plays by trying every subset of a hand. The property tests check the engine against
these functions; they are slow on purpose and must stay obviously correct.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from referee.rules import (
    Action,
    Combination,
    Context,
    HandState,
    Kind,
    MatchState,
    Rules,
    parse_card,
    parse_cards,
)

PROFILE_NAMES = ("pusoy-dos", "pusoy-dos-chips", "big-two")
PLAY_SIZES = (1, 2, 3, 5)

RANKS = "3456789TJQKA2"
"""Rank characters, weakest first (docs/rules.md, "Cards")."""

SUIT_ORDERS = {"clubs-low": "CSHD", "diamonds-low": "DCHS"}
"""Suit characters, weakest first, per ``suit_order``."""

FIVE_CATEGORIES = ("straight", "flush", "full_house", "four_of_a_kind", "straight_flush")

# Straights as rank strings, low to high, per ``straights`` setting (docs/rules.md, "Straights").
_NORMAL_STRAIGHTS = [RANKS[i : i + 5] for i in range(8)]  # 34567 … TJQKA
STRAIGHTS = {
    "wrap-high": [*_NORMAL_STRAIGHTS, "A2345", "23456"],
    "none-with-two": list(_NORMAL_STRAIGHTS),
    "wrap-low": ["A2345", "23456", *_NORMAL_STRAIGHTS],
}
# The rank whose card's suit breaks a tie between two straights of the same ranks.
_TIE_BREAK = {
    "wrap-high": {"A2345": "2", "23456": "2"},  # the 2 is the highest card there
    "none-with-two": {},
    "wrap-low": {"A2345": "5", "23456": "6"},  # the top of the sequence
}


# -- cards ------------------------------------------------------------------------


def cards(text: str) -> int:
    """A card mask from notation, e.g. ``cards("9S 9D")``."""
    return parse_cards(text)


def card_list(mask: int) -> list[str]:
    """The cards of a mask as canonical two-character tokens (physical order)."""
    out = []
    for rank in RANKS:
        for suit in "CSHD":
            token = rank + suit
            if mask >> parse_card(token) & 1:
                out.append(token)
    return out


def all_tokens() -> list[str]:
    return [r + s for r in RANKS for s in "CSHD"]


FULL_DECK = cards(" ".join(all_tokens()))


def hands_of(*texts: str) -> list[int]:
    """Four seat hands from text; empty strings for seats without cards."""
    assert len(texts) == 4
    return [parse_cards(t, allow_empty=True) for t in texts]


# -- a reference reading of the rules --------------------------------------------


def rank_value(rank: str, revolution: bool) -> int:
    v = RANKS.index(rank)
    return 12 - v if revolution else v


def suit_value(suit: str, rules: Rules) -> int:
    return SUIT_ORDERS[rules.suit_order.value].index(suit)


def card_value(token: str, rules: Rules, revolution: bool) -> tuple[int, int]:
    """Card order: rank first, then suit."""
    return rank_value(token[0], revolution), suit_value(token[1], rules)


def _straight_name(tokens: Sequence[str], rules: Rules) -> str | None:
    ranks = {t[0] for t in tokens}
    for seq in STRAIGHTS[rules.straights.value]:
        if set(seq) == ranks:
            return seq
    return None


def ref_kind(rules: Rules, mask: int) -> str | None:
    """What a set of cards is as a play (a ``Kind`` value), or None (docs/rules.md)."""
    tokens = card_list(mask)
    n = len(tokens)
    ranks = Counter(t[0] for t in tokens)
    suits = {t[1] for t in tokens}
    if n == 1:
        return "single"
    if n in (2, 3):
        if len(ranks) != 1:
            return None
        return "pair" if n == 2 else "triple"
    if n != 5 or not rules.five_card_hands:
        return None
    counts = sorted(ranks.values())
    if counts == [2, 3]:
        return "full_house"
    if counts == [1, 4]:
        return "four_of_a_kind"
    if counts != [1, 1, 1, 1, 1]:
        return None
    straight = _straight_name(tokens, rules) is not None
    flush = len(suits) == 1
    if straight and flush:
        return "straight_flush"
    if straight:
        return "straight"
    if flush:
        return "flush"
    return None


def _straight_strength(tokens: Sequence[str], rules: Rules, revolution: bool) -> tuple[int, int]:
    seq = _straight_name(tokens, rules)
    assert seq is not None
    order = STRAIGHTS[rules.straights.value]
    position = order.index(seq)
    if revolution:
        position = len(order) - 1 - position
    tie_rank = _TIE_BREAK[rules.straights.value].get(seq, seq[-1])
    tie_card = next(t for t in tokens if t[0] == tie_rank)
    return position, suit_value(tie_card[1], rules)


def ref_strength(rules: Rules, revolution: bool, mask: int) -> tuple[Any, ...]:
    """A tuple that orders two plays of one kind: larger is stronger."""
    kind = ref_kind(rules, mask)
    tokens = card_list(mask)
    values = sorted((card_value(t, rules, revolution) for t in tokens), reverse=True)
    ranks = Counter(t[0] for t in tokens)
    if kind == "single":
        return values[0]
    if kind == "pair":
        return values[0]  # rank, then the higher suit of the pair
    if kind == "triple":
        return (values[0][0],)
    if kind in ("straight", "straight_flush"):
        return _straight_strength(tokens, rules, revolution)
    if kind == "flush":
        return (suit_value(tokens[0][1], rules), *[v[0] for v in values])
    if kind == "full_house":
        triple = next(r for r, c in ranks.items() if c == 3)
        return (rank_value(triple, revolution),)
    if kind == "four_of_a_kind":
        quad = next(r for r, c in ranks.items() if c == 4)
        return (rank_value(quad, revolution),)
    raise AssertionError(f"not a play: {tokens}")


def _is_lowest_straight(mask: int) -> bool:
    return {t[0] for t in card_list(mask)} == set("34567")


def ref_beats(rules: Rules, revolution: bool, play: int, table: int) -> bool:
    """Whether ``play`` may answer ``table`` (docs/rules.md: plays, a turn, bomb)."""
    pk, tk = ref_kind(rules, play), ref_kind(rules, table)
    assert pk is not None and tk is not None
    if rules.bomb and pk == "four_of_a_kind":
        if tk == "straight_flush":
            return False
        if tk == "four_of_a_kind":
            return ref_strength(rules, revolution, play) > ref_strength(rules, revolution, table)
        return True
    if play.bit_count() != table.bit_count():
        return False
    if play.bit_count() == 5:
        if pk != tk:
            if rules.five_card_categories.value == "locked":
                return False
            return FIVE_CATEGORIES.index(pk) > FIVE_CATEGORIES.index(tk)
        if pk == "straight" and rules.lowest_straight_beats_straights:
            low_p, low_t = _is_lowest_straight(play), _is_lowest_straight(table)
            if low_p != low_t:
                return low_p
    return ref_strength(rules, revolution, play) > ref_strength(rules, revolution, table)


# -- legal plays by brute force ----------------------------------------------------


def subsets(mask: int, sizes: Sequence[int] = PLAY_SIZES) -> Iterator[int]:
    """Every subset of ``mask`` with one of the given sizes."""
    bits = [1 << i for i in range(52) if mask >> i & 1]
    for k in sizes:
        for combo in itertools.combinations(bits, k):
            yield sum(combo)


def strength_order(ctx: Context, mask: int) -> tuple[tuple[int, int], ...]:
    """The cards of a play from strongest to weakest, as card values."""
    return tuple(
        sorted((card_value(t, ctx.rules, ctx.revolution) for t in card_list(mask)), reverse=True)
    )


def brute_legal_plays(
    ctx: Context,
    hand: int,
    table: Combination | None,
    must_include: int = 0,
    lone_two_rule: bool = False,
) -> list[int]:
    """Every legal play, found by trying each subset of the hand of 1, 2, 3 and 5 cards.

    Only ``ctx.classify`` and ``ctx.beats`` come from the engine; ownership, the opening
    card, the lone-2 rule and the order are decided here. Order: fewer cards first, then
    weaker before stronger, then by the cards compared from the strongest down.
    """
    legal: list[tuple[int, int, tuple[tuple[int, int], ...], int]] = []
    for mask in subsets(hand):
        assert mask & ~hand == 0
        combo = ctx.classify(mask)
        if combo is None:
            continue
        if table is None:
            if must_include and not mask & must_include:
                continue
            if (
                lone_two_rule
                and mask == hand
                and mask.bit_count() == 1
                and card_list(mask)[0][0] == "2"
            ):
                continue
        elif not ctx.beats(combo, table):
            continue
        legal.append((mask.bit_count(), combo.key, strength_order(ctx, mask), mask))
    legal.sort()
    return [m for *_, m in legal]


# -- random rules, hands and games ----------------------------------------------


OPTION_VALUES: dict[str, Sequence[Any]] = {
    "suit_order": ("clubs-low", "diamonds-low"),
    "direction": ("clockwise", "counterclockwise"),
    "first_lead": ("opening-card-every-hand", "opening-card-then-winner"),
    "pass_locks_out": (False, True),
    "five_card_categories": ("ranked", "locked"),
    "straights": ("wrap-high", "none-with-two", "wrap-low"),
    "five_card_hands": (True, False),
    "lowest_straight_beats_straights": (False, True),
    "no_finish_on_lone_two": (False, True),
    "revolution": (False, True),
    "bomb": (False, True),
    "teams": (False, True),
    "multiplier_from": (5, 8, 10, 12, 13),
    "match_end": ("threshold 30", "threshold 12", "hands 1", "hands 3"),
    "scoring": ("penalty", "chips"),
}


def random_rules(rng: random.Random) -> Rules:
    """A profile with a random subset of its options replaced by random values."""
    profile = rng.choice(PROFILE_NAMES)
    overrides = {
        name: rng.choice(list(values))
        for name, values in OPTION_VALUES.items()
        if rng.random() < 0.5
    }
    return Rules.for_profile(profile, overrides)


def random_hand(rng: random.Random, size: int, exclude: int = 0) -> int:
    pool = [i for i in range(52) if not exclude >> i & 1]
    return sum(1 << i for i in rng.sample(pool, size))


def random_deal(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]


def random_combination(ctx: Context, rng: random.Random, pool: int = FULL_DECK) -> int | None:
    """A random play made of cards of ``pool`` (None when none was found quickly)."""
    for _ in range(50):
        kind = rng.choice(list(Kind))
        mask = random_of_kind(rng, kind, pool)
        if mask and ctx.classify(mask) is not None:
            return mask
    return None


def random_of_kind(rng: random.Random, kind: Kind, pool: int = FULL_DECK) -> int:
    """Cards of ``pool`` shaped like a play of ``kind`` (0 when none was found).

    Straights are drawn from every sequence any profile allows; the caller classifies.
    """
    tokens = [t for t in all_tokens() if pool >> parse_card(t) & 1]
    by_rank: dict[str, list[str]] = {}
    by_suit: dict[str, list[str]] = {}
    for t in tokens:
        by_rank.setdefault(t[0], []).append(t)
        by_suit.setdefault(t[1], []).append(t)

    def of(ts: Sequence[str]) -> int:
        return cards(" ".join(ts)) if ts else 0

    if kind is Kind.SINGLE:
        return of([rng.choice(tokens)]) if tokens else 0
    if kind in (Kind.PAIR, Kind.TRIPLE):
        n = 2 if kind is Kind.PAIR else 3
        groups = [g for g in by_rank.values() if len(g) >= n]
        return of(rng.sample(rng.choice(groups), n)) if groups else 0
    if kind in (Kind.STRAIGHT, Kind.STRAIGHT_FLUSH):
        seq = rng.choice(STRAIGHTS["wrap-high"] + ["A2345"])
        if kind is Kind.STRAIGHT_FLUSH:
            suit = rng.choice("CSHD")
            chosen = [r + suit for r in seq]
            return of(chosen) if all(t in tokens for t in chosen) else 0
        if not all(r in by_rank for r in seq):
            return 0
        return of([rng.choice(by_rank[r]) for r in seq])
    if kind is Kind.FLUSH:
        groups = [g for g in by_suit.values() if len(g) >= 5]
        return of(rng.sample(rng.choice(groups), 5)) if groups else 0
    if kind is Kind.FULL_HOUSE:
        triples = [r for r, g in by_rank.items() if len(g) >= 3]
        if not triples:
            return 0
        tr = rng.choice(triples)
        pairs = [r for r, g in by_rank.items() if len(g) >= 2 and r != tr]
        if not pairs:
            return 0
        pr = rng.choice(pairs)
        return of(rng.sample(by_rank[tr], 3) + rng.sample(by_rank[pr], 2))
    quads = [r for r, g in by_rank.items() if len(g) == 4]
    if not quads:
        return 0
    qr = rng.choice(quads)
    kickers = [t for t in tokens if t[0] != qr]
    return of(by_rank[qr] + [rng.choice(kickers)]) if kickers else 0


def random_action(state: HandState, rng: random.Random, pass_rate: float = 0.3) -> Action:
    """A random legal action of the seat to act (a play or, when allowed, a pass)."""
    plays = state.legal_plays()
    masks = plays.masks
    if plays.can_pass and (not masks or rng.random() < pass_rate):
        return Action.pass_()
    return Action(rng.choice(masks))


def play_random_match(
    rules: Rules, rng: random.Random, max_hands: int = 12
) -> tuple[MatchState, list[list[int]]]:
    """Play random legal actions until the match ends; return it and each hand's plays."""
    match = MatchState(rules)
    played: list[list[int]] = []
    while not match.over and match.hand_number < max_hands:
        state = match.start_hand(random_deal(rng))
        plays: list[int] = []
        while not state.is_over:
            seat = state.turn
            assert seat is not None
            action = random_action(state, rng)
            match.apply(seat, action)
            if not action.is_pass:
                plays.append(action.cards)
        played.append(plays)
    return match, played
