"""The gRPC servicers: translate messages and hand commands to the match hosts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import structlog

from referee.log.reader import LogFormatError
from referee.log.stream import public_events, stream_lines
from referee.match.actions import is_oversized
from referee.match.settings import SettingsError, settings_from_request
from referee.protocol import (
    SUPPORTED_PROTOCOL_VERSIONS,
    common,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.server.host import Inbound, MatchHost
from referee.server.metrics import Metrics
from referee.server.registry import LogUnavailable, MatchRegistry, ShuttingDown
from referee.server.sessions import Session, Spectator

log = structlog.get_logger("referee.rpc")

Context = grpc.aio.ServicerContext[Any, Any]

HELLO_TIMEOUT_S = 30.0


async def _find(registry: MatchRegistry, match_id: str, context: Context) -> MatchHost:
    host = registry.get(match_id)
    if host is None:
        message = f"no match {match_id!r}"
        if registry.logged(match_id) is not None:
            message = (
                f"match {match_id} is over and no longer held in memory (this server keeps "
                f"the last {registry.keep_finished} finished matches); GetMatchLog serves its log"
            )
        await context.abort(grpc.StatusCode.NOT_FOUND, message)
    assert host is not None
    return host


class MatchServicer(match_service_grpc.MatchServiceServicer):
    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    async def CreateMatch(
        self, request: match_service.CreateMatchRequest, context: Context
    ) -> match_service.CreateMatchResponse:
        try:
            settings = settings_from_request(request)
            created = self.registry.create(settings)
        except SettingsError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except (ShuttingDown, LogUnavailable) as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
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
        host = await _find(self.registry, request.match_id, context)
        if host.is_over():
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is already over")
        self.registry.cancel(host.match_id, request.reason or "cancelled by the organiser")
        await host.done.wait()
        return match_service.CancelMatchResponse(match=self.registry.info(host))

    async def GetMatchLog(
        self, request: match_service.GetMatchLogRequest, context: Context
    ) -> AsyncIterator[match_service.GetMatchLogResponse]:
        if self.registry.get(request.match_id) is None:
            path = self.registry.logged(request.match_id)  # a forgotten match
            if path is None:
                await _find(self.registry, request.match_id, context)
        else:
            path = self.registry.log_path(request.match_id)
        assert path is not None
        async for line in stream_lines(path):
            yield match_service.GetMatchLogResponse(line=line)


class PlayServicer(play_service_grpc.PlayServiceServicer):
    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    async def Play(
        self,
        request_iterator: AsyncIterator[play_service.PlayRequest],
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
            yield _refusal(
                metrics,
                play_service.REFUSAL_REASON_HELLO_EXPECTED,
                f"no Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream",
            )
            return
        if first.WhichOneof("kind") != "hello":
            yield _refusal(
                metrics,
                play_service.REFUSAL_REASON_HELLO_EXPECTED,
                "the first message must be a Hello",
            )
            return
        hello = first.hello
        found = self.registry.seat_for(hello.token)
        if found is None:
            yield _refusal(metrics, play_service.REFUSAL_REASON_BAD_TOKEN, "no seat has this token")
            return
        host, seat = found
        structlog.contextvars.bind_contextvars(match_id=host.match_id, seat=seat)
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

    async def _read(
        self,
        requests: AsyncIterator[play_service.PlayRequest],
        session: Session,
        host: MatchHost,
    ) -> None:
        clock = host.clock
        cause = "stream closed by the bot"
        try:
            async for req in requests:
                if req.WhichOneof("kind") != "action":
                    continue  # a second Hello on a seated stream is ignored
                act = req.action
                kind = act.WhichOneof("kind")
                command = common.ActionCommand(seat=session.seat, turn_id=act.turn_id)
                if kind is None or (kind == "play" and is_oversized(act.play.cards)):
                    command.malformed = True
                elif kind == "pass":
                    setattr(command, "pass", True)
                else:
                    command.cards.extend(act.play.cards)
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
    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    async def WatchMatch(
        self, request: spectator_service.WatchMatchRequest, context: Context
    ) -> AsyncIterator[spectator_service.WatchMatchResponse]:
        host = await _find(self.registry, request.match_id, context)
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
