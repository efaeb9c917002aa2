"""The referee a table plays at: the narrow interface, and its two implementations.

``LocalReferee`` is a referee server in this process, used through its in-process API
(``RefereeServer.matches``): ``referee match`` and, by default, tournaments. With
``[referee] server = "host:port"`` a tournament uses a ``referee serve`` that is already
running, on this machine or another (``ServerReferee``), through the organiser's gRPC API
only: CreateMatch, WatchMatch, GetMatchLog, CancelMatch, with the organiser's token (and
TLS when configured). Either way the bots connect to the referee over gRPC, and the
table keeps its own copy of every log, signed by the referee's key.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

import grpc

from referee.log.signing import LogSigner, SigningKeyError
from referee.match.settings import MatchSettings
from referee.organiser import OVER, OrganiserError, check_created, fetch_log
from referee.protocol import (
    common,
    match_service,
    match_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.rules import new_seed
from referee.server.app import RefereeServer
from referee.server.auth import organiser_channel
from referee.server.limits import apply_limits
from referee.server.lobby import Lobby
from referee.server.metrics import Metrics
from referee.server.registry import Created
from referee.server.tls import ClientTls, ServerTls, TlsError, client_channel

# How long to wait for a referee server to answer before the tournament gives up on it.
REACH_TIMEOUT_S = 10.0
# Pause before watching a match again after its watch stream broke.
REWATCH_PAUSE_S = 0.5


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
        grpc's error (a server)."""

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

    def __init__(
        self,
        listen: str,
        log_dir: Path,
        state_dir: Path | None = None,
        *,
        keep_logs: bool = False,
        tls: ServerTls | None = None,
        insecure: bool = False,
        signer: LogSigner | None = None,
        bot_listen: Sequence[str] = (),
        publish_logs: bool = False,
    ) -> None:
        self.listen = listen
        self.publish_logs = publish_logs
        self.signer = signer
        self.log_dir = log_dir
        self.state_dir = state_dir
        self.bot_listen = tuple(bot_listen)
        """Extra PlayService-only listeners (``unix:PATH``) for sandboxed bots."""
        self.metrics = Metrics()
        self.keep_logs = keep_logs
        self.tls = tls
        self.insecure = insecure
        self._server: RefereeServer | None = None

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
                publish_logs=self.publish_logs,
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
    """A running ``referee serve``, reached through its organiser API with its token."""

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
        self._channels: list[grpc.aio.Channel] = []
        self._matches: match_service_grpc.MatchServiceAsyncStub | None = None
        self._spectate: spectator_service_grpc.SpectatorServiceAsyncStub | None = None
        self._over: dict[str, tuple[asyncio.Event, asyncio.Task[None]]] = {}
        self._lost: dict[str, str] = {}
        """Matches whose referee stopped answering: why."""

    async def start(self) -> None:
        try:
            organiser = organiser_channel(self.organiser_address, self.token, self.tls)
            public = client_channel(self.address, self.tls)
        except TlsError as exc:
            raise RefereeUnavailable(str(exc)) from None
        self._channels = [organiser, public]
        self._matches = match_service_grpc.MatchServiceStub(organiser)
        self._spectate = spectator_service_grpc.SpectatorServiceStub(public)
        try:
            await self._matches.ListMatches(
                match_service.ListMatchesRequest(status=common.MATCH_STATUS_RUNNING),
                timeout=REACH_TIMEOUT_S,
            )
            info = await self._matches.GetServerInfo(
                match_service.GetServerInfoRequest(), timeout=REACH_TIMEOUT_S
            )
        except grpc.aio.AioRpcError as exc:
            for channel in self._channels:
                await channel.close(grace=None)
            raise RefereeUnavailable(
                f"cannot reach the referee at {self.organiser_address}: {exc.code().name} "
                f"{exc.details()}"
            ) from None
        self.public_key = info.signing_public_key

    async def stop(self) -> None:
        for _, task in self._over.values():
            task.cancel()
        self._over.clear()
        for channel in self._channels:
            await channel.close(grace=None)

    async def create(self, settings: MatchSettings) -> Created:
        assert self._matches is not None
        try:
            created: match_service.CreateMatchResponse = await self._matches.CreateMatch(
                settings.request_pb()
            )
        except grpc.aio.AioRpcError as exc:
            raise self._lost_or(exc) from None
        try:
            check_created(created)  # four plain tokens, before any is handed to a bot
        except OrganiserError as exc:
            raise RefereeUnavailable(str(exc)) from None
        event = asyncio.Event()
        task = asyncio.create_task(self._watch(created.match_id, event))
        self._over[created.match_id] = (event, task)
        return Created(created.match_id, tuple(created.seat_tokens), created.seed_commitment)

    def _lost_or(self, exc: grpc.aio.AioRpcError) -> Exception:
        """RefereeUnavailable when the server cannot be reached, else the error itself."""
        if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return RefereeUnavailable(
                f"lost the referee at {self.address}: {exc.code().name} {exc.details()}"
            )
        return exc

    async def _watch(self, match_id: str, event: asyncio.Event) -> None:
        """Follow the match until the referee says it is over; a broken watch (a network
        hiccup) is followed by another. A referee that answers nothing for
        REACH_TIMEOUT_S is lost, and so is the match."""
        assert self._matches is not None and self._spectate is not None
        loop = asyncio.get_running_loop()
        silent_since: float | None = None
        while True:
            with contextlib.suppress(grpc.aio.AioRpcError):
                request = spectator_service.WatchMatchRequest(match_id=match_id)
                async for item in self._spectate.WatchMatch(request):
                    if item.event.HasField("match_ended"):
                        event.set()
                        return
            try:
                info = await self._matches.GetMatch(
                    match_service.GetMatchRequest(match_id=match_id)
                )
                if info.match.status in OVER:
                    break
                silent_since = None
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.NOT_FOUND:
                    break  # forgotten by the server: over, whatever happened
                silent_since = silent_since or loop.time()
                if loop.time() - silent_since > REACH_TIMEOUT_S:
                    self._lost[match_id] = str(self._lost_or(exc))
                    break
            await asyncio.sleep(REWATCH_PAUSE_S)
        event.set()

    def over(self, match_id: str) -> asyncio.Event:
        return self._over[match_id][0]

    async def cancel(self, match_id: str, reason: str) -> None:
        assert self._matches is not None
        await self._matches.CancelMatch(
            match_service.CancelMatchRequest(match_id=match_id, reason=reason)
        )

    async def seat_gone(self, match_id: str, seat: int, cause: str) -> bool:
        return False  # the organiser API has no call for it (yet)

    async def collect_log(self, match_id: str, dest: Path) -> None:
        assert self._matches is not None
        if match_id in self._lost:
            raise RefereeUnavailable(self._lost[match_id])
        try:
            async with fetch_log(self._matches, match_id, dest) as log:
                log.keep()  # checked with the tournament's key when it is recorded
        except grpc.aio.AioRpcError as exc:
            raise self._lost_or(exc) from None
        except OrganiserError as exc:  # an endless or broken stream: no log of a referee
            raise RefereeUnavailable(str(exc)) from None

    async def discard(self, match_id: str) -> None:
        self._lost.pop(match_id, None)
        event, task = self._over.pop(match_id, (None, None))
        if task is not None:
            task.cancel()
        if event is not None and not event.is_set():
            with contextlib.suppress(grpc.aio.AioRpcError):
                await self.cancel(match_id, DISCARD_REASON)
