"""A model seat at a real referee (in-process server, real gRPC, real log), its model a
scripted endpoint: the retries a unit test can pin down. Unreadable answers are asked
again and counted; an illegal move goes to the referee and its reason back to the model;
provider failures make the seat send the default itself; every action is bound to its
trace line, which ``referee verify`` checks. The real model plays in test_real_model.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedEndpoint, chat

from referee.llm.player import EndpointPause
from referee.log.traces import trace_path, verify_traces
from referee.log.verify import verify_log
from referee.match.settings import MatchSettings, match_rules
from referee.table.bots import BuiltinBot, Seat
from referee.table.models import ModelSeatError, release_traces
from referee.table.table import MatchReport
from referee.table.table import play_match as play_table


def settings_file(tmp_path: Path, url: str, **extra: str) -> Path:
    path = tmp_path / "model.toml"
    lines = [
        'name = "scripted"',
        "[endpoint]",
        f'url = "{url}"',
        'model = "scripted-1"',
        "backoff_s = 0.01",
        "retries = 1",
        "[prompt]",
        'format = "json"',
        "[clock]",
        "turn_time_ms = 20000",
        *[f"{k} = {v}" for k, v in extra.items()],
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def with_key_env(model: Path) -> None:
    text = model.read_text().replace("[prompt]", 'api_key_env = "PUSOY_TEST_KEY"\n[prompt]')
    model.write_text(text)


def state_of(body: dict[str, Any]) -> dict[str, Any]:
    """The seat's view (format json) in the request's first user message."""
    user = next(m for m in body["messages"] if m["role"] == "user")
    return json.loads(user["content"].split("\n\nYour move?")[0])


def legal(body: dict[str, Any]) -> tuple[int, Any]:
    view = state_of(body)
    plays = view.get("legal_plays") or []
    return chat(json.dumps({"play": plays[0]} if plays and view["lead"] else {"pass": True}))


def misbehaving(body: dict[str, Any]) -> tuple[int, Any]:
    """First a word salad, then four cards (never a play), then a legal move."""
    last = body["messages"][-1]["content"]
    if last.endswith("Your move?") and "not accepted" not in last:
        return chat("Let me think about this carefully.")
    if "no play found" in last:
        view = state_of(body)
        four = view["your_cards"][:4] if len(view["your_cards"]) >= 4 else view["your_cards"] * 4
        return chat(json.dumps({"play": four[:4]}))
    return legal(body)


def seats(model: Path) -> list[Seat]:
    return [Seat("m", BuiltinBot(f"llm:{model}"))] + [
        Seat(f"g{i}", BuiltinBot("greedy")) for i in range(1, 4)
    ]


async def play_match(*args: Any, **kw: Any) -> MatchReport:
    """``referee match``'s match: its traces released at its end (its own deal group)."""
    report = await play_table(*args, **kw)
    release_traces(report.log_path, report.traces)
    return report


def match(**kw: Any) -> MatchSettings:
    return MatchSettings(match_rules("pusoy-dos", hands=1), seed="llm-seat", **kw)


async def test_faults_are_sent_back_with_their_reasons_and_the_trace_is_bound(tmp_path):
    async with ScriptedEndpoint([misbehaving]) as ep:
        model = settings_file(tmp_path, ep.url)
        report = await play_match(match(), seats(model), log_dir=tmp_path / "logs")
    assert report.finished
    assert report.settings.turn_time_for(0) == 20000  # the model's own clock
    assert report.settings.turn_time_for(1) == 5000
    trace = trace_path(report.log_path, 0)
    assert trace.exists() and oct(trace.stat().st_mode & 0o777) == "0o600"
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    first_turn = [r for r in records if r["turn_id"] == records[0]["turn_id"]]
    # the first action of a turn followed an unreadable answer, the second a rejection
    assert "parse_fault" in first_turn[0]["calls"][0]
    assert first_turn[0]["calls"][1]["feedback"].startswith("no play found")
    assert len(first_turn[0]["action"]["play"]) == 4
    reason = first_turn[1]["calls"][0]["feedback"]
    assert reason and "not accepted" not in reason  # the referee's own words
    retry = first_turn[1]["calls"][0]["messages"][-1]["content"]
    assert f"That move was not accepted: {reason}" in retry
    assert verify_log(report.log_path).ok
    [check] = verify_traces(report.log_path)
    assert check.problem is None and check.lines == len(records)
    # the replay embeds the trace at the model's moves, with its results clean beside raw
    from referee.view.fold import fold_log
    from referee.view.page import replay_data
    from referee.view.traces import traces_beside

    data = replay_data(
        fold_log(report.log_path),
        verify_log(report.log_path),
        traces=traces_beside(report.log_path),
        log=report.log_path,
    )
    seat0 = data["traces"]["seats"][0]
    assert seat0["summary"]["rejections"] >= 1 and seat0["summary"]["parse_faults"] >= 1
    assert seat0["summary"]["clean_hands"] == 0 and seat0["summary"]["hands"] == 1
    shown = [line for _, lines in seat0["moves"] for line in lines]
    assert shown[0]["calls"][0]["said"] == "Let me think about this carefully."
    # nobody saw another seat's cards: the prompts hold only seat 0's hand
    log = [json.loads(line) for line in report.log_path.read_text().splitlines()[:-1]]
    dealt = next(e["event"]["hand_dealt"] for e in log if "hand_dealt" in e["event"])
    others = {c for h in dealt["hands"][1:] for c in h["cards"]}
    for r in records:
        for call in r["calls"]:
            seen = set(state_of({"messages": call["messages"]})["your_cards"])
            assert not seen & others


def run_verify(cli: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli, capture_output=True, text=True, check=False)


