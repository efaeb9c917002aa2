"""The gRPC servicers: translate messages and hand commands to match runners."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import structlog

from referee.actions import is_oversized
from referee.log.reader import LogFormatError, read_log_lines
from referee.protocol import (
    SUPPORTED_PROTOCOL_VERSIONS,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.server.registry import LogUnavailable, MatchRegistry, ShuttingDown
from referee.server.runner import ActionCmd, GoneCmd, HelloCmd, MatchRunner, Session
from referee.server.settings import SettingsError, settings_from_request

log = structlog.get_logger("referee.rpc")

Context = grpc.aio.ServicerContext[Any, Any]

HELLO_TIMEOUT_S = 30.0


async def _find(registry: MatchRegistry, match_id: str, context: Context) -> MatchRunner:
    runner = registry.get(match_id)
    if runner is None:
        message = f"no match {match_id!r}"
        logged = registry.logged(match_id)
        if logged is not None:
            message = (
                f"match {match_id} is over and no longer held in memory (this server keeps "
                f"the last {registry.keep_finished} finished matches); its log is {logged}"
            )
        await context.abort(grpc.StatusCode.NOT_FOUND, message)
    assert runner is not None
    return runner


class MatchServicer(match_service_grpc.MatchServiceServicer):
    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    async def CreateMatch(
        self, request: match_service.CreateMatchRequest, context: Context
    ) -> match_service.CreateMatchResponse:
        try:
            settings = settings_from_request(request)
            runner = self.registry.create(settings)
        except SettingsError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except (ShuttingDown, LogUnavailable) as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        log.info("match created", match_id=runner.match_id, profile=settings.rules.profile)
        return match_service.CreateMatchResponse(
            match_id=runner.match_id,
            seat_tokens=runner.tokens,
            seed_commitment=runner.commitment,
            match=self.registry.info(runner),
        )

    async def GetMatch(
        self, request: match_service.GetMatchRequest, context: Context
    ) -> match_service.GetMatchResponse:
        runner = await _find(self.registry, request.match_id, context)
        return match_service.GetMatchResponse(match=self.registry.info(runner))

    async def ListMatches(
        self, request: match_service.ListMatchesRequest, context: Context
    ) -> match_service.ListMatchesResponse:
        return match_service.ListMatchesResponse(matches=self.registry.list(request.status))

    async def CancelMatch(
        self, request: match_service.CancelMatchRequest, context: Context
    ) -> match_service.CancelMatchResponse:
        runner = await _find(self.registry, request.match_id, context)
        if runner.is_over():
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is already over")
        self.registry.cancel(runner, request.reason)
        await runner.done.wait()
        return match_service.CancelMatchResponse(match=self.registry.info(runner))

    async def GetMatchLog(
        self, request: match_service.GetMatchLogRequest, context: Context
    ) -> AsyncIterator[match_service.GetMatchLogResponse]:
        logged = self.registry.logged(request.match_id)
        if self.registry.get(request.match_id) is None and logged is not None:
            path = logged  # a forgotten match: its log is all there is
        else:
            path = (await _find(self.registry, request.match_id, context)).log_path
        lines, _ = read_log_lines(path)
        for line in lines:
            yield match_service.GetMatchLogResponse(line=line)


class PlayServicer(play_service_grpc.PlayServiceServicer):
    def __init__(self, registry: MatchRegistry) -> None:
        self.registry = registry

    async def Play(
        self,
        request_iterator: AsyncIterator[play_service.PlayRequest],
        context: Context,
    ) -> AsyncIterator[play_service.PlayResponse]:
        try:
            first = await asyncio.wait_for(anext(request_iterator), HELLO_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            yield _refusal(
                play_service.REFUSAL_REASON_HELLO_EXPECTED,
                f"no Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream",
            )
            return
        if first.WhichOneof("kind") != "hello":
            yield _refusal(
                play_service.REFUSAL_REASON_HELLO_EXPECTED, "the first message must be a Hello"
            )
            return
        hello = first.hello
        found = self.registry.seat_for(hello.token)
        if found is None:
            yield _refusal(play_service.REFUSAL_REASON_BAD_TOKEN, "no seat has this token")
            return
        runner, seat = found
        structlog.contextvars.bind_contextvars(match_id=runner.match_id, seat=seat)
        if runner.is_over():
            yield _refusal(play_service.REFUSAL_REASON_MATCH_OVER, "the match is over")
            return
        if not self.registry.accepting:
            yield _refusal(play_service.REFUSAL_REASON_SHUTTING_DOWN, "the server is shutting down")
            return
        session = Session(context.peer())
        runner.submit(HelloCmd(session, hello, seat))
        reader = asyncio.create_task(self._read(request_iterator, session, runner))
        cause = "stream closed by the referee"
        try:
            while True:
                msg = await session.outbox.get()
                if msg is None:
                    break
                yield msg
        except asyncio.CancelledError:
            cause = "stream cancelled by the bot"
            raise
        finally:
            reader.cancel()
            log.debug("stream ended", cause=cause)
            if not session.closed:
                runner.submit(GoneCmd(session, cause))

    async def _read(
        self,
        requests: AsyncIterator[play_service.PlayRequest],
        session: Session,
        runner: MatchRunner,
    ) -> None:
        loop = asyncio.get_running_loop()
        cause = "stream closed by the bot"
        try:
            async for req in requests:
                if req.WhichOneof("kind") == "action":
                    action = req.action
                    if is_oversized(action.play.cards):
                        action = play_service.Action(turn_id=action.turn_id)  # malformed
                    runner.submit(ActionCmd(session, action, loop.time()))
                # A second Hello on a seated stream is ignored.
        except asyncio.CancelledError:
            return
        except Exception as exc:  # a broken stream: the seat is gone
            cause = f"stream error: {type(exc).__name__}"
        if not session.closed:
            runner.submit(GoneCmd(session, cause))


def _refusal(
    reason: play_service.RefusalReason.ValueType, message: str
) -> play_service.PlayResponse:
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
        runner = await _find(self.registry, request.match_id, context)
        try:
            queue = runner.subscribe(request.from_start)
        except (OSError, LogFormatError) as exc:
            await context.abort(grpc.StatusCode.DATA_LOSS, f"cannot read the match log: {exc}")
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                seq, event = item
                yield spectator_service.WatchMatchResponse(seq=seq, event=event)
        finally:
            if queue in runner.spectators:
                runner.spectators.remove(queue)
