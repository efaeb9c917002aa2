"""The match backend: match jobs in, finished matches out, whatever plays them.

A backend knows how to play one match (``_attempt``: at a table in this process, or as
a Ray task on a cluster) and nothing of why it is played: no schedule, ratings or
results files. Its caller (a tournament's director, a ladder's worker) hands
it jobs as an async iterable and gets each match back as it ends:

    async with contextlib.aclosing(backend.run(jobs)) as finished:
        async for match in finished:
            record(match)

or, one match at a time, ``match = await backend.play(job)``.

``run`` takes a job only when a match may start (at most ``concurrency`` at once) and
only after every match that ended before has been taken by the caller, so a job built
on demand (who sits in a seat once a bot is disqualified, whether a remote bot has a
free slot) sees every earlier result. Stopping early is closing the generator: the
matches still running are cancelled, as on Ctrl-C.

Whichever backend played it, a match comes back the same way: its log at the job's
``log_path`` (signed with the caller's key), each spawned bot's output in the job's
``output_dir``, the log verified (``referee verify``, signature included) when the
backend verifies, or the error that made it fail. An error of the match is its own
failure (a ``FinishedMatch`` without a report); an error of the means to play
(``RefereeUnavailable``: the referee or the cluster is gone) ends ``run``, because every
later match would fail the same way.
"""

from __future__ import annotations

import abc
import asyncio
import base64
import dataclasses
import enum
import re
import time
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from pathlib import Path

import structlog

from referee.log.verify import verify_log
from referee.match.settings import MatchSettings, SettingsError
from referee.pools import process_pool
from referee.table.bots import Seat
from referee.table.referees import RefereeUnavailable
from referee.table.table import BotExit, MatchReport

log = structlog.get_logger("referee.tournament")


@dataclasses.dataclass(frozen=True, slots=True)
class MatchJob:
    """One match to play, and where its files go (plain values: a Ray task gets it)."""

    label: str
    """The caller's name for the match: the ``{match}`` of bot commands, and how the
    backend names it in its notices."""
    settings: MatchSettings
    """With the match's seed: exactly this deal is played."""
    seats: tuple[Seat, ...]
    log_path: Path
    """Where the finished log is kept."""
    output_dir: Path
    """Where each spawned bot's output is kept (``output_path``)."""
    time_limit_s: float | None = None
    """A match still running after this long is cancelled (None: no limit)."""

    def output_path(self, seat: int, name: str) -> Path:
        return self.output_dir / output_name(seat, name)


UNSAFE_IN_NAMES = re.compile(r"[^A-Za-z0-9._-]")


def output_name(seat: int, name: str) -> str:
    """The file name of a seat's output: its bot's name with what a file name cannot
    hold as ``_`` (a ladder's ``team/bot#1``; a tournament's names need none)."""
    return f"seat{seat}-{UNSAFE_IN_NAMES.sub('_', name)}.txt"


class MatchFailure(enum.Enum):
    """Why a backend's match came back without a result to rank."""

    SETTINGS = "settings"
    """The referee refused the match as it was set up (a ``SettingsError``)."""
    ERROR = "error"
    """It could not be played: ``FinishedMatch.error`` says why."""
    UNVERIFIED = "unverified"
    """Played to its end, but its log does not verify."""
    TIME_LIMIT = "timeout"
    """Cancelled for running over the job's time limit."""
    CANCELLED = "cancelled"
    """Cancelled by the referee (``report.cancel_reason`` says why)."""


def failure_of(report: MatchReport, verified: bool | None) -> MatchFailure | None:
    """What a played match's report comes to: None when it has a result to rank."""
    if report.finished:
        return MatchFailure.UNVERIFIED if verified is False else None
    return MatchFailure.TIME_LIMIT if report.over_time_limit else MatchFailure.CANCELLED


@dataclasses.dataclass(frozen=True, slots=True)
class FinishedMatch:
    """A match as a backend hands it back: played to its end (``report``), or failed
    (``error``)."""

    job: MatchJob
    report: MatchReport | None
    """The table's report, its files at the job's paths; None when the match failed."""
    error: str
    """Why the match failed (``Type: message``); empty when it has a report."""
    referee_match_id: str
    """The referee's id of the match, once the referee had created it."""
    verified: bool | None
    """Whether ``referee verify`` passed on the log; None when not checked."""
    started: datetime
    duration_s: float
    """From the first attempt's start until the log was verified."""
    retries: tuple[str, ...] = ()
    """Attempts lost with their worker, and why, oldest first (Ray)."""
    failure: MatchFailure | None = None
    """Why it has no result to rank; None when it has one."""

    @property
    def log_path(self) -> Path | None:
        """The signed log (the job's ``log_path``); None when the match failed."""
        return self.report.log_path if self.report is not None else None

    @property
    def final_hash(self) -> str:
        """The log's final hash, which its signature covers; empty when it failed."""
        return self.report.final_hash if self.report is not None else ""


@dataclasses.dataclass
class Playing:
    """What a backend knows of a match while it plays it: what a failure's record needs."""

    job: MatchJob
    referee_match_id: str = ""
    retries: tuple[str, ...] = ()


OnBotExit = Callable[[MatchJob, BotExit], None]
"""Hears of a bot that ended before its match: at once at a local table, when the match
arrives from a Ray worker."""
OnRetry = Callable[[MatchJob, str, int], None]
"""Hears of a lost attempt: the match, why, and the attempt about to start."""
OnCreated = Callable[[MatchJob, str], None]
"""Hears the referee's id of a match as soon as the referee made it (local backend)."""


