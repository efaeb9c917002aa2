"""Where a ladder's match is played: the one place that turns a claimed match into a
played one. When the match core changes, this module is the one to re-point.

A ``LadderJob`` is a claimed match as plain, picklable values (the deal's seed, the
settings, what sits in each seat, where its log and its bots' output go); a player
plays it and returns the table's ``MatchReport``. Today's player is ``LocalPlayer``: one
referee embedded in the worker's process, a table per match (``referee.table``), every
spawned bot in a jail (``referee.ladder.jails``). A player for the tournaments' backends
(issue 22: local and Ray behind one interface) implements the same ``MatchPlayer``
protocol; the worker loop (``referee.ladder.worker``: claim, renew, play, record) does
not change. For Ray, the versions' folders (``versions/``) must be at the same path on
every node, as tournaments' bot programs must.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Protocol

from referee.ladder.jails import LadderJails
from referee.ladder.types import Version
from referee.log.signing import LogSigner
from referee.match.settings import MatchSettings
from referee.sandbox import SandboxLimits, Support
from referee.table.bots import BuiltinBot, CommandBot, RemoteBot, Seat, distinct_names
from referee.table.procs import ProcessLedger
from referee.table.referees import LocalReferee
from referee.table.table import MatchReport, Table


@dataclasses.dataclass(frozen=True, slots=True)
class SeatPlan:
    """What sits in one seat: a version, by how it runs."""

    name: str
    """The seat's name in the match (and its log): ``team/bot#number``."""
    version_id: int
    runtime: str
    strategy: str = ""
    """builtin: the strategy."""
    folder: Path | None = None
    """An uploaded version: its unpacked, read-only folder (its working folder)."""
    argv: tuple[str, ...] = ()
    """An uploaded version: its command line (``Manifest.argv``)."""
    lobby_name: str = ""
    """remote: its name in the lobby."""

    def seat(self) -> Seat:
        if self.runtime == "builtin":
            return Seat(self.name, BuiltinBot(self.strategy))
        if self.runtime == "remote":
            return Seat(self.name, RemoteBot(self.lobby_name))
        assert self.folder is not None
        return Seat(self.name, CommandBot(self.argv, cwd=self.folder))


@dataclasses.dataclass(frozen=True, slots=True)
class LadderJob:
    match_id: str
    attempt: int
    settings: MatchSettings
    """With the deal group's seed: every seating of the group plays the same deals."""
    seats: tuple[SeatPlan, ...]
    time_limit_s: float
    log_path: Path
    """Where the log goes (one file per attempt: only the recorded one is indexed)."""
    stderr_dir: Path
    """Each spawned bot's output, ``seat<N>.txt``."""


def seat_plans(
    versions: Sequence[Version], versions_dir: Path, lobby_names: dict[int, str]
) -> tuple[SeatPlan, ...]:
    """The seats of a match from its versions in seats 0..3 (``lobby_names``: the
    remote versions' names in the lobby)."""
    names = distinct_names([v.label for v in versions])
    plans = []
    for name, v in zip(names, versions, strict=True):
        if v.runtime == "builtin":
            plans.append(SeatPlan(name, v.id, v.runtime, strategy=v.manifest.command[0]))
        elif v.runtime == "remote":
            plans.append(SeatPlan(name, v.id, v.runtime, lobby_name=lobby_names.get(v.id, "")))
        else:
            assert v.archive_sha256 is not None
            folder = versions_dir / v.archive_sha256
            argv = tuple(v.manifest.argv(folder))
            plans.append(SeatPlan(name, v.id, v.runtime, folder=folder, argv=argv))
    return tuple(plans)


class MatchPlayer(Protocol):
    """What a worker plays its matches with."""

    @property
    def address(self) -> str:
        """The referee's public address (its SpectatorService: live matches are
        relayed from there), once started; empty when it cannot be watched."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def play(
        self, job: LadderJob, created: Callable[[str], Awaitable[None]] | None = None
    ) -> MatchReport:
        """Play the job's match to its end; ``created`` hears the referee's id for it as
        soon as it exists. Raises what the table raises (a referee that cannot play)."""


class LocalPlayer:
    """A referee in this process, a table per match, spawned bots jailed."""

    def __init__(
        self,
        listen: str,
        work_dir: Path,
        signer: LogSigner,
        support: Support,
        limits: SandboxLimits,
    ) -> None:
        self.listen = listen
        self.work_dir = work_dir
        self.signer = signer
        self.support = support
        self.jails = LadderJails(support, limits)
        self.ledger = ProcessLedger(work_dir / "processes.json")
        self.referee: LocalReferee | None = None

    @property
    def address(self) -> str:
        return self.referee.address if self.referee is not None else ""

    async def start(self) -> None:
        """Stop what a killed run of this worker left (its bots, their cgroups and
        sockets), then start the referee."""
        self.ledger.reap_leftovers()
        if self.support.cgroups is not None:
            self.support.cgroups.reap()
        from referee.sandbox import RefereeSocket

        RefereeSocket.reap_stale()
        listen = self.jails.listen_addresses()
        self.work_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.referee = LocalReferee(
            self.listen,
            self.work_dir / "referee",
            self.work_dir / "state",
            signer=self.signer,
            bot_listen=listen,
        )
        await self.referee.start()
        self.jails.opened(self.referee.address)

    async def stop(self) -> None:
        if self.referee is not None:
            await self.referee.stop()
        self.jails.close()

    async def play(
        self, job: LadderJob, created: Callable[[str], Awaitable[None]] | None = None
    ) -> MatchReport:
        assert self.referee is not None, "start() first"
        folders = {p.name: p.folder for p in job.seats if p.folder is not None}
        table = Table(self.referee, ledger=self.ledger, sandbox=self.jails.for_match(folders))
        play = asyncio.create_task(
            table.play(
                job.settings,
                [p.seat() for p in job.seats],
                label=job.match_id,
                log_path=lambda _: job.log_path,
                stderr_path=lambda _, seat, __: job.stderr_dir / f"seat{seat}.txt",
                time_limit_s=job.time_limit_s,
            )
        )
        if created is not None:
            announce = asyncio.create_task(_announce(table, play, created))
        try:
            return await play
        finally:
            if created is not None:
                announce.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await announce
            if not play.done():
                play.cancel()


async def _announce(
    table: Table, play: asyncio.Task[MatchReport], created: Callable[[str], Awaitable[None]]
) -> None:
    """Tell ``created`` the referee's id for the match once the table has it."""
    # The table has its match id as an attribute only, set once the referee made it.
    while not table.match_id and not play.done():  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    if table.match_id:
        await created(table.match_id)


__all__ = ["LadderJob", "LocalPlayer", "MatchPlayer", "SeatPlan", "seat_plans"]