async def test_a_changed_added_or_dropped_trace_line_fails_verify(tmp_path):
    async with ScriptedEndpoint([legal]) as ep:
        model = settings_file(tmp_path, ep.url)
        report = await play_match(match(), seats(model), log_dir=tmp_path / "logs")
    trace = trace_path(report.log_path, 0)
    lines = trace.read_text().splitlines(keepends=True)
    cli = [sys.executable, "-m", "referee.cli", "verify", str(report.log_path)]
    assert (await asyncio.to_thread(run_verify, cli)).returncode == 0
    for tampered in (
        [lines[0].replace('"scripted-1"', '"scripted-2"'), *lines[1:]],
        lines[:-1],
        [*lines, lines[-1]],
        [lines[1], lines[0], *lines[2:]],
    ):
        trace.write_text("".join(tampered))
        done = await asyncio.to_thread(run_verify, cli)
        assert done.returncode == 1, done.stdout
        assert "FAILED: trace of seat 0" in done.stdout


async def test_a_slow_trace_write_keeps_the_lines_in_the_order_of_their_actions(
    tmp_path, monkeypatch
):
    """The first line's write (fsync on a busy disk) outlasts the other seats' moves: the
    next prompt cancels the turn while its line is still being written, and the next
    action's line must still come after it."""
    from referee.llm.trace import TraceWriter

    append = TraceWriter.append
    first = [True]

    def slow_first(self: TraceWriter, line: bytes) -> None:
        if first[0]:
            first[0] = False
            time.sleep(0.5)
        append(self, line)

    monkeypatch.setattr(TraceWriter, "append", slow_first)
    async with ScriptedEndpoint([legal]) as ep:
        model = settings_file(tmp_path, ep.url)
        report = await play_match(match(), seats(model), log_dir=tmp_path / "logs")
    checks = verify_traces(report.log_path)
    assert [c.problem for c in checks if c.seat == 0] == [None], checks


async def test_provider_failures_end_in_the_seats_own_default_move(tmp_path):
    async with ScriptedEndpoint([(503, {"error": {"message": "overloaded"}})]) as ep:
        model = settings_file(tmp_path, ep.url)
        with model.open("a") as f:
            f.write("[limits]\npause_after_failures = 0\n")  # ask at every move
        report = await play_match(match(), seats(model), log_dir=tmp_path / "logs")
    assert report.finished
    records = [json.loads(x) for x in trace_path(report.log_path, 0).read_text().splitlines()]
    assert records and all(r["source"] == "fallback" and r["fault"] == "provider" for r in records)
    assert "overloaded" in records[0]["calls"][0]["provider_error"]
    assert len(ep.requests) == 2 * len(records)  # each move asked, and retried once
    assert verify_log(report.log_path).ok


async def test_a_dead_endpoint_is_paused_instead_of_slowing_every_move(tmp_path):
    """Three questions in a row failed (the default): the seat stops asking for a minute
    and plays its own default at once, each such move marked in the trace."""
    async with ScriptedEndpoint([(503, {"error": {"message": "overloaded"}})]) as ep:
        model = settings_file(tmp_path, ep.url)
        report = await play_match(match(), seats(model), log_dir=tmp_path / "logs")
    assert report.finished
    records = [json.loads(x) for x in trace_path(report.log_path, 0).read_text().splitlines()]
    assert len(records) > 3
    assert [r["fault"] for r in records[:3]] == ["provider"] * 3
    assert records[2]["calls"][-1]["pause_s"] == 60
    assert all(r["source"] == "fallback" and r["fault"] == "paused" for r in records[3:])
    assert "failed 3 questions in a row" in records[3]["calls"][0]["paused"]
    assert len(ep.requests) == 3 * 2  # three questions, each retried once; then none
    assert verify_log(report.log_path).ok
    assert [c.problem for c in verify_traces(report.log_path) if c.seat == 0] == [None]


def test_a_paused_endpoint_is_asked_again_when_its_pause_is_over():
    pause = EndpointPause(after=2, seconds=60.0)
    assert not pause.note(True, now=0.0) and not pause.paused(1.0)  # one failure: go on
    assert not pause.note(False, now=2.0)  # it answered: the count starts again
    assert not pause.note(True, now=3.0)
    assert pause.note(True, now=4.0)  # two in a row: paused for a minute
    assert pause.paused(5.0) and pause.paused(63.9) and not pause.paused(64.0)
    assert pause.note(True, now=64.0)  # asked again and failed again: paused again
    assert pause.paused(100.0)
    assert not pause.note(False, now=124.0) and not pause.paused(124.0) and pause.failed == 0
    never = EndpointPause(after=0, seconds=60.0)
    assert not any(never.note(True, now=float(t)) for t in range(10))


async def test_the_api_key_comes_from_the_environment_and_is_kept_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("PUSOY_TEST_KEY", "sk-do-not-log-me")
    async with ScriptedEndpoint([legal]) as ep:
        model = settings_file(tmp_path, ep.url)
        with_key_env(model)
        await play_match(match(), seats(model), log_dir=tmp_path / "logs")
    assert set(ep.auth) == {"Bearer sk-do-not-log-me"}
    for path in (tmp_path / "logs").rglob("*"):
        if path.is_file():
            assert b"sk-do-not-log-me" not in path.read_bytes(), path


async def test_a_missing_key_stops_the_table_before_the_match(tmp_path, monkeypatch):
    monkeypatch.delenv("PUSOY_TEST_KEY", raising=False)
    model = settings_file(tmp_path, "http://127.0.0.1:9/v1")
    with_key_env(model)
    with pytest.raises(ModelSeatError, match="PUSOY_TEST_KEY is not set"):
        await play_match(match(), seats(model), log_dir=tmp_path / "logs")
