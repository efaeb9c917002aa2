"""Judge requests that describe no real position are errors; a revolution can be given."""

from __future__ import annotations

import pytest

from referee.rules.judge import RequestError, judge, moves


def test_revolution_in_force_inverts_the_ranks():
    base = {"profile": "big-two", "options": {"revolution": True}, "table": "3C", "play": "2S"}
    assert judge(base)["legal"] is True
    assert judge({**base, "revolution": True}) == {
        "legal": False,
        "reason": "does_not_beat",
        "message": "2S (single) does not beat 3C",
        "combination": "single",
    }


def test_hand_and_table_sharing_a_card_is_an_error():
    with pytest.raises(RequestError, match="share cards: 4C"):
        moves({"profile": "big-two", "hand": "3D 4C", "table": "4C"})


def test_an_opening_card_not_in_the_hand_is_an_error():
    with pytest.raises(RequestError, match="not in"):
        moves({"profile": "big-two", "hand": "4C", "lead_must_include": "3D"})


def test_revolution_must_be_a_boolean():
    with pytest.raises(RequestError, match="revolution"):
        judge({"profile": "big-two", "play": "3D", "revolution": "yes"})


def test_a_hand_of_more_than_thirteen_cards_is_an_error():
    fourteen = "3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2D 3C"
    with pytest.raises(RequestError, match="holds 14 cards; a hand has at most 13"):
        judge({"profile": "big-two", "hand": fourteen, "play": "3D"})
    assert judge({"profile": "big-two", "hand": fourteen[:-3], "play": "3D"})["legal"] is True


@pytest.mark.parametrize(
    ("request_fields", "error"),
    [
        # A player with no cards has gone out: nobody acts with an empty hand.
        ({"hand": "", "play": "pass"}, '"hand" is empty'),
        ({"hand": [], "table": "3C", "play": "pass"}, '"hand" is empty'),
        # A revolution needs the option, and a four of a kind, which needs five-card hands.
        ({"revolution": True, "play": "3D"}, "the revolution option is off"),
        (
            {
                "options": {"revolution": True, "five_card_hands": False},
                "revolution": True,
                "play": "3D",
            },
            "cannot trigger without five-card hands",
        ),
        (
            {"lone_two_rule": True, "hand": "2S", "play": "2S"},
            "no_finish_on_lone_two option is off",
        ),
        # Only the opening card of the suit order can be required, only on a hand's first play.
        ({"lead_must_include": "3C", "play": "3D"}, "only the opening card (3D"),
        ({"lead_must_include": "3D", "table": "3C", "play": "4D"}, 'has no "table"'),
        (
            {
                "options": {"revolution": True},
                "revolution": True,
                "lead_must_include": "3D",
                "play": "3D",
            },
            '"revolution" cannot have changed yet',
        ),
        # The cards on the table are nobody's to play.
        ({"table": "AC", "play": "AC 2S 3H 4D 5C"}, '"play" and "table" share cards: AC'),
        # A misspelt field would silently change the position: it is named instead.
        ({"tabel": "3C", "play": "3D"}, 'unknown field "tabel"'),
    ],
)
def test_impossible_positions_and_unknown_fields_are_errors_not_verdicts(
    request_fields: dict[str, object], error: str
) -> None:
    req = {"profile": "big-two", **request_fields}
    with pytest.raises(RequestError) as info:
        judge(req)
    assert error in str(info.value)
    if "hand" in request_fields:
        with pytest.raises(RequestError):
            moves(req)


def test_the_lone_two_rule_can_be_given_as_lapsed():
    base = {"profile": "pusoy-dos", "options": {"no_finish_on_lone_two": True}, "hand": "2D"}
    assert judge({**base, "play": "2D"})["reason"] == "lone_two_finish"
    assert judge({**base, "lone_two_rule": False, "play": "2D"}) == {
        "legal": True,
        "combination": "single",
    }
    assert moves({**base, "lone_two_rule": False}) == {"moves": ["2D"], "can_pass": False}


def test_cards_may_be_a_list_of_one_card_strings_as_the_protocol_sends_them():
    listed = {"profile": "big-two", "hand": ["3D", "9S", "9D"], "table": ["9H", "9C"]}
    assert judge({**listed, "play": ["9S", "9D"]}) == {"legal": True, "combination": "pair"}
    assert judge({**listed, "play": "9s,9d"}) == {"legal": True, "combination": "pair"}
    assert moves(listed) == {"moves": ["9D 9S"], "can_pass": True}
    # As in the protocol, each entry is one card: "3D 3C" in one entry is unreadable.
    verdict = judge({"profile": "big-two", "play": ["3D 3C"]})
    assert verdict["legal"] is False and verdict["reason"] == "unparseable_card"
    assert judge({"profile": "big-two", "play": []})["reason"] == "empty_play"
    assert judge({"profile": "big-two", "play": ["9S", "9s"]})["reason"] == "duplicate_card"


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("hand", 5, '"hand" must be cards: one string such as "3D 3C" or a list'),
        ("table", {"cards": ["3C"]}, '"table" must be cards'),
        ("hand", ["3D", 4], '"hand": entry 2 is 4, not a card such as "3D"'),
        ("play", ["9S", None], '"play": entry 2 is null'),
        ("play", True, '"play" must be cards'),
    ],
)
def test_cards_of_another_type_get_a_clear_error(field: str, value: object, error: str) -> None:
    req = {"profile": "big-two", "play": "3D", field: value}
    with pytest.raises(RequestError) as info:
        judge(req)
    assert error in str(info.value)


def test_about_is_the_callers_own_and_is_ignored():
    req = {"profile": "big-two", "play": "3D", "about": {"turn_id": "7", "anything": [1, 2]}}
    assert judge(req) == {"legal": True, "combination": "single"}