def _log_verifies(path: str, public_key: str = "") -> bool:
    """Runs in the verification worker: the rules, and the signature of ``public_key``
    (base64) when given."""
    key = base64.b64decode(public_key) if public_key else None
    return verify_log(Path(path), key).ok


async def _take(jobs: AsyncIterator[MatchJob]) -> MatchJob:
    return await anext(jobs)


class MatchBackend(abc.ABC):
    """Plays match jobs: ``await start()``, ``run(jobs)``, ``await stop()``."""

    verifiers = 1
    """Worker processes that verify logs."""

    def __init__(
        self,
        *,
        concurrency: int,
        verify: bool = True,
        on_bot_exit: OnBotExit | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency
        self.verify = verify
        self.on_bot_exit = on_bot_exit
        self._running: dict[asyncio.Task[FinishedMatch], MatchJob] = {}
        self._pool: ProcessPoolExecutor | None = None

    @property
    @abc.abstractmethod
    def public_key(self) -> str:
        """The key (base64) the logs are signed with, checked by verification."""

    @property
    def running(self) -> int:
        """Matches being played now."""
        return len(self._running)

    async def start(self) -> None:
        """Ready what playing needs (the verification workers; a backend's own means).
        Raises RefereeUnavailable when those means cannot be had."""
        if self.verify:
            self._pool = process_pool(self.verifiers)

    async def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    async def run(self, jobs: AsyncIterable[MatchJob]) -> AsyncGenerator[FinishedMatch, None]:
        """Play the jobs as they come, up to ``concurrency`` at once; yield each match as
        it ends. Raises RefereeUnavailable (the matches still running cancelled) when the
        means to play are lost. One run at a time."""
        if self._running:
            raise RuntimeError("a backend plays one run at a time")
        source = aiter(jobs)
        taking: asyncio.Task[MatchJob] | None = None
        more = True
        try:
            while more or self._running:
                if more and taking is None and len(self._running) < self.concurrency:
                    taking = asyncio.create_task(_take(source), name="next match")
                waiting: list[asyncio.Task[MatchJob] | asyncio.Task[FinishedMatch]] = [
                    *self._running
                ]
                if taking is not None:
                    waiting.append(taking)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if taking is not None and taking in done:
                    try:
                        job = taking.result()
                    except StopAsyncIteration:
                        more = False
                    else:
                        task = asyncio.create_task(self.play(job), name=f"match {job.label}")
                        self._running[task] = job
                    taking = None
                for task in [t for t in self._running if t in done]:
                    del self._running[task]
                    yield task.result()
        finally:
            pending: list[asyncio.Task[MatchJob] | asyncio.Task[FinishedMatch]] = [*self._running]
            if taking is not None:
                pending.append(taking)
            for left in pending:
                left.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            self._running.clear()
            close = getattr(source, "aclose", None)
            if close is not None:
                await close()

    # -- one match ------------------------------------------------------------------

    async def play(self, job: MatchJob) -> FinishedMatch:
        """Play one match to its end and verify its log: the one match of a caller that
        plays them one by one (``run`` plays a stream of them through this). Never
        raises but CancelledError (the match is stopped) and RefereeUnavailable."""
        started, t0 = datetime.now(UTC), time.monotonic()
        playing = Playing(job)
        try:
            report = await self._attempt(playing)
            verified = await self._verify(report.log_path) if self.verify else None
            return FinishedMatch(
                job,
                report,
                error="",
                referee_match_id=report.match_id,
                verified=verified,
                started=started,
                duration_s=time.monotonic() - t0,
                retries=playing.retries,
                failure=failure_of(report, verified),
            )
        except (asyncio.CancelledError, RefereeUnavailable):
            raise  # not the match's fault: the caller stops, and plays it again later
        except Exception as exc:
            log.exception("match failed", match_id=job.label)
            return FinishedMatch(
                job,
                None,
                error=f"{type(exc).__name__}: {exc}",
                referee_match_id=playing.referee_match_id,
                verified=None,
                started=started,
                duration_s=time.monotonic() - t0,
                retries=playing.retries,
                failure=(  # on Ray too: its error is an instance of the cause's class
                    MatchFailure.SETTINGS if isinstance(exc, SettingsError) else MatchFailure.ERROR
                ),
            )

    @abc.abstractmethod
    async def _attempt(self, playing: Playing) -> MatchReport:
        """Play ``playing.job`` with this backend's means: the report, its files at the
        job's paths, its log signed with ``public_key``. Raises what made the match fail
        (RefereeUnavailable: what made the means fail)."""

    async def _verify(self, path: Path) -> bool:
        """``referee verify`` on a log, in a worker process (inline if the pool broke)."""
        if self._pool is not None:
            try:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(
                    self._pool, _log_verifies, str(path), self.public_key
                )
            except BrokenProcessPool:
                log.warning("the verification worker died; verifying in-process")
                self._pool = None
        return _log_verifies(str(path), self.public_key)


__all__ = [
    "FinishedMatch",
    "MatchBackend",
    "MatchFailure",
    "MatchJob",
    "OnBotExit",
    "OnCreated",
    "OnRetry",
    "Playing",
    "failure_of",
    "output_name",
]
