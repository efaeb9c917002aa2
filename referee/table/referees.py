"""The referee a table plays at: the narrow interface, and its two implementations.

``LocalReferee`` is a referee server in this process, used through its in-process API
(``RefereeServer.matches``): ``referee match`` and, by default, tournaments. With
``[referee] server = "host:port"`` a tournament uses a ``referee serve`` that is already
running, on this machine or another (``ServerReferee``), through the organiser's client
(``referee.client.organiser``) only: CreateMatch, GetMatch woken by WatchMatch,
GetMatchLog, CancelMatch, with the organiser's token (and TLS when configured). Either
way the bots connect to the referee over gRPC, and the table keeps its own copy of every
log, signed by the referee's key.

This module is the one door from ``table/`` and ``tournament/`` into ``referee.server``:
what they need of a server in this process (its lobby and assignments, its listener's
TLS and gRPC options) they import from here (docs/architecture.md, tests/test_layers.py).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc

from referee.client.organiser import (
    BadReply,
    CallFailed,
    LogStreamTooLarge,
    Organiser,
    OrganiserError,
    Target,
    Unreachable,
)
from referee.client.tls import ClientTls
from referee.log.signing import LogSigner, SigningKeyError
from referee.match.settings import MatchSettings
from referee.protocol import common
from referee.rules import new_seed
from referee.server.app import JAILED_SERVER_OPTIONS, SERVER_OPTIONS, RefereeServer
from referee.server.limits import apply_limits
from referee.server.lobby import Assignment, Lobby
from referee.server.metrics import Metrics
from referee.server.registry import Created, LogPolicy
from referee.server.tls import ServerTls

REACH_TIMEOUT_S = 10.0
"""How long a referee server may take to answer (and stay silent while a match is
followed) before the tournament gives up on it."""


DISCARD_REASON = "the organiser stopped before the match ended"


class RefereeUnavailable(Exception):
    """The referee cannot be started or reached: the tournament stops (it can resume)."""


class Referee(abc.ABC):
    """What a table needs of a referee, local or remote."""

    address = ""
    """Where bots connect (host:port)."""
    lobby: Lobby | None = None
    """The lobby for remote bots; only a referee in this process has one."""
    end_skew_s = 0.0
    """How much later than the bots the tournament may learn that a match ended."""
    metrics: Metrics | None = None
    """The referee's figures, written at the tournament's end (a referee in this process)."""
    public_key = ""
    """The key (base64 Ed25519) the referee signs logs with, once started."""

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def stop(self) -> None: ...

    @abc.abstractmethod
    async def create(self, settings: MatchSettings) -> Created:
        """Create a match; settings it refuses raise SettingsError (in this process) or
        CallFailed (a server)."""

    @abc.abstractmethod
    def over(self, match_id: str) -> asyncio.Event:
        """Set once the match is over (finished or cancelled)."""

    @abc.abstractmethod
    async def cancel(self, match_id: str, reason: str) -> None: ...

    @abc.abstractmethod
    async def seat_gone(self, match_id: str, seat: int, cause: str) -> bool:
        """The seat's bot is gone for good (its process exited): the match stops waiting
        for it. False when this referee cannot be told (the seat then waits as any absent
        seat: its reconnect grace, or the connect limit)."""

    def follow_turns(self, match_id: str, on_turn: Callable[[int | None, bool], None]) -> bool:
        """Call ``on_turn(seat, over)`` at each change of turn of the match, as it is
        decided (before the next seat is prompted); False when this referee cannot."""
        return False

    @abc.abstractmethod
    async def collect_log(self, match_id: str, dest: Path) -> None:
        """Put the log of a match that is over at ``dest``."""

    @abc.abstractmethod
    async def discard(self, match_id: str) -> None:
        """The table is done with the match: cancel it if it still runs, and let the
        referee forget it. Never raises."""


def state_signer(state_dir: Path) -> LogSigner:
    """The signing key kept in a private state folder (made, mode 0700, when absent)."""
    try:
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(state_dir, 0o700)
        signer, _ = LogSigner.load_or_create(state_dir / "signing-key.pem")
    except (OSError, SigningKeyError) as exc:
        raise RefereeUnavailable(f"the referee's signing key: {exc}") from None
    return signer


@dataclasses.dataclass(eq=False)
class LocalReferee(Referee):
    """A referee server in this process, on a loopback (or given) address; matches are
    made and followed through its in-process API. ``keep_logs``: a match's log stays in
    ``log_dir`` even when the match did not end well (``referee match``); otherwise
    ``log_dir`` is a working folder and ``collect_log`` moves each log out of it.

    Its private state (the log signing key, the seeds of running matches) is kept in
    ``state_dir`` (mode 0700), never the log folder: one key signs every match of a
    tournament, across resumes. ``signer`` signs instead when given; with neither, an
    ephemeral key signs.
    """

    listen: str
    log_dir: Path
    state_dir: Path | None = None
    _: dataclasses.KW_ONLY
    keep_logs: bool = False
    tls: ServerTls | None = None
    insecure: bool = False
    signer: LogSigner | None = None
    bot_listen: Sequence[str] = ()
    """Extra PlayService-only listeners (``unix:PATH``) for sandboxed bots."""
    publish_logs: bool = False
    metrics: Metrics | None = dataclasses.field(default_factory=Metrics, init=False)
    _server: RefereeServer | None = dataclasses.field(default=None, init=False)

    def __post_init__(self) -> None:
        self.bot_listen = tuple(self.bot_listen)

    @property
    def server(self) -> RefereeServer:
        """The referee, made on first use (its key is read from the state folder)."""
        if self._server is None:
            self._server = RefereeServer(
                self.listen,
                self.log_dir,
                state_dir=self.state_dir,
                signer=self._signer(),
                tls=self.tls,
                insecure=self.insecure,
                metrics=self.metrics,
                bot_listen=self.bot_listen,
                logs=LogPolicy(publish=self.publish_logs),
            )
            self.lobby = self._server.lobby
        return self._server

    def _signer(self) -> LogSigner:
        if self.signer is not None:
            return self.signer
        if self.state_dir is None:
            return LogSigner.ephemeral()
        return state_signer(self.state_dir)

    async def start(self) -> None:
        server = self.server
        try:
            await server.start()
        except OSError as exc:
            raise RefereeUnavailable(f"the referee cannot start: {exc}") from None
        self.address = server.address
        self.public_key = server.signer.public_key_text

    async def stop(self) -> None:
        await self.server.stop(grace=1.0)

    async def create(self, settings: MatchSettings) -> Created:
        # The settings checked themselves; within the server's limits (a hands cap on
        # every match) as a CreateMatch request is, so both referees take the same.
        server = self.server
        settings = settings if settings.seed else settings.with_seed(new_seed())
        return server.matches.create(apply_limits(settings, server.limits))

    def over(self, match_id: str) -> asyncio.Event:
        host = self.server.matches.get(match_id)
        if host is None:
            raise RuntimeError(f"the referee does not know match {match_id}")
        return host.done

    async def cancel(self, match_id: str, reason: str) -> None:
        self.server.matches.cancel(match_id, reason)

    async def seat_gone(self, match_id: str, seat: int, cause: str) -> bool:
        self.server.matches.seat_gone(match_id, seat, cause)
        return True

    def follow_turns(self, match_id: str, on_turn: Callable[[int | None, bool], None]) -> bool:
        host = self.server.matches.get(match_id)
        if host is None:
            return False
        host.on_turn = on_turn
        return True

    def log_path(self, match_id: str) -> Path:
        """Where the referee writes the match's log."""
        return self.server.matches.log_path(match_id)

    async def collect_log(self, match_id: str, dest: Path) -> None:
        matches = self.server.matches
        if not _same_path(dest, matches.log_path(match_id)):
            matches.take_log(match_id, dest)

    async def discard(self, match_id: str) -> None:
        matches = self.server.matches
        host = matches.get(match_id)
        if host is None:
            return
        if not host.done.is_set():
            matches.cancel(match_id, DISCARD_REASON)
        else:
            matches.forget(match_id)
        if not self.keep_logs:
            with contextlib.suppress(OSError):
                matches.log_path(match_id).unlink()  # there when the match did not end well


