"""What a set of cards is as a play, and which play beats which (docs/rules.md)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from referee.rules import (
    Combination,
    Context,
    IllegalActionError,
    Kind,
    Reason,
    Rules,
    context_for,
    parse_cards,
)

PROFILES = ("pusoy-dos", "pusoy-dos-chips", "big-two")
RANKS = "3456789TJQKA2"


def ctx_of(profile: str, revolution: bool = False, **options: Any) -> Context:
    return context_for(Rules.for_profile(profile, options), revolution)


def play(ctx: Context, text: str) -> Combination:
    combo = ctx.classify(parse_cards(text))
    assert combo is not None, f"{text} should be a play"
    return combo


def kind(ctx: Context, text: str) -> Kind | None:
    combo = ctx.classify(parse_cards(text))
    return None if combo is None else combo.kind


def beats(ctx: Context, a: str, b: str) -> bool:
    return ctx.beats(play(ctx, a), play(ctx, b))


def assert_ascending(ctx: Context, plays: list[str]) -> None:
    """Each play beats every earlier one and no earlier one beats it."""
    for i, j in itertools.combinations(range(len(plays)), 2):
        low, high = plays[i], plays[j]
        assert beats(ctx, high, low), f"{high} should beat {low}"
        assert not beats(ctx, low, high), f"{low} should not beat {high}"


# -- classification --------------------------------------------------------------


def test_kind_names_are_the_judge_combination_names() -> None:
    assert [k.value for k in Kind] == [
        "single",
        "pair",
        "triple",
        "straight",
        "flush",
        "full_house",
        "four_of_a_kind",
        "straight_flush",
    ]
    assert [k.size for k in Kind] == [1, 2, 3, 5, 5, 5, 5, 5]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3C", Kind.SINGLE),
        ("2D", Kind.SINGLE),
        ("9S 9D", Kind.PAIR),
        ("2C 2S", Kind.PAIR),
        ("KC KH KD", Kind.TRIPLE),
        ("3C 4C 5C 6C 7C", Kind.STRAIGHT_FLUSH),
        ("3C 4D 5C 6C 7C", Kind.STRAIGHT),
        ("TH JS QD KC AC", Kind.STRAIGHT),
        ("TS JS QS KS AS", Kind.STRAIGHT_FLUSH),
        ("3H 5H 7H 9H JH", Kind.FLUSH),
        ("4D 8D TD KD 2D", Kind.FLUSH),
        ("3C 3D 3H 2C 2D", Kind.FULL_HOUSE),
        ("2C 2D 2H 3C 3D", Kind.FULL_HOUSE),
        ("7C 7S 7H 7D 3C", Kind.FOUR_OF_A_KIND),
        ("2C 2S 2H 2D AS", Kind.FOUR_OF_A_KIND),
    ],
)
def test_classification_common_to_every_profile(profile: str, text: str, expected: Kind) -> None:
    assert kind(ctx_of(profile), text) is expected


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    "text",
    [
        "9S 9D 9H 9C",  # a lone four of a kind
        "9S 9D 8H 8C",  # two pairs
        "3C 4C 5C 6C",  # four cards of a sequence
        "3C 4D",  # two ranks
        "3C 3D 4H",  # a pair and a single
        "3C 4D 6H 8S TC",  # five ranks, no sequence, mixed suits
        "3C 3D 4H 5S 6C",  # a pair and three singles
        "3C 3D 4H 4S 6C",  # two pairs and a kicker
        "3C 3D 3H 4S 6C",  # a triple and two singles
        "JC QD KH AS 2C",  # J-Q-K-A-2
        "QC KD AH 2S 3C",  # Q-K-A-2-3
        "KC AD 2H 3S 4C",  # K-A-2-3-4
        "3C 4C 5C 6C 7C 8C",  # six cards
        "3C 4C 5C 6C 7C 8C 9C 3D 4D 5D 6D 7D 8D",  # thirteen cards
    ],
)
def test_sets_that_are_no_play_in_any_profile(profile: str, text: str) -> None:
    assert kind(ctx_of(profile), text) is None


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("ranks", ["JQKA2", "QKA23", "KA234"])
def test_wrapping_through_the_two_is_never_a_straight_but_suited_is_a_flush(
    profile: str, ranks: str
) -> None:
    ctx = ctx_of(profile)
    assert kind(ctx, " ".join(r + "H" for r in ranks)) is Kind.FLUSH
    mixed = " ".join(r + s for r, s in zip(ranks, "HCHSD", strict=True))
    assert kind(ctx, mixed) is None


@pytest.mark.parametrize(
    ("profile", "allowed"),
    [("pusoy-dos", True), ("pusoy-dos-chips", False), ("big-two", True)],
)
@pytest.mark.parametrize("ranks", ["A2345", "23456"])
def test_straights_containing_a_two_per_profile(profile: str, allowed: bool, ranks: str) -> None:
    ctx = ctx_of(profile)
    mixed = " ".join(r + s for r, s in zip(ranks, "HCHSD", strict=True))
    suited = " ".join(r + "S" for r in ranks)
    assert kind(ctx, mixed) is (Kind.STRAIGHT if allowed else None)
    assert kind(ctx, suited) is (Kind.STRAIGHT_FLUSH if allowed else Kind.FLUSH)


@pytest.mark.parametrize(
    ("straights", "allowed"),
    [("wrap-high", True), ("none-with-two", False), ("wrap-low", True)],
)
@pytest.mark.parametrize("profile", PROFILES)
def test_the_straights_option_decides_the_two_straights(
    profile: str, straights: str, allowed: bool
) -> None:
    ctx = ctx_of(profile, straights=straights)
    assert (kind(ctx, "AC 2D 3C 4C 5C") is Kind.STRAIGHT) is allowed
    assert (kind(ctx, "2D 3C 4C 5C 6C") is Kind.STRAIGHT) is allowed
    assert kind(ctx, "3D 4C 5C 6C 7C") is Kind.STRAIGHT
    assert kind(ctx, "TD JC QC KC AC") is Kind.STRAIGHT
    assert kind(ctx, "JD QC KC AC 2C") is None


@pytest.mark.parametrize("profile", PROFILES)
def test_every_normal_sequence_is_a_straight(profile: str) -> None:
    ctx = ctx_of(profile)
    for i in range(8):
        ranks = RANKS[i : i + 5]
        text = " ".join(r + s for r, s in zip(ranks, "CSHDC", strict=True))
        assert kind(ctx, text) is Kind.STRAIGHT, text


@pytest.mark.parametrize("profile", PROFILES)
def test_without_five_card_hands_only_singles_pairs_and_triples_exist(profile: str) -> None:
    ctx = ctx_of(profile, five_card_hands=False)
    for text in ("3C 4D 5C 6C 7C", "3H 5H 7H 9H JH", "3C 3D 3H 2C 2D", "7C 7S 7H 7D 3C"):
        assert kind(ctx, text) is None, text
    assert kind(ctx, "3C") is Kind.SINGLE
    assert kind(ctx, "3C 3D") is Kind.PAIR
    assert kind(ctx, "3C 3D 3H") is Kind.TRIPLE


# -- singles, pairs, triples -----------------------------------------------------


def test_singles_rank_first_then_suit_in_pusoy_dos() -> None:
    ctx = ctx_of("pusoy-dos")
    assert_ascending(ctx, ["3C", "3S", "3H", "3D", "4C", "9D", "TC", "AD", "2C", "2S", "2H", "2D"])


def test_singles_rank_first_then_suit_in_big_two() -> None:
    ctx = ctx_of("big-two")
    assert_ascending(ctx, ["3D", "3C", "3H", "3S", "4D", "9S", "TD", "AS", "2D", "2C", "2H", "2S"])


@pytest.mark.parametrize(
    ("profile", "top", "bottom"),
    [
        ("pusoy-dos", "2D", "3C"),
        ("pusoy-dos-chips", "2D", "3C"),
        ("big-two", "2S", "3D"),
    ],
)
def test_highest_and_lowest_single(profile: str, top: str, bottom: str) -> None:
    ctx = ctx_of(profile)
    for r in RANKS:
        for s in "CSHD":
            card = r + s
            if card != top:
                assert beats(ctx, top, card) and not beats(ctx, card, top)
            if card != bottom:
                assert beats(ctx, card, bottom) and not beats(ctx, bottom, card)


def test_pairs_by_rank_then_the_higher_suit_of_each() -> None:
    pusoy = ctx_of("pusoy-dos")
    assert beats(pusoy, "9C 9D", "9S 9H")  # ♦ is above ♥; the lower card does not matter
    assert beats(pusoy, "TC TS", "9H 9D")  # rank first
    assert beats(pusoy, "2C 2S", "AH AD")  # the 2 is high
    big_two = ctx_of("big-two")
    assert beats(big_two, "9D 9S", "9C 9H")  # ♠ is the highest in big-two
    assert beats(big_two, "9C 9H", "9D 9S") is False
    assert beats(big_two, "TD TC", "9H 9S")


def test_two_pairs_with_the_same_top_card_do_not_beat_each_other() -> None:
    ctx = ctx_of("pusoy-dos")
    assert not beats(ctx, "9C 9D", "9H 9D")
    assert not beats(ctx, "9H 9D", "9C 9D")


@pytest.mark.parametrize("profile", PROFILES)
def test_triples_by_rank_only(profile: str) -> None:
    ctx = ctx_of(profile)
    assert_ascending(ctx, ["3C 3S 3H", "4C 4S 4D", "TC TS TD", "AC AS AH", "2C 2S 2H"])
    assert beats(ctx, "4C 4S 4H", "3S 3H 3D")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_play_answers_only_a_play_of_as_many_cards(profile: str) -> None:
    ctx = ctx_of(profile)
    table_plays = ["3C", "3S 3H", "3C 3S 3H", "3C 4D 5C 6C 7C"]
    answers = ["2D", "2C 2D", "2C 2S 2H", "2C 2S 2H 3D 3H", "7C 7S 7H 7D 3D"]
    for table in table_plays:
        for answer in answers:
            same = parse_cards(answer).bit_count() == parse_cards(table).bit_count()
            if not same:
                assert not beats(ctx, answer, table), f"{answer} on {table}"


# -- straights ---------------------------------------------------------------------

NORMAL_SEQUENCES = [RANKS[i : i + 5] for i in range(8)]
SEQUENCES = {
    "pusoy-dos": [*NORMAL_SEQUENCES, "A2345", "23456"],
    "pusoy-dos-chips": list(NORMAL_SEQUENCES),
    "big-two": ["A2345", "23456", *NORMAL_SEQUENCES],
}


def mixed(ranks: str, suits: str = "CSHDC") -> str:
    return " ".join(r + s for r, s in zip(ranks, suits, strict=True))


@pytest.mark.parametrize("profile", PROFILES)
def test_straight_sequences_in_profile_order(profile: str) -> None:
    ctx = ctx_of(profile)
    assert_ascending(ctx, [mixed(seq) for seq in SEQUENCES[profile]])


@pytest.mark.parametrize("profile", PROFILES)
def test_straight_flushes_in_the_same_sequence_order(profile: str) -> None:
    ctx = ctx_of(profile)
    assert_ascending(ctx, [mixed(seq, "HHHHH") for seq in SEQUENCES[profile]])


def test_pusoy_dos_straight_tie_break_is_the_highest_card_by_card_order() -> None:
    ctx = ctx_of("pusoy-dos")
    # Normal straights: the top of the sequence, here 7♠ above 7♣.
    assert beats(ctx, "3C 4C 5C 6C 7S", "3D 4D 5D 6D 7C")
    # Wrap straights: the 2 is the highest card and its suit decides, whatever the 5 or 6.
    assert beats(ctx, "AC 2D 3C 4C 5C", "AD 2S 3D 4D 5D")
    assert not beats(ctx, "AD 2S 3D 4D 5D", "AC 2D 3C 4C 5C")
    assert beats(ctx, "2D 3C 4C 5C 6C", "2H 3D 4D 5D 6D")


def test_big_two_straight_tie_break_is_the_top_of_the_sequence() -> None:
    ctx = ctx_of("big-two")
    # A-2-3-4-5: the 5 decides (5♣ above 5♦), not the 2 (2♠ is the highest card).
    assert beats(ctx, "AD 2D 3D 4D 5C", "AS 2S 3S 4S 5D")
    assert not beats(ctx, "AS 2S 3S 4S 5D", "AD 2D 3D 4D 5C")
    # 2-3-4-5-6: the 6 decides.
    assert beats(ctx, "2D 3D 4D 5D 6S", "2S 3S 4S 5S 6H")
    # Normal straights: the top card, 7♠ above 7♥.
    assert beats(ctx, "3D 4D 5D 6D 7S", "3S 4S 5S 6S 7H")


def test_pusoy_dos_chips_straight_tie_break_is_the_top_card() -> None:
    ctx = ctx_of("pusoy-dos-chips")
    assert beats(ctx, "TC JC QC KC AD", "TD JD QD KD AH")
    assert not beats(ctx, "TD JD QD KD AH", "TC JC QC KC AD")


def test_the_straights_option_changes_the_order_of_a_profile() -> None:
    ctx = ctx_of("pusoy-dos", straights="wrap-low")
    assert beats(ctx, mixed("34567"), mixed("23456"))
    assert beats(ctx, mixed("TJQKA"), mixed("A2345"))
    ctx = ctx_of("big-two", straights="wrap-high")
    assert beats(ctx, mixed("23456"), mixed("TJQKA"))


# -- flushes, full houses, fours, straight flushes -------------------------------


def test_flushes_suit_first_then_cards_from_the_highest() -> None:
    pusoy = ctx_of("pusoy-dos")
    assert beats(pusoy, "3D 4D 5D 6D 8D", "9H JH QH KH 2H")
    assert not beats(pusoy, "9H JH QH KH 2H", "3D 4D 5D 6D 8D")
    assert beats(pusoy, "3H 5H 7H 9H KH", "4H 6H 8H TH QH")  # K above Q
    assert beats(pusoy, "4H 5H 7H 9H KH", "3H 5H 7H 9H KH")  # down to the last card
    assert beats(pusoy, "3H 5H 7H 9H 2H", "4H 6H 8H TH AH")  # the 2 is high in flushes
    big_two = ctx_of("big-two")
    assert beats(big_two, "3S 4S 5S 6S 8S", "9H JH QH KH 2H")  # ♠ is the top suit
    assert beats(big_two, "3C 4C 5C 6C 8C", "9D JD QD KD 2D")  # ♦ is the bottom suit


@pytest.mark.parametrize("profile", PROFILES)
def test_full_house_by_the_triple(profile: str) -> None:
    ctx = ctx_of(profile)
    assert beats(ctx, "4C 4D 4H 3C 3D", "3S 3H 3D 2C 2D")
    assert beats(ctx, "2C 2D 2H 3C 3D", "AC AD AH KC KD")
    assert not beats(ctx, "3S 3H 3D 2C 2D", "4C 4D 4H 5C 5D")


@pytest.mark.parametrize("profile", PROFILES)
def test_four_of_a_kind_by_the_four(profile: str) -> None:
    ctx = ctx_of(profile)
    assert beats(ctx, "4C 4S 4H 4D 3C", "3C 3S 3H 3D 2D")
    assert beats(ctx, "2C 2S 2H 2D 3C", "AC AS AH AD KD")
    assert not beats(ctx, "3C 3S 3H 3D 2D", "4C 4S 4H 4D 5C")


@pytest.mark.parametrize(
    ("profile", "top_suit", "lower_suit"),
    [
        ("pusoy-dos", "D", "H"),
        ("pusoy-dos-chips", "D", "H"),
        ("big-two", "S", "H"),
    ],
)
def test_straight_flushes_by_sequence_then_suit(
    profile: str, top_suit: str, lower_suit: str
) -> None:
    ctx = ctx_of(profile)
    top_royal = mixed("TJQKA", top_suit * 5)
    royal = mixed("TJQKA", lower_suit * 5)
    assert beats(ctx, top_royal, royal)
    assert not beats(ctx, royal, top_royal)
    assert beats(ctx, royal, mixed("9TJQK", top_suit * 5))


def test_the_highest_straight_flush_of_each_profile_beats_every_other_five() -> None:
    tops = {
        "pusoy-dos": "2D 3D 4D 5D 6D",
        "pusoy-dos-chips": "TD JD QD KD AD",
        "big-two": "TS JS QS KS AS",
    }
    for profile, top in tops.items():
        ctx = ctx_of(profile)
        for other in ("TH JH QH KH AH", "2C 2S 2H 2D AS", "9D TD JD QD KD", "AC 2C 3C 4C 5C"):
            combo = ctx.classify(parse_cards(other))
            if combo is not None and combo.kind is Kind.STRAIGHT_FLUSH:
                assert beats(ctx, top, other), f"{profile}: {top} over {other}"


# -- five-card categories: ranked or locked -----------------------------------

CATEGORY_LADDER = [
    "TC JS QH KD AC",  # the highest-ranked plain straight of clubs-low profiles
    "3C 4C 5C 6C 8C",  # a low flush
    "3C 3S 3H 4D 4C",  # the lowest full house
    "3C 3S 3H 3D 4C",  # the lowest four of a kind
    "3H 4H 5H 6H 7H",  # a low straight flush
]


@pytest.mark.parametrize("profile", ["pusoy-dos", "big-two"])
def test_ranked_categories_a_higher_category_beats_any_lower(profile: str) -> None:
    ctx = ctx_of(profile)
    assert_ascending(ctx, CATEGORY_LADDER)
    # The weakest of a category over the strongest of the one below.
    assert beats(
        ctx, "3C 4C 5C 6C 8C", "2D 3D 4H 5S 6C" if profile == "pusoy-dos" else "TC JD QH KS AS"
    )
    assert beats(ctx, "3D 3C 3H 4D 4C", "9S JS QS KS 2S")
    assert beats(ctx, "3D 3C 3H 3S 4C", "2S 2D 2C AD AC")
    assert beats(ctx, "3H 4H 5H 6H 7H", "2S 2D 2C 2H AC")


def test_locked_categories_only_the_same_category_answers() -> None:
    ctx = ctx_of("pusoy-dos-chips")
    for low, high in itertools.permutations(CATEGORY_LADDER, 2):
        assert not beats(ctx, high, low), f"{high} must not answer {low}"
    assert beats(ctx, "4C 5S 6H 7D 8C", "3C 4S 5H 6D 7C")  # a higher straight can
    assert beats(ctx, "4H 5H 6H 7H 8H", "3H 4H 5H 6H 7H")  # a higher straight flush can


@pytest.mark.parametrize("profile", PROFILES)
def test_the_categories_option_switches_any_profile(profile: str) -> None:
    locked = ctx_of(profile, five_card_categories="locked")
    ranked = ctx_of(profile, five_card_categories="ranked")
    assert not beats(locked, "3C 4C 5C 6C 8C", "3D 4S 5H 6D 7C")
    assert beats(ranked, "3C 4C 5C 6C 8C", "3D 4S 5H 6D 7C")
    assert not beats(locked, "3H 4H 5H 6H 7H", "2S 2D 2C 2H AC")
    assert beats(ranked, "3H 4H 5H 6H 7H", "2S 2D 2C 2H AC")


# -- options ----------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_lowest_straight_beats_every_other_straight(profile: str) -> None:
    ctx = ctx_of(profile, lowest_straight_beats_straights=True)
    low = "3C 4C 5S 6C 7C"
    for seq in SEQUENCES[profile]:
        if seq != "34567":
            assert beats(ctx, low, mixed(seq)), seq
            assert not beats(ctx, mixed(seq), low), seq
    # Two 3-4-5-6-7 straights still compare by the tie-break card.
    assert beats(ctx, "3D 4D 5D 6D 7S", "3C 4C 5S 6C 7C")


@pytest.mark.parametrize("profile", ["pusoy-dos", "big-two"])
def test_lowest_straight_does_not_beat_a_straight_flush_or_higher_category(profile: str) -> None:
    ctx = ctx_of(profile, lowest_straight_beats_straights=True)
    low = "3C 4C 5S 6C 7C"
    assert not beats(ctx, low, "8H 9H TH JH QH")
    assert beats(ctx, "8H 9H TH JH QH", low)
    assert beats(ctx, "3H 5H 7H 9H JH", low)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("categories", ["ranked", "locked"])
def test_lowest_straight_option_leaves_straight_flushes_in_sequence_order(
    profile: str, categories: str
) -> None:
    # The option is about straights; a 3-4-5-6-7 straight flush is still the lowest
    # normal straight flush and cannot beat a higher straight flush.
    ctx = ctx_of(profile, lowest_straight_beats_straights=True, five_card_categories=categories)
    assert beats(ctx, "8H 9H TH JH QH", "3D 4D 5D 6D 7D")
    assert not beats(ctx, "3D 4D 5D 6D 7D", "8H 9H TH JH QH")
    assert beats(ctx, "4C 5C 6C 7C 8C", "3D 4D 5D 6D 7D")


def test_without_the_option_the_lowest_straight_is_lowest() -> None:
    ctx = ctx_of("pusoy-dos")
    assert not beats(ctx, "3C 4C 5S 6C 7C", "4C 5S 6H 7D 8C")


@pytest.mark.parametrize("profile", PROFILES)
def test_bomb_four_of_a_kind_beats_plays_of_any_size(profile: str) -> None:
    ctx = ctx_of(profile, bomb=True)
    bomb = "3C 3S 3H 3D 4C"
    top_single = "2S" if profile == "big-two" else "2D"
    for table in (
        top_single,
        "2S 2D",
        "2C 2H 2D",
        "TC JS QH KD AC",
        "4H 8H TH QH 2H",
        "AC AS AH KD KH",
    ):
        assert beats(ctx, bomb, table), table
    assert beats(ctx, "4C 4S 4H 4D 3C", "3C 3S 3H 3D 2D")  # a higher bomb
    assert not beats(ctx, "3C 3S 3H 3D 2D", "4C 4S 4H 4D 3C")  # not a lower one
    assert not beats(ctx, bomb, "3H 4H 5H 6H 7H")  # never a straight flush
    # Other plays still need their own size.
    assert not beats(ctx, "2C 2S 2H", "3D")


@pytest.mark.parametrize("profile", PROFILES)
def test_without_bomb_four_of_a_kind_answers_only_five_cards(profile: str) -> None:
    ctx = ctx_of(profile)
    assert not beats(ctx, "3C 3S 3H 3D 4C", "3S" if profile == "pusoy-dos" else "4D")
    assert not beats(ctx, "3C 3S 3H 3D 4C", "5S 5D")


def test_bomb_crosses_locked_categories() -> None:
    ctx = ctx_of("pusoy-dos-chips", bomb=True)
    assert beats(ctx, "3C 3S 3H 3D 4C", "TC JS QH KD AC")
    assert beats(ctx, "3C 3S 3H 3D 4C", "4H 6H 8H TH QH")


def test_revolution_inverts_ranks_but_not_suits() -> None:
    ctx = ctx_of("pusoy-dos", revolution=True)
    assert beats(ctx, "3C", "2D")
    assert beats(ctx, "3D", "3C")  # suits unchanged
    assert beats(ctx, "9C", "TD")
    assert beats(ctx, "3C 3S", "2H 2D")
    assert beats(ctx, "3C 3S 3H", "4C 4S 4H")
    assert beats(ctx, "3C 3S 3H 2C 2D", "4C 4S 4H 3D 3H")  # full house by the triple
    assert beats(ctx, "3C 3S 3H 3D 2D", "4C 4S 4H 4D 2C")
    # Flushes: suit first still; inside a suit the cards compare inverted.
    assert beats(ctx, "3H 6H 8H TH QH", "4H 5H 7H 9H KH")  # the 3 is now the top card
    assert not beats(
        context_for(Rules.for_profile("pusoy-dos")), "3H 6H 8H TH QH", "4H 5H 7H 9H KH"
    )
    assert beats(ctx, "9D JD QD KD 2D", "3H 4H 5H 6H 8H")
    # Categories are not inverted: a flush still beats a straight.
    assert beats(ctx, "9D JD QD KD 2D", "3C 4C 5S 6C 7C")


@pytest.mark.parametrize("profile", PROFILES)
def test_revolution_reverses_the_order_of_straights(profile: str) -> None:
    ctx = ctx_of(profile, revolution=True)
    assert_ascending(ctx, [mixed(seq) for seq in reversed(SEQUENCES[profile])])


def test_a_second_revolution_restores_the_order() -> None:
    rules = Rules.for_profile("big-two")
    normal = context_for(rules, False)
    assert normal.beats(play(normal, "2S"), play(normal, "3D"))
    inverted = context_for(rules, True)
    assert inverted.beats(play(inverted, "3D"), play(inverted, "2S"))


# -- the reason given for a play that cannot answer ------------------------------


def test_check_beats_gives_wrong_card_count_or_does_not_beat() -> None:
    ctx = ctx_of("big-two")
    with pytest.raises(IllegalActionError) as info:
        ctx.check_beats(play(ctx, "9S 9D"), play(ctx, "3D"))
    assert info.value.reason is Reason.WRONG_CARD_COUNT
    with pytest.raises(IllegalActionError) as info:
        ctx.check_beats(play(ctx, "4D"), play(ctx, "5D"))
    assert info.value.reason is Reason.DOES_NOT_BEAT
    ctx.check_beats(play(ctx, "5C"), play(ctx, "5D"))  # no error
    locked = ctx_of("pusoy-dos-chips")
    with pytest.raises(IllegalActionError) as info:
        locked.check_beats(play(locked, "3C 4C 5C 6C 8C"), play(locked, "3D 4S 5H 6D 7C"))
    assert info.value.reason is Reason.DOES_NOT_BEAT
