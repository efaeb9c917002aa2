"""Property tests: the engine against the reference reading in ``brute.py``.

Every test draws a profile and, for most, a random set of option overrides, so the
house rules are exercised in combinations nobody wrote down by hand.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

from brute import (
    FULL_DECK,
    OPTION_VALUES,
    PROFILE_NAMES,
    brute_legal_plays,
    card_list,
    random_combination,
    random_of_kind,
    ref_beats,
    ref_kind,
    ref_strength,
    subsets,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.rules import (
    Action,
    Combination,
    Context,
    Kind,
    LegalPlays,
    MatchState,
    Rules,
    Scoring,
    context_for,
    format_cards,
)
from referee.rules.judge import judge, moves

SETTINGS = settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def option_overrides(draw: st.DrawFn) -> dict[str, Any]:
    """A random subset of the options with random values (JSON values, as a client sends)."""
    out: dict[str, Any] = {}
    for name, values in OPTION_VALUES.items():
        if draw(st.booleans()):
            out[name] = draw(st.sampled_from(list(values)))
    return out


@st.composite
def any_rules(draw: st.DrawFn) -> Rules:
    profile = draw(st.sampled_from(PROFILE_NAMES))
    return Rules.for_profile(profile, draw(option_overrides()))


def mask_of(cards: set[int] | frozenset[int]) -> int:
    return sum(1 << c for c in cards)


hands = (
    st.integers(1, 13)
    .flatmap(lambda n: st.sets(st.integers(0, 51), min_size=n, max_size=n))
    .map(mask_of)
)
contexts = st.tuples(any_rules(), st.booleans()).map(lambda rv: context_for(*rv))


def random_table(ctx: Context, rng: random.Random, hand: int) -> Combination | None:
    mask = random_combination(ctx, rng, FULL_DECK & ~hand)
    return None if mask is None else ctx.classify(mask)


def combos_of_kind(ctx: Context, rng: random.Random, kind: Kind, n: int) -> list[Combination]:
    out: list[Combination] = []
    for _ in range(n * 10):
        mask = random_of_kind(rng, kind)
        combo = ctx.classify(mask) if mask else None
        if combo is None:
            continue  # e.g. a straight this profile does not allow
        if combo.kind is kind and all(c.mask != mask for c in out):
            out.append(combo)
        if len(out) == n:
            break
    return out


# -- beats is a strict order -------------------------------------------------------


def assert_strict_order(ctx: Context, plays: list[Combination]) -> None:
    beats = ctx.beats
    for a in plays:
        assert not beats(a, a), f"irreflexive: {card_list(a.mask)}"
    for a, b in itertools.permutations(plays, 2):
        assert not (beats(a, b) and beats(b, a)), (
            f"antisymmetric: {card_list(a.mask)} {card_list(b.mask)}"
        )
    for a, b, c in itertools.permutations(plays, 3):
        if beats(a, b) and beats(b, c):
            assert beats(a, c), (
                f"transitive: {card_list(a.mask)} {card_list(b.mask)} {card_list(c.mask)}"
            )


@SETTINGS
@given(contexts, st.sampled_from(list(Kind)), st.randoms(use_true_random=False))
def test_beats_is_a_strict_order_inside_each_kind(
    ctx: Context, kind: Kind, rng: random.Random
) -> None:
    plays = combos_of_kind(ctx, rng, kind, 8)
    assert_strict_order(ctx, plays)
    # Inside one kind two plays either tie (equal strength) or exactly one beats the other.
    for a, b in itertools.combinations(plays, 2):
        same = ref_strength(ctx.rules, ctx.revolution, a.mask) == ref_strength(
            ctx.rules, ctx.revolution, b.mask
        )
        if ctx.rules.lowest_straight_beats_straights and kind is Kind.STRAIGHT:
            continue  # the lifted 3-4-5-6-7 is checked against the reference below
        assert ctx.beats(a, b) + ctx.beats(b, a) == (0 if same else 1)


@settings(SETTINGS, max_examples=80)
@given(contexts, st.randoms(use_true_random=False))
def test_beats_is_a_strict_order_among_five_card_plays(ctx: Context, rng: random.Random) -> None:
    plays = []
    for kind in (Kind.STRAIGHT, Kind.FLUSH, Kind.FULL_HOUSE, Kind.FOUR_OF_A_KIND):
        plays += combos_of_kind(ctx, rng, kind, 3)
    plays += combos_of_kind(ctx, rng, Kind.STRAIGHT_FLUSH, 2)
    assert_strict_order(ctx, plays)


@settings(SETTINGS, max_examples=200)
@given(contexts, st.randoms(use_true_random=False))
def test_classify_and_beats_agree_with_the_reference(ctx: Context, rng: random.Random) -> None:
    rules, revolution = ctx.rules, ctx.revolution
    for _ in range(10):
        size = rng.choice((1, 2, 3, 4, 5, 5, 5, 6))
        mask = sum(1 << c for c in rng.sample(range(52), size))
        combo = ctx.classify(mask)
        assert (combo.kind.value if combo else None) == ref_kind(rules, mask), card_list(mask)
    for _ in range(10):
        a, b = random_combination(ctx, rng), random_combination(ctx, rng)
        if a is None or b is None:
            continue
        ca, cb = ctx.classify(a), ctx.classify(b)
        assert ca is not None and cb is not None
        assert ca.kind.value == ref_kind(rules, a)
        expected = ref_beats(rules, revolution, a, b)
        assert ctx.beats(ca, cb) == expected, (card_list(a), card_list(b))


# -- legal plays against brute force ---------------------------------------------


def check_legal_plays(
    ctx: Context,
    hand: int,
    table: Combination | None,
    must_include: int = 0,
    lone_two_rule: bool = False,
) -> None:
    plays = LegalPlays(ctx, hand, table, must_include, lone_two_rule)
    expected = brute_legal_plays(ctx, hand, table, must_include, lone_two_rule)
    assert plays.masks == expected, (
        card_list(hand),
        table and card_list(table.mask),
        [format_cards(m) for m in plays.masks][:20],
        [format_cards(m) for m in expected][:20],
    )
    # Stable: asking again, or asking a fresh view, gives the same list.
    assert plays.masks == expected
    assert LegalPlays(ctx, hand, table, must_include, lone_two_rule).masks == expected
    assert len(plays) == plays.count() == len(expected)
    # Order: by size, then by strength.
    keys = [(m.bit_count(), c.key) for m, c in zip(plays.masks, plays, strict=True)]
    assert keys == sorted(keys)
    # Membership and why_not agree with the list for every subset of the hand.
    legal = set(expected)
    for mask in subsets(hand, (1, 2, 3, 4, 5)):
        error = plays.why_not(mask)
        assert (error is None) == (mask in legal), (card_list(mask), error)
        assert (mask in plays) == (mask in legal)
    if table is None:
        assert plays.can_pass == (not expected)
    else:
        assert plays.can_pass


@SETTINGS
@given(contexts, hands, st.booleans(), st.booleans(), st.randoms(use_true_random=False))
def test_legal_leads_equal_brute_force(
    ctx: Context, hand: int, with_opening: bool, lone_two: bool, rng: random.Random
) -> None:
    must = 0
    if with_opening:
        bits = [1 << c for c in range(52) if hand >> c & 1]
        must = rng.choice(bits)
    check_legal_plays(ctx, hand, None, must, lone_two)


@SETTINGS
@given(contexts, hands, st.randoms(use_true_random=False))
def test_legal_answers_on_random_tables_equal_brute_force(
    ctx: Context, hand: int, rng: random.Random
) -> None:
    table = random_table(ctx, rng, hand)
    if table is not None:
        check_legal_plays(ctx, hand, table)


@settings(SETTINGS, max_examples=40)
@given(contexts, st.randoms(use_true_random=False))
def test_legal_plays_of_full_hands_equal_brute_force(ctx: Context, rng: random.Random) -> None:
    # Thirteen cards rich in fives: pairs, triples, quads and long suits.
    hand = sum(1 << c for c in rng.sample(range(52), 13))
    check_legal_plays(ctx, hand, None)
    table = random_table(ctx, rng, hand)
    if table is not None:
        check_legal_plays(ctx, hand, table)


# -- whole games -----------------------------------------------------------------------


@settings(SETTINGS, max_examples=60)
@given(any_rules(), st.randoms(use_true_random=False))
def test_random_games_keep_every_card_and_score_by_the_profile(
    rules: Rules, rng: random.Random
) -> None:
    match = MatchState(rules)
    for _ in range(3):
        if match.over:
            break
        deal = [0, 0, 0, 0]
        deck = list(range(52))
        rng.shuffle(deck)
        for s in range(4):
            deal[s] = sum(1 << c for c in deck[13 * s : 13 * s + 13])
        state = match.start_hand(deal)
        played = 0
        result = None
        steps = 0
        while result is None:
            seat = state.turn
            assert seat is not None
            if steps % 17 == 0:  # now and then, the whole legal list against brute force
                expected = brute_legal_plays(
                    state.ctx,
                    state.hands[seat],
                    state.table,
                    state.must_include,
                    state.lone_two_rule,
                )
                assert state.legal_plays().masks == expected
            plays = state.legal_plays()
            if plays.can_pass and (not plays.masks or rng.random() < 0.3):
                cards = 0
            else:
                cards = rng.choice(plays.masks)
            _, result = match.apply(seat, Action(cards))
            steps += 1
            assert steps < 2000, "a hand must end"
            if cards:
                assert played & cards == 0, "a card was played twice"
                played |= cards
            union = played
            for h in state.hands:
                assert union & h == 0, "a card is in two places"
                union |= h
            assert union == FULL_DECK, "a card was lost"
        # Exactly one winner, the only seat without cards.
        assert [s for s in range(4) if not result.cards_left[s]] == [result.winner]
        assert state.winner == result.winner
        scores = result.scores
        if rules.scoring is Scoring.CHIPS:
            assert sum(scores) == 0
            assert scores[result.winner] > 0
        else:
            assert min(scores) >= 0
            assert scores[result.winner] == 0
            for s in range(4):
                if s != result.winner:
                    assert scores[s] >= result.cards_left[s].bit_count() > 0


# -- the judge agrees with the move list ---------------------------------------------


@settings(SETTINGS, max_examples=100)
@given(
    st.sampled_from(PROFILE_NAMES),
    option_overrides(),
    hands,
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_judge_agrees_with_moves(
    profile: str, options: dict[str, Any], hand: int, on_table: bool, rng: random.Random
) -> None:
    rules = Rules.for_profile(profile, options)
    ctx = context_for(rules)
    request: dict[str, Any] = {"profile": profile, "options": options}
    if not on_table and rng.random() < 0.5:
        # A hand's first play: only the opening card can be required, so the hand holds it
        # (in place of one of its cards, so that it keeps its size).
        opening = 1 << rules.opening_card
        if not hand & opening:
            hand = hand & ~(1 << rng.choice([c for c in range(52) if hand >> c & 1])) | opening
        request["lead_must_include"] = format_cards(opening)
    request["hand"] = format_cards(hand, rules.suit_order)
    if on_table:
        table = random_table(ctx, rng, hand)
        if table is not None:
            request["table"] = format_cards(table.mask, rules.suit_order)
    request = json.loads(json.dumps(request))  # exactly what a client would send
    listed = moves(request)
    legal = set(listed["moves"])
    assert len(legal) == len(listed["moves"])
    assert judge({**request, "play": "pass"})["legal"] == listed["can_pass"]
    sizes = (1, 2, 3, 4, 5) if hand.bit_count() <= 10 else (1, 2, 3, 5)
    for mask in subsets(hand, sizes):
        text = format_cards(mask, rules.suit_order)
        verdict = judge({**request, "play": text})
        assert verdict["legal"] == (text in legal), (text, verdict)
        if verdict["legal"]:
            assert "reason" not in verdict
        else:
            assert verdict["reason"]
