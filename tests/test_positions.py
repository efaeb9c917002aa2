"""``referee rules positions``: the positions a seat met in a log, as judge requests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from referee.log.positions import PositionsError, read_positions
from referee.protocol import common
from referee.protocol.convert import rules_pb
from referee.rules import Rules, parse_cards
from referee.rules.judge import judge, moves

ROOT = Path(__file__).resolve().parents[1]
REFEREE = [sys.executable, "-m", "referee.cli"]


def _entry(seq: int, **event: Any) -> dict[str, Any]:
    ev = common.Event(**event)
    return {
        "match_id": "m1",
        "seq": str(seq),
        "schema_version": 1,
        "event": json_format.MessageToDict(ev, preserving_proto_field_name=True),
    }


def _write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def scripted_log(path: Path) -> Path:
    """A short pusoy-dos hand with a revolution and a lone-2 rule that lapses.

    Seat 0 leads four 4s and the 3C (the revolution turns on); seats 1-3, each left with
    a lone 2, cannot answer; then the four lone 2s must pass on the lead once round the
    table, the rule lapses, and seat 0 goes out with its 2. Seat 1 first tries a card it
    does not hold; seat 2 times out.
    """
    rules = Rules.for_profile("pusoy-dos", {"revolution": True, "no_finish_on_lone_two": True})
    config = common.MatchConfig(rules=rules_pb(rules))
    hands = ["3C 4C 4S 4H 4D 2D", "2S", "2H", "2C"]
    seat_cards = [
        common.SeatCards(seat=s, cards=h.split(), count=len(h.split())) for s, h in enumerate(hands)
    ]

    def turn(t: int, seat: int) -> dict[str, Any]:
        return {"turn_started": common.TurnStarted(turn_id=t, seat=seat)}

    def passed(t: int, seat: int, **more: Any) -> dict[str, Any]:
        return {"passed": common.Passed(turn_id=t, seat=seat, **more)}

    events: list[dict[str, Any]] = [
        {"match_created": common.MatchCreated(config=config)},
        {"hand_dealt": common.HandDealt(hand_number=1, hands=seat_cards, must_include="3C")},
        turn(1, 0),
        {
            "played": common.Played(
                turn_id=1,
                play=common.Play(cards=["3C", "4C", "4S", "4H", "4D"]),
                revolution=True,
                cards_left=1,
            )
        },
        turn(2, 1),
        {
            "action_rejected": common.ActionRejected(
                turn_id=2, seat=1, cards=["9S"], reason=common.REJECTION_REASON_CARD_NOT_IN_HAND
            )
        },
        passed(2, 1),
        turn(3, 2),
        passed(3, 2, default_cause=common.DEFAULT_CAUSE_TIMEOUT, strikes=1),
        turn(4, 3),
        passed(4, 3),
        {"trick_cleared": common.TrickCleared(leader=0)},
        *(
            item
            for s, t in ((0, 5), (1, 6), (2, 7), (3, 8))
            for item in (turn(t, s), passed(t, s, forced_lead_pass=True))
        ),
        turn(9, 0),
        {"played": common.Played(turn_id=9, play=common.Play(cards=["2D"]))},
        {"hand_ended": common.HandEnded(hand_number=1)},
    ]
    return _write(path, [_entry(i, **e) for i, e in enumerate(events, start=1)])


def test_positions_carry_the_state_the_judge_needs_and_the_bots_answers(tmp_path: Path) -> None:
    _, seat0 = read_positions(scripted_log(tmp_path / "m1.jsonl"), 0)
    opts = {"no_finish_on_lone_two": True, "revolution": True}
    assert [p["about"]["turn_id"] for p in seat0] == [1, 5, 9]
    first, forced, last = seat0
    assert first == {
        "profile": "pusoy-dos",
        "options": opts,
        "hand": "3C 4C 4S 4H 4D 2D",
        "lead_must_include": "3C",
        "play": "3C 4C 4S 4H 4D",
        "about": {
            "match_id": "m1",
            "hand_number": 1,
            "turn_id": 1,
            "seat": 0,
            "answers": [{"play": "3C 4C 4S 4H 4D", "legal": True}],
        },
    }
    assert forced["revolution"] is True and "lone_two_rule" not in forced
    assert forced["play"] == "pass" and judge(forced) == {"legal": True}
    # After four forced passes the rule has lapsed: the position says so.
    assert last["lone_two_rule"] is False and last["revolution"] is True
    assert judge(last) == {"legal": True, "combination": "single"}
    assert judge({**last, "lone_two_rule": True})["reason"] == "lone_two_finish"


def test_rejected_answers_and_default_actions_are_kept(tmp_path: Path) -> None:
    log = scripted_log(tmp_path / "m1.jsonl")
    (seat1_first, _) = read_positions(log, 1)[1]
    assert seat1_first["table"] == "3C 4C 4S 4H 4D" and seat1_first["revolution"] is True
    assert seat1_first["play"] == "pass"
    assert seat1_first["about"]["answers"] == [
        {"play": "9S", "legal": False, "reason": "card_not_in_hand"},
        {"play": "pass", "legal": True},
    ]
    rejected = {**seat1_first, "play": "9S"}
    assert judge(rejected)["reason"] == "card_not_in_hand"
    (timed_out, _) = read_positions(log, 2)[1]
    assert "play" not in timed_out  # the bot gave no answer
    assert timed_out["about"]["default"] == "timeout" and timed_out["about"]["answers"] == []
    assert moves(timed_out) == {"moves": [], "can_pass": True}


def test_unknown_fields_and_event_kinds_of_newer_logs_are_skipped(tmp_path: Path) -> None:
    log = scripted_log(tmp_path / "m1.jsonl")
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    newer = []
    for e in entries:
        e["command"] = {"kind": "act", "seat": 0}
        newer.append(e)
        newer.append({**e, "event": {"table_formed": {"tables": 3}}, "command": {}})
    newer_log = _write(tmp_path / "newer.jsonl", newer)
    for seat in range(4):
        assert read_positions(newer_log, seat)[1] == read_positions(log, seat)[1]


def test_a_log_that_breaks_the_rules_is_an_error_naming_the_line(tmp_path: Path) -> None:
    log = scripted_log(tmp_path / "m1.jsonl")
    lines = log.read_text().splitlines()
    lines[3] = lines[3].replace('"3C"', '"5C"')  # seat 0 "plays" a card it does not hold
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(PositionsError, match="line 4: seat 0's action does not follow"):
        read_positions(bad, 1)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*REFEREE, *args], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )


def test_every_position_of_a_real_match_is_judged_as_the_referee_judged_it(
    tmp_path: Path,
) -> None:
    played = run_cli(
        "match",
        "--profile", "pusoy-dos-chips",
        "--hands", "2",
        "--seed", "positions",
        "--log-dir", str(tmp_path),
        "--bomb", "true",
        "--revolution", "true",
        "--bot", "greedy",
        "--bot", "clients/python/bot --misbehave",
        "--bot", "random",
        "--bot", "greedy",
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    (log,) = tmp_path.glob("*.jsonl")
    out = run_cli("rules", "positions", str(log), "--seat", "1")
    assert out.returncode == 0, out.stderr
    found = [json.loads(line) for line in out.stdout.splitlines()]
    prompts = [
        line
        for line in log.read_text().splitlines()
        if '"turn_started"' in line and json.loads(line)["event"]["turn_started"].get("seat") == 1
    ]
    assert len(found) == len(prompts) > 0
    rejected = 0
    for position in found:
        for answer in position["about"]["answers"]:
            verdict = judge({**position, "play": answer["play"]})
            assert verdict["legal"] is answer["legal"], (position, answer)
            if not answer["legal"]:
                rejected += 1
                assert verdict["reason"] == answer["reason"]
            else:
                listed = moves(position)
                assert (answer["play"] == "pass" and listed["can_pass"]) or any(
                    parse_cards(m) == parse_cards(answer["play"]) for m in listed["moves"]
                )
    assert rejected >= 1  # the misbehaving bot's wrong card in each hand


def test_the_command_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    missing = run_cli("rules", "positions", str(tmp_path / "none.jsonl"), "--seat", "0")
    assert missing.returncode == 1 and "none.jsonl" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_seat = run_cli("rules", "positions", str(tmp_path / "none.jsonl"), "--seat", "4")
    assert bad_seat.returncode == 2 and "a seat is 0, 1, 2 or 3" in bad_seat.stderr
    log = scripted_log(tmp_path / "m1.jsonl")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(log.read_text().splitlines(keepends=True)[:5]))
    partial = run_cli("rules", "positions", str(cut), "--seat", "1")
    assert partial.returncode == 0
    assert len(partial.stdout.splitlines()) == 1
    assert "incomplete" in partial.stderr
