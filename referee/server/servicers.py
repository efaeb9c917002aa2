"""The gRPC servicers: translate messages and hand commands to the match hosts.

They also hold the edge's bounds (referee.server.limits): counts of matches and
spectators, rates of hellos, lengths of strings. A refused request never reaches a match.
Error messages name what was wrong, never a path on the server. The organiser's calls
are checked by the listener's OrganiserGate (referee.server.auth).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import structlog

from referee import __version__
from referee.log.reader import LogFormatError, is_closed, stream_lines
from referee.log.signing import ALGORITHM, LogSigner
from referee.log.stream import public_events
from referee.match.actions import is_oversized, is_sha256_hex
from referee.match.settings import SettingsError, settings_from_request
from referee.protocol import (
    SUPPORTED_PROTOCOL_VERSIONS,
    common,
    lobby_service,
    lobby_service_grpc,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.server.auth import OrganiserGate
from referee.server.hellos import HelloGuard
from referee.server.host import Inbound, MatchHost
from referee.server.limits import ServerLimits, apply_limits, check_request
from referee.server.lobby import LobbyServicer
from referee.server.malformed import Malformed, sees_malformed, unparsable
from referee.server.metrics import Metrics
from referee.server.registry import LogUnavailable, MatchRegistry, ShuttingDown
from referee.server.rpc import HELLO_TIMEOUT_S, Context
from referee.server.sessions import Session, Spectator

log = structlog.get_logger("referee.rpc")

SERVICE_NAMES = (
    match_service.DESCRIPTOR.services_by_name["MatchService"].full_name,
    play_service.DESCRIPTOR.services_by_name["PlayService"].full_name,
    spectator_service.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
    lobby_service.DESCRIPTOR.services_by_name["LobbyService"].full_name,
)
"""The referee's own services, in ``add_services``' order (health and reflection aside)."""


MAX_ID_CHARS = 64
"""Match ids in requests: a longer one matches nothing and is not echoed back."""


async def _find(registry: MatchRegistry, match_id: str, context: Context) -> MatchHost:
    host = registry.get(match_id) if len(match_id) <= MAX_ID_CHARS else None
    if host is None:
        shown = match_id if len(match_id) <= MAX_ID_CHARS else match_id[:20] + "…"
        message = f"no match {shown!r}"
        if registry.logged(match_id) is not None:
            message = (
                f"match {match_id} is over and no longer held in memory (this server keeps "
                f"the last {registry.keep_finished} finished matches); GetMatchLog serves its log"
            )
        await context.abort(grpc.StatusCode.NOT_FOUND, message)
    assert host is not None
    return host


@dataclasses.dataclass(eq=False)
class MatchServicer(match_service_grpc.MatchServiceServicer):
    """The organiser's API and its few public calls. ``gate`` is the listener's
    OrganiserGate: its interceptor checks the organiser-only methods; GetMatchLog asks
    it itself, for a log that is not closed."""

    registry: MatchRegistry
    gate: OrganiserGate
    limits: ServerLimits = dataclasses.field(default_factory=ServerLimits)
    signer: LogSigner | None = None

    async def CreateMatch(
        self, request: match_service.CreateMatchRequest, context: Context
    ) -> match_service.CreateMatchResponse:
        limits = self.limits
        live = [h for h in self.registry.hosts.values() if not h.is_over()]
        if limits.max_live_matches and len(live) >= limits.max_live_matches:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this server runs at most {limits.max_live_matches} matches at once",
            )
        waiting = sum(h.state.status == common.MATCH_STATUS_WAITING for h in live)
        if limits.max_waiting_matches and waiting >= limits.max_waiting_matches:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{waiting} matches are already waiting for their bots (this server's "
                f"limit is {limits.max_waiting_matches})",
            )
        try:
            check_request(request, limits)
            settings = apply_limits(settings_from_request(request), limits)
            created = self.registry.create(settings)
        except SettingsError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except ShuttingDown as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except LogUnavailable as exc:
            log.error("cannot create a match log", error=str(exc))
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                "the server cannot create the match's event log (its own log says why)",
            )
        host = self.registry.get(created.match_id)
        assert host is not None
        return match_service.CreateMatchResponse(
            match_id=created.match_id,
            seat_tokens=list(created.tokens),
            seed_commitment=created.commitment,
            match=self.registry.info(host),
        )

    async def GetMatch(
        self, request: match_service.GetMatchRequest, context: Context
    ) -> match_service.GetMatchResponse:
        host = await _find(self.registry, request.match_id, context)
        return match_service.GetMatchResponse(match=self.registry.info(host))

    async def ListMatches(
        self, request: match_service.ListMatchesRequest, context: Context
    ) -> match_service.ListMatchesResponse:
        return match_service.ListMatchesResponse(matches=self.registry.list(request.status))

    async def CancelMatch(
        self, request: match_service.CancelMatchRequest, context: Context
    ) -> match_service.CancelMatchResponse:
        if len(request.reason) > self.limits.max_reason_chars:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the reason has at most {self.limits.max_reason_chars} characters",
            )
        host = await _find(self.registry, request.match_id, context)
        if host.is_over():
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is already over")
        self.registry.cancel(host.match_id, request.reason or "cancelled by the organiser")
        await host.done.wait()
        return match_service.CancelMatchResponse(match=self.registry.info(host))

    async def GetMatchLog(
        self, request: match_service.GetMatchLogRequest, context: Context
    ) -> AsyncIterator[match_service.GetMatchLogResponse]:
        match_id = request.match_id
        host = self.registry.get(match_id) if len(match_id) <= MAX_ID_CHARS else None
        if host is not None:
            path = self.registry.log_path(match_id)
            closed = host.done.is_set() and host.state.over and not host.failure
        else:
            found = self.registry.logged(match_id)  # a forgotten match
            if found is None:
                await _find(self.registry, match_id, context)  # NOT_FOUND
                return
            path = found
            try:
                closed = await asyncio.to_thread(is_closed, path)
            except OSError:
                closed = False
        if not closed:
            # The log of a match not over holds every seat's cards.
            await self.gate.authorise(context, "GetMatchLog")
        try:
            async for line in stream_lines(path):
                yield match_service.GetMatchLogResponse(line=line)
        except (OSError, LogFormatError) as exc:
            log.error("cannot read a match log", match_id=match_id, error=str(exc))
            await context.abort(grpc.StatusCode.DATA_LOSS, "the match's log cannot be read")

    async def GetServerInfo(
        self, request: match_service.GetServerInfoRequest, context: Context
    ) -> match_service.GetServerInfoResponse:
        return match_service.GetServerInfoResponse(
            software_version=__version__,
            protocol_versions=list(SUPPORTED_PROTOCOL_VERSIONS),
            signing_algorithm=ALGORITHM if self.signer else "",
            signing_public_key=self.signer.public_key_text if self.signer else "",
            limits=self.limits.pb(),
        )


UNPARSABLE_PLAY = unparsable("Play")


class PlayServicer(play_service_grpc.PlayServiceServicer):
    def __init__(
        self,
        registry: MatchRegistry,
        limits: ServerLimits | None = None,
        hellos: HelloGuard | None = None,
    ) -> None:
        self.registry = registry
        self.limits = limits or ServerLimits()
        self.hellos = hellos or HelloGuard(self.limits)

    @sees_malformed
    async def Play(
        self,
        request_iterator: AsyncIterator[play_service.PlayRequest | Malformed],
        context: Context,
    ) -> AsyncIterator[play_service.PlayResponse]:
        metrics = self.registry.metrics
        if metrics is not None:
            metrics.streams.inc()
        try:
            first = await asyncio.wait_for(anext(request_iterator), HELLO_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            await self.hellos.failed_hello(context, "no hello")
            yield _refusal(
                metrics,
                play_service.REFUSAL_REASON_HELLO_EXPECTED,
                f"no Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream",
            )
            return
        if isinstance(first, Malformed):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, UNPARSABLE_PLAY)
        if first.WhichOneof("kind") != "hello":
            await self.hellos.failed_hello(context, "first message not a hello")
            yield _refusal(
                metrics,
                play_service.REFUSAL_REASON_HELLO_EXPECTED,
                "the first message must be a Hello",
            )
            return
        hello = first.hello
        token = hello.token
        found = self.registry.seat_for(token) if len(token) <= self.limits.max_id_chars else None
        if found is None:
            await self.hellos.failed_hello(context, "bad seat token")
            yield _refusal(metrics, play_service.REFUSAL_REASON_BAD_TOKEN, "no seat has this token")
            return
        host, seat = found
        structlog.contextvars.bind_contextvars(match_id=host.match_id, seat=seat)
        await self.hellos.seat_hello(context, host.match_id, seat)
        if hello.protocol_version not in SUPPORTED_PROTOCOL_VERSIONS:
            yield _refusal(
                metrics,
                play_service.REFUSAL_REASON_VERSION_NOT_SUPPORTED,
                f"protocol version {hello.protocol_version} is not supported",
            )
            return
        if host.is_over():
            yield _refusal(metrics, play_service.REFUSAL_REASON_MATCH_OVER, "the match is over")
            return
        if not self.registry.accepting:
            yield _refusal(
                metrics, play_service.REFUSAL_REASON_SHUTTING_DOWN, "the server is shutting down"
            )
            return
        session = Session(seat, context.peer())
        connect = common.ConnectCommand(
            seat=seat,
            bot_name=hello.bot_name,
            want_legal_plays=hello.want_legal_plays,
            batch_events=hello.batch_events,
        )
        session.batch = [] if hello.batch_events else None
        host.submit(common.Command(connect=connect), session)
        reader = asyncio.create_task(self._read(request_iterator, session, host))
        cause = "stream closed by the referee"
        try:
            while (msg := await session.outbox.get()) is not None:
                yield msg
        except asyncio.CancelledError:
            cause = "stream cancelled by the bot"
            raise
        finally:
            reader.cancel()
            log.debug("stream ended", cause=cause)
            _gone(host, session, cause)
        end = session.outbox.end
        if end is not None and end.code != grpc.StatusCode.OK:
            await context.abort(end.code, end.details)
        if session.malformed:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, UNPARSABLE_PLAY)

    async def _read(
        self,
        requests: AsyncIterator[play_service.PlayRequest | Malformed],
        session: Session,
        host: MatchHost,
    ) -> None:
        clock = host.clock
        cause = "stream closed by the bot"
        try:
            async for req in requests:
                if isinstance(req, Malformed):  # the stream ends here, as if the bot had closed it
                    session.malformed = True
                    break
                if req.WhichOneof("kind") != "action":
                    continue  # a second Hello on a seated stream is ignored
                act = req.action
                kind = act.WhichOneof("kind")
                command = common.ActionCommand(seat=session.seat, turn_id=act.turn_id)
                trace = act.trace_sha256
                if trace and not is_sha256_hex(trace):
                    command.malformed = True  # the action as a whole is refused
                elif kind is None or (kind == "play" and is_oversized(act.play.cards)):
                    command.malformed = True
                elif kind == "pass":
                    setattr(command, "pass", True)
                else:
                    command.cards.extend(act.play.cards)
                if trace and not command.malformed:
                    command.trace_sha256 = trace
                host.submit_inbound(Inbound(common.Command(action=command), clock.now(), session))
        except asyncio.CancelledError:
            return
        except Exception as exc:  # a broken stream: the seat is gone
            cause = f"stream error: {type(exc).__name__}"
        _gone(host, session, cause)


def _gone(host: MatchHost, session: Session, cause: str) -> None:
    """Tell the match, once, that a seat's stream ended, unless the referee ended it."""
    if session.closed or session.gone:
        return
    session.gone = True
    disconnect = common.DisconnectCommand(seat=session.seat, cause=cause)
    host.submit(common.Command(disconnect=disconnect), session)


