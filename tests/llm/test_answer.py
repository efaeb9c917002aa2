"""The tolerant reading of a model's answer, and the schema of constrained answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.llm.answer import MAX_ANSWER_CHARS, ParseFault, move_schema, parse_answer


@pytest.mark.parametrize(
    ("text", "cards", "path"),
    [
        ('{"play": ["3D", "3S"]}', ("3D", "3S"), "json"),
        ('```json\n{"play": ["3s","3d"]}\n```', ("3S", "3D"), "json"),
        ('{"play": "10H 10S"}', ("TH", "TS"), "json"),
        ('{"pass": true}', None, "json"),
        ('{"play": []}', None, "json"),
        ('{"play": "pass"}', None, "json"),
        ("I think low is best.\nFinal Answer: 4♣ 4♦", ("4C", "4D"), "final-answer"),
        ("final answer: PASS", None, "final-answer"),
        ("Final Answer: **QH**", ("QH",), "final-answer"),
        ("my move: [10♥, 10♠]", ("TH", "TS"), "bracket"),
        ("[pass]", None, "bracket"),
        ('first {"play": ["5C"]} then, better: {"play": ["6C"]}', ("6C",), "json"),
        ('<think>maybe {"play": ["2S"]}</think>{"pass": true}', None, "json"),
    ],
)
def test_every_documented_form_reads(text, cards, path):
    answer = parse_answer(text)
    assert (answer.cards, answer.path) == (cards, path)


def test_json_wins_over_a_final_answer_line_and_a_bracket():
    assert parse_answer('[3C] Final Answer: 4C {"play": ["5C"]}').cards == ("5C",)
    assert parse_answer("[3C] then Final Answer: 4C").cards == ("4C",)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "I am not sure what to do.",
        '{"play": 5}',
        "Final Answer: the best card",
        '<think>{"play": ["3C"]}</think>',
    ],
)
def test_no_move_is_a_parse_fault_that_says_how_to_answer(text):
    with pytest.raises(ParseFault) as err:
        parse_answer(text)
    assert str(err.value)


def test_a_very_long_answer_is_read_from_its_end_only():
    answer = parse_answer("x" * (MAX_ANSWER_CHARS * 5) + '{"play": ["7H"]}')
    assert answer.cards == ("7H",)


def test_too_many_cards_is_a_fault():
    with pytest.raises(ParseFault, match="14 cards"):
        parse_answer("Final Answer: " + " ".join(["3C"] * 14))


@given(st.text(max_size=300))
def test_any_text_gives_an_answer_or_a_parse_fault(text):
    try:
        answer = parse_answer(text)
    except ParseFault:
        return
    assert answer.cards is None or 1 <= len(answer.cards) <= 13
    for card in answer.cards or ():
        assert card[0] in "3456789TJQKA2" and card[1] in "CDHS"


def test_the_schema_allows_exactly_the_legal_moves():
    schema = move_schema([["3C"], ["3C", "3S"]], can_pass=True)
    plays, passing = schema["anyOf"]
    assert plays["properties"]["play"]["enum"] == [["3C"], ["3C", "3S"]]
    assert passing["properties"]["pass"] == {"const": True}
    assert len(move_schema([["3C"]], can_pass=False)["anyOf"]) == 1
