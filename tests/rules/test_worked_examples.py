"""The canonical worked examples of docs/rules.md, one test each, named after the example."""

from __future__ import annotations

import itertools

import pytest

from referee.rules import (
    Combination,
    Context,
    Kind,
    LegalPlays,
    Reason,
    Rules,
    context_for,
    parse_cards,
    score_hand,
)

RANKS = "3456789TJQKA2"


def ctx_of(profile: str) -> Context:
    return context_for(Rules.for_profile(profile))


def play(ctx: Context, text: str) -> Combination:
    combo = ctx.classify(parse_cards(text))
    assert combo is not None, text
    return combo


def every_five_of(ctx: Context, kind: Kind) -> list[Combination]:
    """Every five-card play of one kind in the deck (straights: plain ones only)."""
    deck = [r + s for r in RANKS for s in "CSHD"]
    out = []
    if kind in (Kind.STRAIGHT, Kind.FLUSH):
        if kind is Kind.FLUSH:
            candidates = (
                " ".join(r + s for r in ranks)
                for s in "CSHD"
                for ranks in itertools.combinations(RANKS, 5)
            )
        else:
            sequences = [RANKS[i : i + 5] for i in range(8)] + ["A2345", "23456"]
            candidates = (
                " ".join(r + s for r, s in zip(seq, suits, strict=True))
                for seq in sequences
                for suits in itertools.product("CSHD", repeat=5)
            )
        for text in candidates:
            combo = ctx.classify(parse_cards(text))
            if combo is not None and combo.kind is kind:
                out.append(combo)
        return out
    assert kind is Kind.FULL_HOUSE
    for triple_rank, pair_rank in itertools.permutations(RANKS, 2):
        for triple in itertools.combinations([c for c in deck if c[0] == triple_rank], 3):
            for pair in itertools.combinations([c for c in deck if c[0] == pair_rank], 2):
                out.append(play(ctx, " ".join(triple + pair)))
    return out


def test_big_two_9s_9d_beats_9h_9c() -> None:
    ctx = ctx_of("big-two")
    assert ctx.beats(play(ctx, "9♠ 9♦"), play(ctx, "9♥ 9♣"))
    assert not ctx.beats(play(ctx, "9♥ 9♣"), play(ctx, "9♠ 9♦"))


def test_big_two_a_pair_never_answers_a_single() -> None:
    ctx = ctx_of("big-two")
    table = play(ctx, "3♦")
    assert not ctx.beats(play(ctx, "9♠ 9♦"), table)
    plays = LegalPlays(ctx, parse_cards("9S 9D 4C"), table)
    error = plays.why_not(parse_cards("9S 9D"))
    assert error is not None and error.reason is Reason.WRONG_CARD_COUNT
    assert all(combo.kind is Kind.SINGLE for combo in plays)


def test_big_two_a_loser_left_with_11_cards_scores_22() -> None:
    rules = Rules.for_profile("big-two")
    eleven = parse_cards("3C 4C 5C 6C 7C 8C 9C TC JC QC KC")
    scores = score_hand(rules, [0, eleven, parse_cards("3D"), parse_cards("3H")], winner=0)
    assert scores[1] == 22


def test_pusoy_dos_23456_beats_a2345_beats_tjqka_beats_9tjqk() -> None:
    ctx = ctx_of("pusoy-dos")
    chain = ["2C 3S 4H 5D 6C", "AC 2S 3H 4D 5C", "TC JS QH KD AC", "9C TS JH QD KC"]
    for high, low in itertools.pairwise(chain):
        assert ctx.beats(play(ctx, high), play(ctx, low)), f"{high} over {low}"
        assert not ctx.beats(play(ctx, low), play(ctx, high))


def test_big_two_34567_beats_23456_beats_a2345_and_tjqka_is_highest() -> None:
    ctx = ctx_of("big-two")
    chain = ["3C 4S 5H 6D 7C", "2C 3S 4H 5D 6C", "AC 2S 3H 4D 5C"]
    for high, low in itertools.pairwise(chain):
        assert ctx.beats(play(ctx, high), play(ctx, low)), f"{high} over {low}"
        assert not ctx.beats(play(ctx, low), play(ctx, high))
    # 10-J-Q-K-A is the highest sequence: no straight beats one with the top card A♠, and
    # it beats every straight without the A♠ (those with it tie and cannot meet in play).
    top = play(ctx, "TD JC QH KD AS")
    ace_of_spades = parse_cards("AS")
    straights = every_five_of(ctx, Kind.STRAIGHT)
    assert len(straights) == 10 * (4**5 - 4)
    for straight in straights:
        assert not ctx.beats(straight, top)
        if not straight.mask & ace_of_spades:
            assert ctx.beats(top, straight)


