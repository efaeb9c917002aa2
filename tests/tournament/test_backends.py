"""The match-backend interface as a caller other than the director (the ladder) uses it:
jobs in, finished matches out, over a real referee with real bots."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from referee.backends import FinishedMatch, LocalBackend, MatchFailure, MatchJob
from referee.log.verify import verify_log
from referee.match.settings import MatchSettings
from referee.rules import Rules
from referee.table.bots import BuiltinBot, CommandBot, Seat
from referee.table.procs import ProcessLedger
from referee.table.referees import LocalReferee
from referee.tournament.results import seat_results

from .conftest import BOTS, processes_with


def job(folder: Path, label: str, seats: list[Seat], *, connect_timeout_ms: int = 5000) -> MatchJob:
    rules = Rules.for_profile("pusoy-dos").with_options({"match_end": "hands 1"})
    a, b, c, d = (s.name for s in seats)
    return MatchJob(
        label=label,
        settings=MatchSettings(
            rules,
            seat_names=(a, b, c, d),
            seed=f"seed-{label}",
            turn_time_ms=400,
            connect_timeout_ms=connect_timeout_ms,
        ),
        seats=tuple(seats),
        log_path=folder / "logs" / f"{label}.jsonl",
        output_dir=folder / "output" / label,
    )


def builtin(*strategies: str) -> list[Seat]:
    return [Seat(f"{s}-{i}", BuiltinBot(s)) for i, s in enumerate(strategies)]


async def test_jobs_are_taken_as_slots_free_and_come_back_signed_and_verified(tmp_path):
    referee = LocalReferee("127.0.0.1:0", tmp_path / "work", tmp_path / "state")
    await referee.start()
    created: dict[str, str] = {}
    backend = LocalBackend(
        referee,
        concurrency=2,
        on_created=lambda job, match_id: created.update({job.label: match_id}),
    )
    taken_while_running: list[int] = []

    async def jobs() -> AsyncIterator[MatchJob]:
        for i in range(4):
            taken_while_running.append(backend.running)
            yield job(tmp_path, f"m{i}", builtin("greedy", "random", "greedy", "random"))

    finished: list[FinishedMatch] = []
    try:
        await backend.start()
        async with contextlib.aclosing(backend.run(jobs())) as matches:
            async for match in matches:
                finished.append(match)
        # One at a time, as a caller that claims and records each match itself.
        finished.append(
            await backend.play(job(tmp_path, "m4", builtin("random", "greedy", "random", "greedy")))
        )
    finally:
        await backend.stop()
        await referee.stop()

    # A job is asked for only when a match may start: never a third at once.
    assert len(taken_while_running) == 4 and max(taken_while_running) < 2
    assert sorted(m.job.label for m in finished) == ["m0", "m1", "m2", "m3", "m4"]
    key = base64.b64decode(referee.public_key)
    for match in finished:
        assert match.error == "" and match.verified is True
        assert match.log_path == match.job.log_path and match.log_path.is_file()
        checked = verify_log(match.log_path, key)  # signed with the referee's key
        assert checked.ok and checked.final_hash == match.final_hash != ""
        assert match.report is not None and match.report.seed == match.job.settings.seed
        assert created[match.job.label] == match.report.match_id == match.referee_match_id
        seats = seat_results(match, [s.name for s in match.job.seats], folder=tmp_path)
        assert sorted(s.summary.place for s in seats) == [1, 2, 3, 4]
    assert backend.running == 0


async def test_stopping_the_run_stops_the_matches_still_playing(tmp_path):
    marker = f"hang-{tmp_path.name}"
    hang = Seat("hang", CommandBot((sys.executable, str(BOTS / "hang_bot.py"), marker)))
    referee = LocalReferee("127.0.0.1:0", tmp_path / "work", tmp_path / "state")
    await referee.start()
    backend = LocalBackend(referee, concurrency=1, ledger=ProcessLedger(tmp_path / "procs.json"))

    async def jobs() -> AsyncIterator[MatchJob]:
        # The hanging bot never connects: the match would wait a minute for it.
        seats = [hang, *builtin("greedy", "random", "greedy")]
        yield job(tmp_path, "m0", seats, connect_timeout_ms=60_000)

    async def consume() -> list[FinishedMatch]:
        async with contextlib.aclosing(backend.run(jobs())) as matches:
            return [match async for match in matches]

    try:
        await backend.start()
        consumer = asyncio.create_task(consume())
        deadline = time.monotonic() + 30
        while not processes_with(marker):
            assert time.monotonic() < deadline, "the hanging bot never started"
            await asyncio.sleep(0.1)
        assert backend.running == 1 and not consumer.done()
        stopping = time.monotonic()
        consumer.cancel()  # as Ctrl-C stops a tournament, or a ladder's worker its run
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        assert time.monotonic() - stopping < 15 and backend.running == 0
    finally:
        await backend.stop()
        await referee.stop()
    deadline = time.monotonic() + 10
    while processes_with(marker):  # the bot and its child were stopped with the match
        assert time.monotonic() < deadline, "the stopped match's bot was left running"
        await asyncio.sleep(0.1)


async def test_a_match_without_a_result_says_why_in_a_typed_cause(tmp_path):
    """The ladder records why a match has no result from ``FinishedMatch.failure``,
    never from the words of an error: refused settings, a time limit, a cancel."""
    referee = LocalReferee("127.0.0.1:0", tmp_path / "work", tmp_path / "state")
    await referee.start()
    backend = LocalBackend(referee, concurrency=1, ledger=ProcessLedger(tmp_path / "procs.json"))
    plain = job(tmp_path, "ok", builtin("greedy", "random", "greedy", "random"))

    def hands(label: str, count: int) -> MatchJob:
        rules = plain.settings.rules.with_options({"match_end": f"hands {count}"})
        settings = dataclasses.replace(plain.settings, rules=rules)
        return dataclasses.replace(plain, label=label, settings=settings)

    gone = CommandBot((sys.executable, "-c", "pass"))  # ends at once, never connects
    try:
        await backend.start()
        played = await backend.play(plain)
        refused = await backend.play(hands("refused", 5000))  # the server allows 1000
        timed_out = await backend.play(dataclasses.replace(hands("long", 1000), time_limit_s=0.3))
        nobody = job(tmp_path, "empty", [Seat(f"gone-{i}", gone) for i in range(4)])
        cancelled = await backend.play(dataclasses.replace(nobody, settings=dataclasses.replace(
            nobody.settings, connect_timeout_ms=300
        )))  # fmt: skip
    finally:
        await backend.stop()
        await referee.stop()
    assert played.failure is None and played.report is not None
    assert refused.failure is MatchFailure.SETTINGS and refused.report is None
    assert "SettingsError" in refused.error
    assert timed_out.failure is MatchFailure.TIME_LIMIT
    assert timed_out.report is not None and "time limit" in timed_out.report.cancel_reason
    assert cancelled.failure is MatchFailure.CANCELLED and cancelled.report is not None
    assert "connect" in cancelled.report.cancel_reason
