"""The gRPC types the server's servicers and interceptors are written against, and what
every stream that opens with a hello shares: how long it may take to say it."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc

Context = grpc.aio.ServicerContext[Any, Any]
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"  # not subscriptable at run time
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[Handler]]
"""What a server interceptor calls to find the handler of a call."""

Check = Callable[[Any, Context], Awaitable[None]]
"""Awaited before a call's behaviour with its request; it may abort the call."""

HELLO_TIMEOUT_S = 30.0
"""A Play or a Lobby stream that has not said Hello this long after it opened is closed."""


class HandlerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """A server interceptor that looks at each call's handler once it is found and may
    hand back another (``wrap``: the call's full method name, its handler)."""

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        return self.wrap(handler_call_details.method, handler)

    def wrap(self, method: str, handler: Handler) -> Handler:
        raise NotImplementedError


def checked_first(
    handler: Handler, check: Check, deserializer: Callable[[bytes], Any] | None = None
) -> Handler | None:
    """``handler`` with ``check(request, context)`` awaited before its behaviour, for the
    calls with one request: a unary answer, or a response stream (an async generator, or
    written with ``context.write``); None for a request stream. ``deserializer``: the
    request's, in place of the handler's own."""
    parse = deserializer or handler.request_deserializer
    answer = handler.response_serializer
    if handler.unary_unary is not None:
        behaviour: Any = handler.unary_unary

        async def unary(request: Any, context: Context) -> Any:
            await check(request, context)
            return await behaviour(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=parse, response_serializer=answer
        )
    if handler.unary_stream is None:
        return None
    stream_behaviour: Any = handler.unary_stream
    if inspect.isasyncgenfunction(stream_behaviour) or inspect.isasyncgenfunction(
        getattr(stream_behaviour, "__func__", None)
    ):

        async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
            await check(request, context)
            async for item in stream_behaviour(request, context):
                yield item

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=parse, response_serializer=answer
        )

    async def writer(request: Any, context: Context) -> Any:  # writes with context.write
        await check(request, context)
        return await stream_behaviour(request, context)

    return grpc.unary_stream_rpc_method_handler(
        writer, request_deserializer=parse, response_serializer=answer
    )


__all__ = [
    "HELLO_TIMEOUT_S",
    "Check",
    "Context",
    "Continuation",
    "Handler",
    "HandlerInterceptor",
    "checked_first",
]
