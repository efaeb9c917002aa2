"""Judge requests that describe no real position are errors; a revolution can be given."""

from __future__ import annotations

import pytest

from referee.judge import RequestError, judge, moves


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
