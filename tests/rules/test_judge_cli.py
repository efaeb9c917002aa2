"""The real ``referee rules judge`` and ``referee rules moves`` commands, as subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REFEREE = Path(sys.executable).with_name("referee")


def run_command(command: str, lines: list[str], *, script: bool = False) -> list[dict[str, Any]]:
    """Feed JSON Lines to ``referee rules <command>``; one parsed answer per output line."""
    if script:
        argv = [str(REFEREE), "rules", command]
    else:
        argv = [sys.executable, "-m", "referee.cli", "rules", command]
    proc = subprocess.run(
        argv,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout.splitlines()
    return [json.loads(line) for line in out]


def request(**fields: Any) -> str:
    return json.dumps(fields, ensure_ascii=False)


def test_judge_answers_every_line_and_survives_bad_ones() -> None:
    lines = [
        request(profile="big-two", table="9H 9C", play="9S 9D"),
        "this is not json",
        request(profile="big-two", table="3D", play="9S 9D"),
        "",
        request(profile="no-such-game", play="3C"),
        request(profile="pusoy-dos", table="9H", play="9X"),
        "[1, 2, 3]",
        request(profile="pusoy-dos", play="pass"),
        request(profile="pusoy-dos", table="9H", play="PASS"),
        request(profile="big-two", play="3C 4D"),
        request(profile="big-two", table="9♥ 9♣", play="9♠ 9♦"),
        request(profile="pusoy-dos"),
        request(profile="pusoy-dos-chips", table="5C 6S 7H 8D 9C", play="3H 5H 6H 9H JH"),
        request(profile="pusoy-dos", hand="3C 4C", play="3C 4D"),
        request(profile="pusoy-dos", hand="3C 4C", lead_must_include="3C", play="4C"),
        request(profile="big-two", play="3D 3D"),
        request(profile="pusoy-dos", options={"no_such_option": True}, play="3C"),
        request(profile="pusoy-dos", options={"straights": "none-with-two"}, play="AC 2D 3C 4C 5C"),
        request(
            profile="pusoy-dos",
            options={"no_finish_on_lone_two": True},
            hand="2D",
            play="2D",
        ),
    ]
    answers = run_command("judge", lines)
    assert len(answers) == len([line for line in lines if line.strip()])
    (
        good,
        not_json,
        wrong_count,
        unknown_profile,
        bad_card,
        not_object,
        pass_on_lead,
        pass_on_table,
        no_play,
        unicode_pair,
        missing_play,
        locked,
        not_in_hand,
        missing_opening,
        duplicate,
        unknown_option,
        no_straight,
        lone_two,
    ) = answers
    assert good == {"legal": True, "combination": "pair"}
    assert set(not_json) == {"error"} and "JSON" in not_json["error"]
    # The line after the bad one is still answered.
    assert wrong_count["legal"] is False
    assert wrong_count["reason"] == "wrong_card_count"
    assert wrong_count["combination"] == "pair"
    assert wrong_count["message"]
    assert set(unknown_profile) == {"error"} and "no-such-game" in unknown_profile["error"]
    assert bad_card["legal"] is False and bad_card["reason"] == "unparseable_card"
    assert "9X" in bad_card["message"]
    assert set(not_object) == {"error"}
    assert pass_on_lead["legal"] is False and pass_on_lead["reason"] == "pass_on_lead"
    assert pass_on_table == {"legal": True}
    assert no_play["legal"] is False and no_play["reason"] == "not_a_combination"
    assert "combination" not in no_play
    assert unicode_pair == {"legal": True, "combination": "pair"}
    assert set(missing_play) == {"error"} and "play" in missing_play["error"]
    assert locked["legal"] is False and locked["reason"] == "does_not_beat"
    assert locked["combination"] == "flush"
    assert not_in_hand["legal"] is False and not_in_hand["reason"] == "card_not_in_hand"
    assert "4D" in not_in_hand["message"]
    assert missing_opening["reason"] == "missing_opening_card"
    assert duplicate["legal"] is False and duplicate["reason"] == "duplicate_card"
    assert set(unknown_option) == {"error"} and "no_such_option" in unknown_option["error"]
    assert no_straight["legal"] is False and no_straight["reason"] == "not_a_combination"
    assert lone_two["legal"] is False and lone_two["reason"] == "lone_two_finish"


def test_moves_lists_legal_plays_in_stable_order_and_survives_bad_lines() -> None:
    lines = [
        request(profile="big-two", hand="3D 3C 4H", lead_must_include="3D"),
        "{broken",
        request(profile="pusoy-dos", hand="3C 9S 9D 2D", table="9H"),
        request(profile="pusoy-dos", table="9H"),
        request(profile="big-two", hand="3D 4D", table="3C 4C"),
        request(profile="pusoy-dos", hand="3c 3d 3h", options={"five_card_hands": False}),
        request(profile="pusoy-dos-chips", hand="2D", options={"no_finish_on_lone_two": True}),
        request(profile="big-two", hand="3D 4D 5D 6D 7D 7S", table="3C 4C 5H 6H 7C"),
    ]
    answers = run_command("moves", lines)
    assert len(answers) == len(lines)
    (lead, broken, answer, no_hand, bad_table, triples, lone_two, fives) = answers
    assert lead == {"moves": ["3D", "3D 3C"], "can_pass": False}
    assert set(broken) == {"error"}
    assert answer == {"moves": ["9D", "2D"], "can_pass": True}
    assert set(no_hand) == {"error"} and "hand" in no_hand["error"]
    assert set(bad_table) == {"error"} and "table" in bad_table["error"]
    assert triples == {
        "moves": ["3C", "3H", "3D", "3C 3H", "3C 3D", "3H 3D", "3C 3H 3D"],
        "can_pass": False,
    }
    assert lone_two == {"moves": [], "can_pass": True}
    # A higher straight (7♠ above 7♣) and the straight flush answer it, weakest first.
    assert fives["can_pass"] is True
    assert fives["moves"] == ["3D 4D 5D 6D 7S", "3D 4D 5D 6D 7D"]


@pytest.mark.skipif(not REFEREE.exists(), reason="the referee script is not installed")
def test_the_installed_referee_command() -> None:
    answers = run_command(
        "judge", [request(profile="big-two", table="9H 9C", play="9S 9D")], script=True
    )
    assert answers == [{"legal": True, "combination": "pair"}]
    answers = run_command(
        "moves", [request(profile="big-two", hand="3D 3C 4H", lead_must_include="3D")], script=True
    )
    assert answers == [{"moves": ["3D", "3D 3C"], "can_pass": False}]
