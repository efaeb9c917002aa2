"""The stdio line protocol without processes: what each answer line becomes, whose turn."""

from __future__ import annotations

import json

import pytest

from referee.protocol import common, play_service
from referee.stdio import bridge_argv, program_name
from referee.stdio.lines import Owed, encode, parse_answer


@pytest.mark.parametrize(
    ("line", "cards", "turn_id"),
    [
        (b"5D 5C", ("5D", "5C"), 0),
        (b"  5d,5c \r", ("5d", "5c"), 0),  # the referee reads any case; commas split too
        (b"10H", ("10H",), 0),
        (b"pass", None, 0),
        (b"Pass", None, 0),
        (b"", (), 0),  # an empty play: the referee answers EMPTY_PLAY
        (b"hello world", ("hello", "world"), 0),  # unreadable cards: UNPARSEABLE_CARD
        (b'["5D", "5C"]', ("5D", "5C"), 0),
        (b"[]", (), 0),
        (b'{"action": {"turn_id": "6", "play": {"cards": ["5D"]}}}', ("5D",), 6),
        (b'{"turn_id": 7, "pass": {}}', None, 7),
        (b'{"pass": {}}', None, 0),
        (b'{"play": {"cards": []}}', (), 0),
    ],
)
def test_answers(line, cards, turn_id):
    answer = parse_answer(line)
    assert answer.malformed == ""
    assert answer.cards == cards
    assert answer.turn_id == turn_id


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe 3D", "not UTF-8"),
        (b'{"action": {"turn_id": "1", "bogus": 1}}', "not an Action"),
        (b'{"turn_id": "x", "pass": {}}', "not an Action"),
        (b'{"turn_id": 3}', "neither a play nor a pass"),
        (b"[1, 2]", "card strings only"),
        (b'{"hello": {"token": "x"}}', "not an Action"),
    ],
)
def test_malformed_lines_say_why(line, why):
    answer = parse_answer(line)
    assert why in answer.malformed
    action = answer.action(12)
    assert action.turn_id == 12 and action.WhichOneof("kind") is None  # MALFORMED_ACTION


def test_a_json_string_line_is_text():
    # '"3D"' does not start with { or [: it is the text form, one unreadable card.
    assert parse_answer(b'"3D"').cards == ('"3D"',)


def test_actions_for_the_referee():
    play = parse_answer(b"5D 5C").action(9)
    assert play.turn_id == 9 and list(play.play.cards) == ["5D", "5C"]
    passed = parse_answer(b"pass").action(9)
    assert passed.WhichOneof("kind") == "pass"
    empty = parse_answer(b"").action(9)
    assert empty.WhichOneof("kind") == "play" and not empty.play.cards
    named = parse_answer(b'{"turn_id": "4", "pass": {}}').action(9)
    assert named.turn_id == 4  # the bot's own turn id wins


def test_lines_to_the_bot_are_compact_one_key_objects():
    msg = play_service.PlayResponse(
        prompt=play_service.TurnPrompt(
            turn_id=2**40,
            hand=["3D", "2S"],
            legal_plays=[common.Play(cards=["3D"], combination=common.COMBINATION_SINGLE)],
            can_pass=False,
        )
    )
    line = encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.startswith(b'{"prompt":{') and b": " not in line and b", " not in line
    data = json.loads(line)
    assert list(data) == ["prompt"]
    assert data["prompt"]["turn_id"] == str(2**40)  # 64-bit integers are strings
    assert "can_pass" not in data["prompt"]  # zero values are left out, as on the wire
    assert data["prompt"]["legal_plays"][0]["combination"] == "COMBINATION_SINGLE"
    unicode = encode(play_service.PlayResponse(welcome=play_service.Welcome(match_id="ä")))
    assert "ä".encode() in unicode  # UTF-8, not escaped


def test_owed_turns_keep_a_late_bot_in_step():
    owed = Owed()
    assert owed.take() == 0  # nothing prompted yet
    owed.prompted(6)
    owed.prompted(10)  # turn 6 timed out; the bot has not answered it yet
    assert owed.take() == 6  # its late answer is judged as turn 6's (stale)
    owed.sent(6)
    owed.judged(6, accepted=False, attempts_left=2)  # not the current turn: nothing owed
    assert owed.take() == 10
    owed.sent(10)
    assert owed.take() == 10  # more lines than prompts: sent for the latest
    owed.sent(10)
    owed.judged(10, accepted=False, attempts_left=2)  # the bot sent a second line already
    assert len(owed) == 0
    owed.judged(10, accepted=False, attempts_left=1)  # the second line was rejected too
    assert owed.take() == 10
    owed.sent(10)
    owed.judged(10, accepted=False, attempts_left=0)  # the referee played the default
    assert len(owed) == 0


def test_a_bot_that_answers_each_rejection_is_asked_again():
    owed = Owed()
    owed.prompted(3)
    for attempts_left in (2, 1):
        assert owed.take() == 3
        owed.sent(3)
        owed.judged(3, accepted=False, attempts_left=attempts_left)
    assert owed.take() == 3
    owed.sent(3)
    owed.judged(3, accepted=True, attempts_left=1)
    assert len(owed) == 0


def test_turns_prompted_on_a_lost_stream_are_not_answered():
    owed = Owed()
    owed.prompted(7)  # then a drill closes the stream: the referee defaults turn 7
    owed.new_stream()
    owed.prompted(11)
    assert owed.take() == -7  # the bot's answer to 7 is dropped, not judged stale in 11
    assert owed.take() == 11


def test_a_named_turn_settles_older_ones():
    owed = Owed()
    for t in (3, 7, 11):
        owed.prompted(t)
    owed.answered(7)
    assert owed.take() == 11


def test_owed_turns_are_bounded():
    owed = Owed(limit=4)
    for t in range(1, 101):
        owed.prompted(t)
    assert len(owed) == 4 and owed.take() == 97


def test_program_names_and_the_bridge_command():
    assert program_name(["perl", "clients/stdio/perl/bot.pl", "--misbehave"]) == "bot.pl"
    assert program_name(["./build/bot"]) == "bot"
    assert program_name(["python3", "-u", "bot.py"]) == "bot.py"
    argv = bridge_argv(["./bot", "--fast"], name="mine", python="py")
    assert argv[:4] == ["py", "-m", "referee.cli", "stdio-bot"]
    assert argv[-3:] == ["--", "./bot", "--fast"]
