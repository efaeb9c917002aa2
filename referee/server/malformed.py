"""Requests that are not the message they claim to be: INVALID_ARGUMENT, not a crash.

gRPC Python parses a unary request before the servicer runs; bytes that do not parse
raise inside grpc, which answers UNKNOWN with a Python class name, and when the client
has already gone prints a traceback on the server's stderr. This interceptor parses
first: a request that does not parse is refused with INVALID_ARGUMENT by the referee
itself, quietly. (Streamed requests are parsed as the servicer reads them; a garbled
message there ends the stream, as the servicers already handle.)
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

Context = grpc.aio.ServicerContext[Any, Any]


class _Malformed:
    """The parsed value of bytes that are not the request's message."""


MALFORMED = _Malformed()


class MalformedRequests(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming or handler.request_deserializer is None:
            return handler
        parse = handler.request_deserializer
        name = handler_call_details.method.rsplit("/", 1)[-1]

        def safe_parse(data: bytes) -> Any:
            try:
                return parse(data)
            except Exception:  # DecodeError, or anything a parser raises on garbage
                return MALFORMED

        async def refuse(context: Context) -> None:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"the request of {name} cannot be parsed"
            )

        if handler.unary_unary is not None:
            behaviour: Any = handler.unary_unary

            async def unary(request: Any, context: Context) -> Any:
                if request is MALFORMED:
                    await refuse(context)
                return await behaviour(request, context)

            return grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=safe_parse,
                response_serializer=handler.response_serializer,
            )
        stream_behaviour: Any = handler.unary_stream
        if inspect.isasyncgenfunction(stream_behaviour) or inspect.isasyncgenfunction(
            getattr(stream_behaviour, "__func__", None)
        ):

            async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
                if request is MALFORMED:
                    await refuse(context)
                async for item in stream_behaviour(request, context):
                    yield item

            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=safe_parse,
                response_serializer=handler.response_serializer,
            )

        async def writer(request: Any, context: Context) -> Any:  # writes with context.write
            if request is MALFORMED:
                await refuse(context)
            return await stream_behaviour(request, context)

        return grpc.unary_stream_rpc_method_handler(
            writer,
            request_deserializer=safe_parse,
            response_serializer=handler.response_serializer,
        )
