"""Where a ladder's matches are played: the tournament's match backends, opened for it.

A claimed match becomes a ``MatchJob`` (``referee.tournament.backends``): its versions
are seats (``seat_plans``), its settings carry the deal group's seed. The worker
(``referee.ladder.worker``: claim, renew, play, record) plays it with
``await backend.play(job)``, whichever backend that is:

- ``LocalTables``: a referee embedded in the worker's process and a ``LocalBackend``
  around it, each uploaded version jailed by ``referee.ladder.jails`` in its own folder
  (the backend's ``sandbox(job)`` hook), the live match watchable at the referee's
  address; the process that holds the lobby plays remote bots' matches this way too;
- ``ray_backend``: each match a Ray task with a referee of its own (``[workers] backend
  = "ray"``), its log signed again with the ladder's key and written where the job says
  on arrival; the node jails its spawned bots (``jails.NodeJails``). The versions'
  folders (``versions/``) must be at the same path on every node, as a tournament's bot
  programs must.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from pathlib import Path

from referee.ladder.config import LadderConfig
from referee.ladder.jails import NodeJails, folder_views, ladder_jailer
from referee.ladder.types import Version
from referee.log.signing import LogSigner
from referee.sandbox import RefereeSocket, SandboxLimits, Support
from referee.table.bots import BuiltinBot, CommandBot, RemoteBot, Seat, distinct_names
from referee.table.procs import ProcessLedger
from referee.table.referees import LocalReferee
from referee.tournament.backends import LocalBackend, MatchJob, RayBackend
from referee.tournament.backends.ray import SandboxRecipe


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


def folders_of(job: MatchJob) -> dict[str, Path]:
    """Seat name -> the folder its spawned version runs in (its only visible files)."""
    folders = {}
    for seat in job.seats:
        if isinstance(seat.bot, CommandBot):
            if seat.bot.cwd is None:  # a ladder's spawned seat always has its folder
                raise ValueError(f"seat {seat.name!r} is a command without its folder")
            folders[seat.name] = Path(seat.bot.cwd)
    return folders


class LocalTables:
    """A worker's means to play here: a referee in this process, its jails, the process
    ledger of its spawned bots, and a ``LocalBackend`` around them (``backend``)."""

    def __init__(
        self,
        listen: str,
        work_dir: Path,
        signer: LogSigner,
        support: Support,
        limits: SandboxLimits,
        *,
        slots: int = 1,
    ) -> None:
        self.listen = listen
        self.work_dir = work_dir
        self.signer = signer
        self.support = support
        self.jails = ladder_jailer(support, limits)
        self.ledger = ProcessLedger(work_dir / "processes.json")
        self.referee: LocalReferee | None = None
        self.slots = slots
        self._backend: LocalBackend | None = None

    @property
    def address(self) -> str:
        """The referee's public address (live matches are relayed from there)."""
        return self.referee.address if self.referee is not None else ""

    @property
    def backend(self) -> LocalBackend:
        assert self._backend is not None, "start() first"
        return self._backend

    async def start(self) -> None:
        """Stop what a killed run of this worker left (its bots, their cgroups and
        sockets), then start the referee and the backend."""
        self.ledger.reap_leftovers()
        if self.support.cgroups is not None:
            self.support.cgroups.reap()
        if self.support.cgroups2 is not None:
            self.support.cgroups2.reap()
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
        self._backend = LocalBackend(
            self.referee,
            concurrency=self.slots,
            # Every log verified (rules and signature) before its result is recorded, as
            # a tournament's and as the Ray backend's on arrival.
            verify=True,
            sandbox=lambda job: self.jails.seating(folder_views(folders_of(job))),
            ledger=self.ledger,
        )
        await self._backend.start()

    async def stop(self) -> None:
        if self._backend is not None:
            await self._backend.stop()
        if self.referee is not None:
            await self.referee.stop()
        self.jails.close()


def node_jails(limits: SandboxLimits, job: MatchJob) -> SandboxRecipe | None:
    """The Ray backend's ``sandbox(job)``: the recipe of the job's jails on its node, or
    None when it spawns no bot (built-in and remote seats need none)."""
    folders = folders_of(job)
    return functools.partial(NodeJails, limits, folders) if folders else None


def ray_backend(config: LadderConfig, signer: LogSigner, *, slots: int) -> RayBackend:
    """The backend of ``[workers] backend = "ray"``: ``slots`` matches in flight on the
    cluster at ``[workers] address`` (empty: a Ray of this machine alone), each log
    signed with ``signer`` (the ladder's key) when it arrives."""
    return RayBackend(
        signer=signer,
        address=config.ray_address,
        concurrency=slots,
        sandbox=functools.partial(node_jails, config.bot_limits),
    )


__all__ = ["LocalTables", "SeatPlan", "folders_of", "node_jails", "ray_backend", "seat_plans"]