@pytest.mark.parametrize("profile", ["pusoy-dos", "pusoy-dos-chips", "big-two"])
def test_every_profile_jqka2_mixed_is_no_play_and_suited_is_a_flush(profile: str) -> None:
    ctx = ctx_of(profile)
    assert ctx.classify(parse_cards("JC QS KH AD 2C")) is None
    for suit in "CSHD":
        combo = play(ctx, " ".join(r + suit for r in "JQKA2"))
        assert combo.kind is Kind.FLUSH


@pytest.mark.parametrize("profile", ["pusoy-dos", "big-two"])
def test_pusoy_dos_and_big_two_any_flush_beats_any_straight_any_full_house_beats_any_flush(
    profile: str,
) -> None:
    ctx = ctx_of(profile)
    straights = every_five_of(ctx, Kind.STRAIGHT)
    flushes = every_five_of(ctx, Kind.FLUSH)
    full_houses = every_five_of(ctx, Kind.FULL_HOUSE)
    low_suit = "C" if profile == "pusoy-dos" else "D"
    weakest_flush = play(ctx, " ".join(r + low_suit for r in "34568"))
    strongest_straight = play(ctx, "2D 3C 4C 5C 6C" if profile == "pusoy-dos" else "TC JC QC KC AS")
    weakest_full_house = play(ctx, "3C 3S 3H 4C 4S")
    strongest_flush = play(ctx, "9D JD QD KD 2D" if profile == "pusoy-dos" else "9S JS QS KS 2S")
    assert all(ctx.beats(weakest_flush, s) for s in straights)
    assert all(ctx.beats(f, strongest_straight) for f in flushes)
    assert all(ctx.beats(weakest_full_house, f) for f in flushes)
    assert all(ctx.beats(h, strongest_flush) for h in full_houses)
    assert not any(ctx.beats(s, weakest_flush) for s in straights)
    assert not any(ctx.beats(f, weakest_full_house) for f in flushes)


def test_pusoy_dos_chips_a_flush_cannot_answer_a_straight_a_higher_straight_can() -> None:
    ctx = ctx_of("pusoy-dos-chips")
    table = play(ctx, "5C 6S 7H 8D 9C")
    hand = parse_cards("3H 5H 7H 9H JH 6C 7S 8H 9D TC")
    plays = LegalPlays(ctx, hand, table)
    flush = parse_cards("3H 5H 7H 9H JH")
    error = plays.why_not(flush)
    assert error is not None and error.reason is Reason.DOES_NOT_BEAT
    assert not ctx.beats(play(ctx, "3H 5H 7H 9H JH"), table)
    higher = parse_cards("6C 7S 8H 9D TC")
    assert plays.why_not(higher) is None
    assert higher in plays.masks
    assert all(combo.kind is Kind.STRAIGHT for combo in plays)


def test_pusoy_dos_a_diamond_flush_beats_a_heart_flush_whatever_the_ranks() -> None:
    ctx = ctx_of("pusoy-dos")
    assert ctx.beats(play(ctx, "3♦ 4♦ 5♦ 6♦ 8♦"), play(ctx, "9♥ J♥ Q♥ K♥ 2♥"))
    flushes = every_five_of(ctx, Kind.FLUSH)
    diamonds = [f for f in flushes if _suits(f) == {"D"}]
    hearts = [f for f in flushes if _suits(f) == {"H"}]
    strongest_hearts = play(ctx, "9H JH QH KH 2H")
    weakest_diamonds = play(ctx, "3D 4D 5D 6D 8D")
    assert all(ctx.beats(d, strongest_hearts) for d in diamonds)
    assert all(ctx.beats(weakest_diamonds, h) for h in hearts)
    assert not any(ctx.beats(h, weakest_diamonds) for h in hearts)


def _suits(combo: Combination) -> set[str]:
    return {"CSHD"[i & 3] for i in range(52) if combo.mask >> i & 1}


def test_pusoy_dos_losers_holding_4_10_and_13_cards_score_4_20_and_39() -> None:
    rules = Rules.for_profile("pusoy-dos")
    four = parse_cards("3C 4C 5C 6C")
    ten = parse_cards("3D 4D 5D 6D 7D 8D 9D TD JD QD")
    thirteen = parse_cards("3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2H")
    assert score_hand(rules, [0, four, ten, thirteen], winner=0) == (0, 4, 20, 39)


def test_pusoy_dos_chips_a_loser_with_13_cards_holding_2d_pays_40_with_all_four_twos_44() -> None:
    rules = Rules.for_profile("pusoy-dos-chips")
    with_2d = parse_cards("3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D")
    scores = score_hand(rules, [0, with_2d, parse_cards("3D"), parse_cards("3H")], winner=0)
    assert scores[1] == -40
    all_twos = parse_cards("2C 2S 2H 2D 3C 4C 5C 6C 7C 8C 9C TC JC")
    scores = score_hand(rules, [0, all_twos, parse_cards("3D"), parse_cards("3H")], winner=0)
    assert scores[1] == -44
