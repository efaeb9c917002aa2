"""Unit tests of the Python client library: prompts in, actions out, no server."""

from __future__ import annotations

from google.protobuf import text_format

from pusoy_client import PASS, Bot
from pusoy_client.runner import _action
from pusoy_client.samples import GreedyBot, Misbehaving, RandomBot, not_held
from referee.protocol import play_service

PROMPT = """
turn_id: 7
seat: 2
hand: ["3D", "3C", "5H", "9S", "2S"]
legal_plays { cards: ["5H"] combination: COMBINATION_SINGLE }
legal_plays { cards: ["9S"] combination: COMBINATION_SINGLE }
legal_plays { cards: ["2S"] combination: COMBINATION_SINGLE }
can_pass: true
attempts_left: 3
state { hand_number: 1 table { cards: ["4H"] combination: COMBINATION_SINGLE } }
"""


def prompt(text: str = PROMPT) -> play_service.TurnPrompt:
    return text_format.Parse(text, play_service.TurnPrompt())


def test_a_prompt_parses_into_its_fields():
    p = prompt()
    assert p.turn_id == 7 and p.seat == 2 and p.can_pass and not p.is_lead
    assert [list(x.cards) for x in p.legal_plays] == [["5H"], ["9S"], ["2S"]]
    assert list(p.state.table.cards) == ["4H"]


def test_a_play_action_names_the_turn_and_the_cards():
    req = _action(7, ["9S", "9D"])
    assert req.WhichOneof("kind") == "action"
    assert req.action.turn_id == 7
    assert req.action.WhichOneof("kind") == "play"
    assert list(req.action.play.cards) == ["9S", "9D"]


def test_a_pass_action():
    for choice in (PASS, []):
        req = _action(8, choice)
        assert req.action.turn_id == 8 and req.action.WhichOneof("kind") == "pass"


def test_the_fallback_passes_when_allowed_else_plays_the_weakest():
    bot = Bot()
    assert bot.fallback(prompt()) is PASS
    lead = prompt(PROMPT.replace("can_pass: true", "can_pass: false"))
    assert bot.fallback(lead) == ["5H"]


def test_sample_bots_choose_legal_answers():
    p = prompt()
    assert GreedyBot().choose(p) == ["5H"]
    choices = {tuple(RandomBot(seed).choose(p) or ()) for seed in range(40)}
    assert choices == {(), ("5H",), ("9S",), ("2S",)}


def test_misbehaving_sends_a_card_it_does_not_hold_once_per_hand():
    bot = Misbehaving(GreedyBot())
    p = prompt()
    first = bot.choose(p)
    assert first == [not_held(p)] and first[0] not in p.hand
    assert first == ["3S"]
    assert bot.choose(p) == ["5H"]  # the same hand: plays normally
    p.state.hand_number = 2
    assert bot.choose(p) == ["3S"]
