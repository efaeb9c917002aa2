"""Card notation (docs/rules.md, "Cards"), the reasons for unreadable cards, and CardSet."""

from __future__ import annotations

import pytest

from referee.rules import (
    CardSet,
    InvalidCardsError,
    Reason,
    RulesError,
    SuitOrder,
    card_text,
    format_cards,
    parse_card,
    parse_cards,
    sorted_cards,
)

RANKS = "3456789TJQKA2"
SUITS = "CSHD"


# -- reading and writing one card ------------------------------------------------


@pytest.mark.parametrize("rank", RANKS)
@pytest.mark.parametrize("suit", SUITS)
def test_every_card_round_trips_through_its_canonical_text(rank: str, suit: str) -> None:
    assert card_text(parse_card(rank + suit)) == rank + suit


def test_the_52_cards_are_distinct() -> None:
    assert len({parse_card(r + s) for r in RANKS for s in SUITS}) == 52


@pytest.mark.parametrize(
    ("token", "canonical"),
    [
        ("3C", "3C"),
        ("TD", "TD"),
        ("2S", "2S"),
        ("10D", "TD"),
        ("10h", "TH"),
        ("td", "TD"),
        ("tD", "TD"),
        ("ac", "AC"),
        ("kS", "KS"),
        ("jh", "JH"),
        ("qd", "QD"),
        ("3♣", "3C"),
        ("2♠", "2S"),
        ("9♥", "9H"),
        ("T♦", "TD"),
        ("10♦", "TD"),
        ("a♠", "AS"),
        (" 7s ", "7S"),
    ],
)
def test_notation_is_read_in_any_case_with_letters_or_symbols(token: str, canonical: str) -> None:
    assert card_text(parse_card(token)) == canonical


@pytest.mark.parametrize(
    "token", ["1C", "11D", "0D", "3X", "C3", "33C", "3CC", "3", "10", "ZZ", "T10", "♣", "2♣♣"]
)
def test_a_malformed_token_is_an_unparseable_card_named_in_the_error(token: str) -> None:
    with pytest.raises(InvalidCardsError) as info:
        parse_card(token)
    assert info.value.reason is Reason.UNPARSEABLE_CARD
    assert info.value.token == token
    assert repr(token) in str(info.value)


def test_invalid_cards_error_is_a_value_error() -> None:
    """Callers that catch ValueError (or RulesError) catch an unreadable card, with its
    reason and a message that names the token and the notation."""
    try:
        parse_card("XX")
    except ValueError as exc:
        caught: ValueError = exc
    else:
        pytest.fail("parse_card('XX') raised nothing")
    assert type(caught) is InvalidCardsError
    assert isinstance(caught, RulesError)
    assert caught.reason is Reason.UNPARSEABLE_CARD
    assert caught.token == "XX"
    assert str(caught) == (
        "cannot read card 'XX': expected a rank (3-9, T or 10, J, Q, K, A, 2) followed by "
        "a suit (C, S, H, D or ♣ ♠ ♥ ♦)"
    )


# -- reading a list of cards ------------------------------------------------------


def test_a_list_is_space_or_comma_separated() -> None:
    expected = parse_cards("3C 4D 2S")
    assert parse_cards("3c,4d,2s") == expected
    assert parse_cards("  3C   4D\t2S ") == expected
    assert parse_cards("3C, 4D, 2S") == expected
    assert parse_cards(["3C", "4D", "2S"]) == expected


def test_a_list_names_the_bad_token_among_good_ones() -> None:
    with pytest.raises(InvalidCardsError) as info:
        parse_cards("3C 4D 9Z 2S")
    assert info.value.reason is Reason.UNPARSEABLE_CARD
    assert info.value.token == "9Z"
    assert "'9Z'" in str(info.value)


@pytest.mark.parametrize("text", ["3C 4D 3C", "3C 4D 3c", "TD 10D", "3♣ 3C", "9s, 9S"])
def test_a_card_listed_twice_is_a_duplicate_card_named_in_the_error(text: str) -> None:
    with pytest.raises(InvalidCardsError) as info:
        parse_cards(text)
    assert info.value.reason is Reason.DUPLICATE_CARD
    token = info.value.token
    assert token is not None
    assert token == text.replace(",", " ").split()[-1]
    assert repr(token) in str(info.value)


@pytest.mark.parametrize("text", ["", "   ", ",", []])
def test_no_cards_is_an_empty_play(text: str | list[str]) -> None:
    with pytest.raises(InvalidCardsError) as info:
        parse_cards(text)
    assert info.value.reason is Reason.EMPTY_PLAY


