"""Requests that are not the message they claim to be: INVALID_ARGUMENT, not a crash.

gRPC Python parses a unary request before the servicer runs; bytes that do not parse
raise inside grpc, which answers UNKNOWN with a Python class name, and when the client
has already gone prints a traceback on the server's stderr. This interceptor parses
first: a request that does not parse is refused with INVALID_ARGUMENT by the referee
itself, counted (``pusoy_referee_malformed_requests_total{listener="grpc"}``) and
logged a few lines a minute at most. In a request stream, a message that does not parse
ends the stream there (as if the client had closed its side), and the call then ends
with INVALID_ARGUMENT.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from referee.server.rpc import Context, Handler, HandlerInterceptor, checked_first
from referee.service.rates import limited_log

if TYPE_CHECKING:
    from referee.server.metrics import Metrics


class Malformed:
    """The parsed value of bytes that are not the request's message."""


MALFORMED = Malformed()


def unparsable(method: str) -> str:
    """The INVALID_ARGUMENT details for a request of ``method`` that does not parse."""
    return f"the request of {method} cannot be parsed"


SEES_MALFORMED = "sees_malformed_requests"
"""Set (by ``sees_malformed``) on a stream handler that takes MALFORMED items itself."""

F = TypeVar("F", bound=Callable[..., Any])


def sees_malformed(handler: F) -> F:
    """Mark a request-stream handler that checks each request for MALFORMED itself (and
    ends its call with INVALID_ARGUMENT on one), so that its stream is not wrapped: the
    bots' stream carries every move, and a wrapper costs a generator step a message."""
    setattr(handler, SEES_MALFORMED, True)
    return handler


LINES_PER_MINUTE = 5


class MalformedRequests(HandlerInterceptor):
    def __init__(self, metrics: Metrics | None = None) -> None:
        self.metrics = metrics
        self.log = limited_log("referee.requests", LINES_PER_MINUTE)

    def _seen(self, method: str) -> None:
        if self.metrics is not None:
            self.metrics.malformed_request("grpc", "unparsable")
        self.log.warning("unparsable", "request does not parse", method=method)

    def wrap(self, method: str, handler: Handler) -> Handler:
        if handler.request_deserializer is None:
            return handler
        parse = handler.request_deserializer
        name = method.rsplit("/", 1)[-1]

        def safe_parse(data: bytes) -> Any:
            try:
                return parse(data)
            except Exception:  # DecodeError, or anything a parser raises on garbage
                self._seen(name)
                return MALFORMED

        async def refuse(context: Context) -> None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, unparsable(name))

        if handler.request_streaming and getattr(handler.stream_stream, SEES_MALFORMED, False):
            # The servicer checks for MALFORMED itself: no wrapper around every message.
            checked: Any = handler.stream_stream
            return grpc.stream_stream_rpc_method_handler(
                checked,
                request_deserializer=safe_parse,
                response_serializer=handler.response_serializer,
            )
        if handler.request_streaming:
            return _stream_requests(handler, safe_parse, refuse)

        async def check(request: Any, context: Context) -> None:
            if request is MALFORMED:
                await refuse(context)

        return checked_first(handler, check, safe_parse) or handler


def _stream_requests(
    handler: grpc.RpcMethodHandler[Any, Any],
    safe_parse: Callable[[bytes], Any],
    refuse: Callable[[Context], Awaitable[None]],
) -> grpc.RpcMethodHandler[Any, Any]:
    """A request stream cut at its first message that does not parse; the call then
    ends with INVALID_ARGUMENT (for servicers written as async generators)."""
    behaviour: Any = handler.stream_stream
    if handler.stream_stream is None or not inspect.isasyncgenfunction(
        getattr(behaviour, "__func__", behaviour)
    ):
        return handler

    async def stream(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
        bad = False

        async def parsed() -> AsyncIterator[Any]:
            nonlocal bad
            async for item in requests:
                if item is MALFORMED:
                    bad = True
                    return
                yield item

        async for out in behaviour(parsed(), context):
            yield out
        if bad:
            await refuse(context)

    return grpc.stream_stream_rpc_method_handler(
        stream,
        request_deserializer=safe_parse,
        response_serializer=handler.response_serializer,
    )
