"""The gRPC types the server's servicers and interceptors are written against, and what
every stream that opens with a hello shares: how long it may take to say it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import grpc

Context = grpc.aio.ServicerContext[Any, Any]
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"  # not subscriptable at run time
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[Handler]]
"""What a server interceptor calls to find the handler of a call."""

HELLO_TIMEOUT_S = 30.0
"""A Play or a Lobby stream that has not said Hello this long after it opened is closed."""

__all__ = ["HELLO_TIMEOUT_S", "Context", "Continuation", "Handler"]