def _refusal(
    metrics: Metrics | None, reason: play_service.RefusalReason.ValueType, message: str
) -> play_service.PlayResponse:
    if metrics is not None:
        metrics.refused(reason)
    return play_service.PlayResponse(
        refusal=play_service.Refusal(
            reason=reason,
            message=message,
            supported_versions=list(SUPPORTED_PROTOCOL_VERSIONS),
        )
    )


class SpectatorServicer(spectator_service_grpc.SpectatorServiceServicer):
    def __init__(self, registry: MatchRegistry, limits: ServerLimits | None = None) -> None:
        self.registry = registry
        self.limits = limits or ServerLimits()
        self.watching: collections.Counter[str] = collections.Counter()
        """Open WatchMatch streams per match id."""
        self.total = 0

    async def WatchMatch(
        self, request: spectator_service.WatchMatchRequest, context: Context
    ) -> AsyncIterator[spectator_service.WatchMatchResponse]:
        host = await _find(self.registry, request.match_id, context)
        limits = self.limits
        if limits.max_spectators and self.total >= limits.max_spectators:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this server serves at most {limits.max_spectators} spectators at once",
            )
        match_id = host.match_id
        per_match = limits.max_spectators_per_match
        if per_match and self.watching[match_id] >= per_match:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this match has {per_match} spectators already",
            )
        self.total += 1
        self.watching[match_id] += 1
        try:
            async for item in self._watch(host, request, context):
                yield item
        finally:
            self.total -= 1
            self.watching[match_id] -= 1
            if not self.watching[match_id]:
                del self.watching[match_id]

    async def _watch(
        self, host: MatchHost, request: spectator_service.WatchMatchRequest, context: Context
    ) -> AsyncIterator[spectator_service.WatchMatchResponse]:
        spectator = Spectator()
        live = not host.is_over()
        if live:
            host.spectators.add(spectator)  # first, so that no event falls between
        upto = host.writer.seq
        metrics = self.registry.metrics if live else None
        if metrics is not None:
            metrics.spectators.inc()
        try:
            if request.from_start or not live:
                try:
                    async for seq, event in public_events(self.registry.log_path(host.match_id)):
                        if live and seq > upto:
                            break
                        if request.from_start:
                            yield spectator_service.WatchMatchResponse(seq=seq, event=event)
                except (OSError, LogFormatError) as exc:
                    await context.abort(
                        grpc.StatusCode.DATA_LOSS,
                        f"cannot read the match log: {type(exc).__name__}",
                    )
            if not live:
                return
            while (item := await spectator.outbox.get()) is not None:
                yield spectator_service.WatchMatchResponse(seq=item[0], event=item[1])
            end = spectator.outbox.end
            if end is not None and end.code != grpc.StatusCode.OK:
                await context.abort(end.code, end.details)
        finally:
            host.spectators.discard(spectator)
            if metrics is not None:
                metrics.spectators.dec()


def add_services(
    server: grpc.aio.Server,
    *,
    match: MatchServicer | None = None,
    play: PlayServicer | None = None,
    spectate: SpectatorServicer | None = None,
    lobby: LobbyServicer | None = None,
) -> list[str]:
    """Serve those given on ``server`` (an organiser's listener of its own has
    MatchService alone, the jailed bots' PlayService alone); returns their full names, for
    reflection."""
    adders: tuple[tuple[object, Callable[[Any, grpc.aio.Server], None]], ...] = (
        (match, match_service_grpc.add_MatchServiceServicer_to_server),
        (play, play_service_grpc.add_PlayServiceServicer_to_server),
        (spectate, spectator_service_grpc.add_SpectatorServiceServicer_to_server),
        (lobby, lobby_service_grpc.add_LobbyServiceServicer_to_server),
    )
    names = []
    for (servicer, add), name in zip(adders, SERVICE_NAMES, strict=True):
        if servicer is not None:
            add(servicer, server)
            names.append(name)
    return names
