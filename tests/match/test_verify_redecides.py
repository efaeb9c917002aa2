"""``referee verify`` decides every logged command again: a forged log is caught at the
first line that differs from what the referee would have done, even when every line is
well formed and the hash chain is recomputed, and no crafted field makes it crash."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from sim import MS, T0, Sim, settings, write_log

from referee.log.verify import verify_log


def played_match(tmp_path: Path, **kw: Any) -> list[dict[str, Any]]:
    """A finished two-hand match with a timeout, a rejected attempt and a strike."""
    sim = Sim(settings("pusoy-dos", hands=2, turn_time_ms=1000, **kw))
    sim.connect_all(T0)
    t = T0
    first = True
    while not sim.state.over:
        turn = sim.turn
        t += 10 * MS
        if first:  # the first seat times out once, then tries a card it does not hold
            sim.tick(turn.deadline + 1)
            t = sim.state.clock
            first = False
            continue
        if turn.turn_id == 5:
            sim.act(turn.seat, t, [sim.unheld(turn.seat)])
            t += 1
        sim.act(turn.seat, t, sim.lowest())
    path = tmp_path / "played.jsonl"
    write_log(sim, path)
    assert verify_log(path).ok
    return [json.loads(line) for line in path.read_text().splitlines()]


def forge(entries: list[dict[str, Any]], tmp_path: Path) -> Path:
    """Write entries as a log with its hash chain recomputed, as a forger would."""
    prev = ""
    out = []
    for i, e in enumerate(entries, start=1):
        e["seq"] = str(i)
        e.pop("prev_hash", None)
        if prev:
            e["prev_hash"] = prev
        line = json.dumps(e, separators=(",", ":"), ensure_ascii=False)
        prev = hashlib.sha256(line.encode()).hexdigest()
        out.append(line + "\n")
    path = tmp_path / "forged.jsonl"
    path.write_text("".join(out))
    return path


def find(entries: list[dict[str, Any]], kind: str, pred: Any = lambda body: True) -> int:
    return next(i for i, e in enumerate(entries) if kind in e["event"] and pred(e["event"][kind]))


def test_a_prompt_to_the_wrong_seat_is_caught(tmp_path):
    entries = played_match(tmp_path)
    i = find(entries, "turn_started", lambda b: b.get("turn_id") == "7")
    entries[i]["event"]["turn_started"]["seat"] = (
        entries[i]["event"]["turn_started"].get("seat", 0) + 1
    ) % 4
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok and report.line == i + 1
    assert "turn_started" in (report.problem or "")


def test_a_default_action_with_the_wrong_cause_is_caught(tmp_path):
    entries = played_match(tmp_path)
    i = find(entries, "played", lambda b: b.get("default_cause") == "DEFAULT_CAUSE_TIMEOUT")
    entries[i]["event"]["played"]["default_cause"] = "DEFAULT_CAUSE_DISCONNECTED"
    entries[i]["event"]["played"].pop("strikes", None)
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok and report.line == i + 1


def test_a_missing_strike_is_caught(tmp_path):
    entries = played_match(tmp_path)
    i = next(
        i
        for i, e in enumerate(entries)
        for kind in ("played", "passed")
        if kind in e["event"] and e["event"][kind].get("strikes")
    )
    kind = "played" if "played" in entries[i]["event"] else "passed"
    entries[i]["event"][kind].pop("strikes")
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok and report.line == i + 1


def test_a_late_answer_logged_as_accepted_is_caught(tmp_path):
    entries = played_match(tmp_path)
    i = find(entries, "played", lambda b: b.get("turn_id") == "9")
    t = entries[i]["time"]
    # move the decision (and what follows it in the same decision) 2 s later: past the deadline
    late = t[:17] + f"{int(t[17:19]) + 2:02d}" + t[19:]
    j = i
    while j < len(entries) and entries[j]["time"] == t:
        entries[j]["time"] = late
        j += 1
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok and report.line == i + 1


def test_an_event_removed_from_a_decision_is_caught(tmp_path):
    entries = played_match(tmp_path)
    i = find(entries, "trick_cleared")
    del entries[i]
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok and report.line == i + 1


def test_a_rechained_rewrite_into_a_shorter_cancelled_match_is_caught(tmp_path):
    entries = played_match(tmp_path)
    first_end = find(entries, "hand_ended")
    ended = entries[-1]
    ended["event"]["match_ended"]["status"] = "MATCH_STATUS_CANCELLED"
    ended["event"]["match_ended"]["cancel_reason"] = "rewritten"
    kept = [*entries[: first_end + 1], ended]
    report = verify_log(forge(kept, tmp_path))
    assert not report.ok


@pytest.mark.parametrize(
    "where, value",
    [
        (("event", "action_rejected", "seat"), 7),
        (("command", "action", "seat"), 7),
        (("command", "connect", "seat"), 9),
        (("event", "played", "play", "cards"), ["ZZ", "3D"]),
        (("event", "played", "turn_id"), "18446744073709551615"),
        (("command", "action", "cards"), ["X" * 5000]),
        (("time",), "1970-01-01T00:00:00Z"),
    ],
)
def test_a_crafted_field_is_a_failed_line_never_a_crash(tmp_path, where, value):
    entries = played_match(tmp_path)
    kind = where[1] if where[0] in ("event", "command") else None
    index = 5
    if kind is not None:
        index = next(
            i
            for i, e in enumerate(entries)
            if kind in e.get(where[0], {}) and "pass" not in e[where[0]][kind]
        )
    node = entries[index]
    for key in where[:-1]:
        node = node.setdefault(key, {})
    node[where[-1]] = value
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok
    assert report.line is not None and report.line <= index + 1


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "v1"


@pytest.mark.parametrize("log", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_logs_written_before_commands_were_logged_still_verify(log):
    report = verify_log(log)
    assert report.ok, report.summary()


def test_a_crafted_schema_1_rejection_naming_seat_7_is_a_failed_line(tmp_path):
    log = next(p for p in sorted(FIXTURES.glob("*.jsonl")) if "action_rejected" in p.read_text())
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    i = find(entries, "action_rejected")
    entries[i]["event"]["action_rejected"]["seat"] = 7
    report = verify_log(forge(entries, tmp_path))
    assert not report.ok and report.line == i + 1