def test_an_empty_list_is_allowed_where_asked_for() -> None:
    assert parse_cards("", allow_empty=True) == 0


# -- canonical output ------------------------------------------------------------


def test_canonical_list_follows_the_suit_order_of_the_profile() -> None:
    threes = parse_cards("3C 3D")
    assert format_cards(threes, SuitOrder.DIAMONDS_LOW) == "3D 3C"  # big-two
    assert format_cards(threes, SuitOrder.CLUBS_LOW) == "3C 3D"  # pusoy-dos


def test_canonical_list_is_rank_first_then_suit() -> None:
    mask = parse_cards("2s 3d 10c 3c jh 2d 3s 3h")
    assert format_cards(mask, SuitOrder.CLUBS_LOW) == "3C 3S 3H 3D TC JH 2S 2D"
    assert format_cards(mask, SuitOrder.DIAMONDS_LOW) == "3D 3C 3H 3S TC JH 2D 2S"


def test_sorted_cards_ascends_in_card_order() -> None:
    mask = parse_cards("2S 2D 3C 3D")
    assert [card_text(c) for c in sorted_cards(mask, SuitOrder.CLUBS_LOW)] == [
        "3C",
        "3D",
        "2S",
        "2D",
    ]
    assert [card_text(c) for c in sorted_cards(mask, SuitOrder.DIAMONDS_LOW)] == [
        "3D",
        "3C",
        "2D",
        "2S",
    ]


def test_the_full_deck_in_canonical_order() -> None:
    deck = parse_cards([r + s for r in RANKS for s in SUITS])
    clubs_low = format_cards(deck, SuitOrder.CLUBS_LOW).split()
    assert clubs_low[0] == "3C" and clubs_low[-1] == "2D"
    assert clubs_low[:4] == ["3C", "3S", "3H", "3D"]
    diamonds_low = format_cards(deck, SuitOrder.DIAMONDS_LOW).split()
    assert diamonds_low[0] == "3D" and diamonds_low[-1] == "2S"
    assert diamonds_low[:4] == ["3D", "3C", "3H", "3S"]


# -- CardSet ---------------------------------------------------------------------


def test_cardset_is_a_set_of_cards() -> None:
    hand = CardSet.parse("9S 9D 3c")
    assert len(hand) == 3
    assert bool(hand)
    assert not CardSet()
    assert len(CardSet()) == 0
    assert parse_card("9D") in hand
    assert parse_card("9H") not in hand
    assert CardSet.parse("9d 9s") in hand
    assert CardSet.parse("9d 9h") not in hand
    assert "9D" not in hand  # only cards and card sets are members
    assert 99 not in hand
    assert sorted(card_text(c) for c in hand) == ["3C", "9D", "9S"]


def test_cardset_operators() -> None:
    a = CardSet.parse("3C 4C 5C")
    b = CardSet.parse("5C 6C")
    assert a | b == CardSet.parse("3C 4C 5C 6C")
    assert a & b == CardSet.parse("5C")
    assert a - b == CardSet.parse("3C 4C")
    assert a ^ b == CardSet.parse("3C 4C 6C")
    assert a == CardSet.parse("5c 4c 3c")
    assert a != b
    assert a != a.mask  # a CardSet is not equal to a bare mask


def test_cardset_is_immutable_value_usable_as_a_key() -> None:
    a = CardSet.parse("3C 4C")
    b = CardSet.parse("4C 3C")
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    c = a | CardSet.parse("5C")
    assert a == CardSet.parse("3C 4C")  # the operand did not change
    assert c != a


def test_cardset_of_and_text() -> None:
    hand = CardSet.of([parse_card("3D"), parse_card("3C"), parse_card("2S")])
    assert hand.text(SuitOrder.DIAMONDS_LOW) == "3D 3C 2S"
    assert hand.text(SuitOrder.CLUBS_LOW) == "3C 3D 2S"
    assert str(hand) == "3C 3D 2S"
    assert repr(hand) == "CardSet.parse('3C 3D 2S')"
    assert eval(repr(hand)) == hand


def test_cardset_parse_reports_bad_cards() -> None:
    with pytest.raises(InvalidCardsError) as info:
        CardSet.parse("3C 3C")
    assert info.value.reason is Reason.DUPLICATE_CARD
    assert CardSet.parse("") == CardSet()


def test_cardset_rejects_masks_outside_the_deck() -> None:
    with pytest.raises(ValueError):
        CardSet(1 << 52)
    with pytest.raises(ValueError):
        CardSet(-1)