def _same_path(a: Path, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


class ServerReferee(Referee):
    """A running ``referee serve``, reached through its organiser API with its token.

    Its calls fail as the organiser's client says (``CallFailed``), but for a referee
    that cannot be reached or sends what no honest referee sends: the tournament stops
    (``RefereeUnavailable``), and resumes later, on this server or another."""

    end_skew_s = 2.0  # the end reaches the bots and the tournament on separate streams

    def __init__(
        self,
        address: str,
        token: str,
        *,
        organiser_address: str = "",
        tls: ClientTls | None = None,
    ) -> None:
        self.address = address
        self.organiser_address = organiser_address or address
        self.token = token
        self.tls = tls
        self._organiser: Organiser | None = None
        self._over: dict[str, tuple[asyncio.Event, asyncio.Task[None]]] = {}
        self._lost: dict[str, str] = {}
        """Matches whose referee stopped answering: why."""

    async def start(self) -> None:
        target = Target(self.organiser_address, self.token, self.tls)
        try:
            organiser = Organiser(target, watch_address=self.address, timeout_s=REACH_TIMEOUT_S)
        except OrganiserError as exc:  # TLS files that cannot be used
            raise RefereeUnavailable(str(exc)) from None
        try:
            await organiser.list(common.MATCH_STATUS_RUNNING)
            info = await organiser.info()
        except CallFailed as exc:
            await organiser.close()
            raise RefereeUnavailable(
                f"cannot reach the referee at {self.organiser_address}: {exc.what}"
            ) from None
        self._organiser = organiser
        self.public_key = info.signing_public_key

    @property
    def organiser(self) -> Organiser:
        if self._organiser is None:
            raise RuntimeError("the referee server is not started")
        return self._organiser

    async def stop(self) -> None:
        for _, task in self._over.values():
            task.cancel()
        self._over.clear()
        if self._organiser is not None:
            await self._organiser.close()

    def _lost_referee(self, exc: Unreachable) -> RefereeUnavailable:
        return RefereeUnavailable(f"lost the referee at {self.address}: {exc.what}")

    async def create(self, settings: MatchSettings) -> Created:
        try:
            created = await self.organiser.create(settings.request_pb())
        except Unreachable as exc:
            raise self._lost_referee(exc) from None
        except BadReply as exc:  # four plain tokens, before any is handed to a bot
            raise RefereeUnavailable(str(exc)) from None
        event = asyncio.Event()
        task = asyncio.create_task(self._watch(created.match_id, event))
        self._over[created.match_id] = (event, task)
        return Created(created.match_id, tuple(created.seat_tokens), created.seed_commitment)

    async def _watch(self, match_id: str, event: asyncio.Event) -> None:
        """Follow the match until the referee says it is over; one it has forgotten is
        over too. A referee that answers nothing for REACH_TIMEOUT_S is lost, and so is
        the match."""
        try:
            async for _ in self.organiser.wait_over(match_id, patience_s=REACH_TIMEOUT_S):
                pass
        except CallFailed as exc:
            if exc.code != grpc.StatusCode.NOT_FOUND:
                self._lost[match_id] = f"lost the referee at {self.address}: {exc.what}"
        event.set()

    def over(self, match_id: str) -> asyncio.Event:
        return self._over[match_id][0]

    async def cancel(self, match_id: str, reason: str) -> None:
        try:
            await self.organiser.cancel(match_id, reason)
        except Unreachable as exc:
            raise self._lost_referee(exc) from None

    async def seat_gone(self, match_id: str, seat: int, cause: str) -> bool:
        return False  # the organiser API has no call for it (yet)

    async def collect_log(self, match_id: str, dest: Path) -> None:
        if match_id in self._lost:
            raise RefereeUnavailable(self._lost[match_id])
        try:
            async with self.organiser.fetch_log(match_id, dest) as log:
                log.keep()  # checked with the tournament's key when it is recorded
        except Unreachable as exc:
            raise self._lost_referee(exc) from None
        except (BadReply, LogStreamTooLarge) as exc:  # an endless or broken stream: no log
            raise RefereeUnavailable(str(exc)) from None

    async def discard(self, match_id: str) -> None:
        self._lost.pop(match_id, None)
        event, task = self._over.pop(match_id, (None, None))
        if task is not None:
            task.cancel()
        if event is not None and not event.is_set():
            with contextlib.suppress(OrganiserError, RefereeUnavailable):
                await self.cancel(match_id, DISCARD_REASON)


__all__ = [
    "DISCARD_REASON",
    "JAILED_SERVER_OPTIONS",
    "REACH_TIMEOUT_S",
    "SERVER_OPTIONS",
    "Assignment",
    "Created",
    "Lobby",
    "LocalReferee",
    "Referee",
    "RefereeUnavailable",
    "ServerReferee",
    "ServerTls",
    "state_signer",
]
