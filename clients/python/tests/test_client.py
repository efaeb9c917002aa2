"""Unit tests of the Python client library: prompts in, actions out, no server."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from google.protobuf import text_format

from pusoy_client import PASS, Bot, Budget, Prompt, fallback
from pusoy_client.runner import RAISED_MARKER, _action, raised_line
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
turn_time_ms: 2000
time_bank_ms: 500
state { hand_number: 1 table { cards: ["4H"] combination: COMBINATION_SINGLE } }
"""


def message(text: str = PROMPT) -> play_service.TurnPrompt:
    return text_format.Parse(text, play_service.TurnPrompt())


def prompt(text: str = PROMPT) -> Prompt:
    return Prompt(message(text))


def test_a_prompt_view_keeps_the_message_fields():
    p = prompt()
    assert p.turn_id == 7 and p.seat == 2 and p.can_pass and not p.is_lead
    assert [list(x.cards) for x in p.legal_plays] == [["5H"], ["9S"], ["2S"]]
    assert list(p.table) == ["4H"] and p.hand_number == 1


def test_a_play_action_names_the_turn_and_the_cards():
    req = _action(7, ["9S", "9D"])
    assert req.WhichOneof("kind") == "action"
    assert req.action.turn_id == 7
    assert req.action.WhichOneof("kind") == "play"
    assert list(req.action.play.cards) == ["9S", "9D"]
    assert list(_action(7, "9S 9D").action.play.cards) == ["9S", "9D"]


def test_a_pass_action():
    for choice in (PASS, []):
        req = _action(8, choice)
        assert req.action.turn_id == 8 and req.action.WhichOneof("kind") == "pass"


def test_the_fallback():
    assert fallback(prompt()) is PASS
    lead = prompt(PROMPT.replace("can_pass: true", "can_pass: false"))
    assert fallback(lead) == ["5H"]
    bare = message("can_pass: false hand: ['5D', '9S'] state { must_include: '9S' }")
    assert fallback(bare) == ["9S"]  # the opening card when one is required
    bare.state.must_include = ""
    assert fallback(bare) == ["5D"]  # else the lowest card
    assert Bot().on_rejected(lead, None) == ["5H"]  # type: ignore[arg-type]


def test_the_budget_is_the_turn_time_plus_the_bank_less_the_margin():
    m = message()
    now_wall, now_mono = time.time(), time.monotonic()
    m.deadline.FromNanoseconds(int((now_wall + 2.0) * 1e9))
    b = Budget.for_prompt(m, received=now_mono, wall_now=now_wall, safety_margin_s=0.05)
    assert abs(b.deadline - (now_mono + 2.0 + 0.5 - 0.05)) < 1e-6
    # A deadline far ahead (our clock behind the referee's): the turn time bounds it.
    m.deadline.FromNanoseconds(int((now_wall + 60) * 1e9))
    b = Budget.for_prompt(m, received=now_mono, wall_now=now_wall, use_time_bank=False)
    assert abs(b.deadline - (now_mono + 2.0 - 0.05)) < 1e-6
    # A deadline already past (our clock ahead): only the bank is left.
    m.deadline.FromNanoseconds(int((now_wall - 5) * 1e9))
    b = Budget.for_prompt(m, received=now_mono, wall_now=now_wall)
    assert abs(b.deadline - (now_mono + 0.5 - 0.05)) < 1e-6


BUDGET_UNDER_TZ = """
import time
from google.protobuf import text_format
from pusoy_client import Budget
from pusoy_client.protocol import play_service
m = play_service.TurnPrompt(turn_time_ms=60000)
wall = time.time()
m.deadline.FromNanoseconds(int((wall + 2.0) * 1e9))
b = Budget.for_prompt(m, received=time.monotonic(), wall_now=wall, safety_margin_s=0)
print(round(b.remaining(), 1), time.strftime("%z"))
"""


def test_the_budget_does_not_depend_on_the_time_zone():
    """The deadline is UTC: reading it as local time moved the cutoff by hours off UTC."""
    for tz in ("Asia/Manila", "America/Los_Angeles", "UTC"):
        done = subprocess.run(
            [sys.executable, "-c", BUDGET_UNDER_TZ],
            env={**os.environ, "TZ": tz},
            capture_output=True,
            text=True,
            check=True,
        )
        remaining, offset = done.stdout.split()
        assert 1.8 <= float(remaining) <= 2.0, (tz, offset, remaining)
    assert offset == "+0000"


def test_sample_bots_choose_legal_answers():
    p = prompt()
    assert GreedyBot().choose(p) == ["5H"]
    choices = {tuple(RandomBot(seed).choose(p) or ()) for seed in range(40)}
    assert choices == {(), ("5H",), ("9S",), ("2S",)}
    no_plays = Prompt(message("can_pass: true hand: ['3C']"))  # a pass is all there is
    assert GreedyBot().choose(no_plays) is PASS and RandomBot().choose(no_plays) is PASS


def test_misbehaving_sends_a_card_it_does_not_hold_once_per_hand():
    bot = Misbehaving(GreedyBot())
    p = prompt()
    first = bot.choose(p)
    assert first == [not_held(p)] and first[0] not in p.hand
    assert first == ["3S"]
    assert bot.choose(p) == ["5H"]  # the same hand: plays normally
    p.message.state.hand_number = 2
    assert bot.choose(p) == ["3S"]


def test_batched_events_are_asked_for_by_flag_or_environment():
    from pusoy_client.options import from_command_line

    base = {"PUSOY_TOKEN": "t"}
    assert not from_command_line([], base)[0].batch_events
    assert from_command_line(["--batch-events"], base)[0].batch_events
    assert from_command_line([], {**base, "PUSOY_BATCH_EVENTS": "1"})[0].batch_events
    assert not from_command_line([], {**base, "PUSOY_BATCH_EVENTS": "0"})[0].batch_events


def test_the_raised_marker_is_one_bounded_line_naming_the_turn_call_and_error():
    """docs/kits.md, section 5: the line the referee finds in a bot's output."""
    assert RAISED_MARKER == "PUSOY_BOT_RAISED"
    line = raised_line(14, "choose", ZeroDivisionError("division by zero"))
    assert line == "PUSOY_BOT_RAISED turn=14 call=choose error=ZeroDivisionError: division by zero"
    assert raised_line(3, "on_rejected", KeyError()).endswith("call=on_rejected error=KeyError")
    long = raised_line(1, "choose", RuntimeError("x\ny\r\tz" + "w" * 500))
    assert "\n" not in long and "\r" not in long and "\t" not in long
    assert long.startswith("PUSOY_BOT_RAISED turn=1 call=choose error=RuntimeError: x y  z")
    assert len(long.split(" error=", 1)[1]) == 200
