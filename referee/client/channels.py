"""A channel to a referee, and the organiser's token on every call made through it.

The organiser's authority is one bearer token, sent as the metadata
``authorization: Bearer <token>`` (the server's gate, ``referee.server.auth``, checks
it). It is added by an interceptor, so that no call can go out without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from referee.client.tls import ClientTls

DEFAULT_ADDRESS = "127.0.0.1:50051"
"""Where ``referee serve`` listens unless told otherwise (the kits' default too)."""


def client_channel(
    address: str,
    tls: ClientTls | None = None,
    *,
    options: Sequence[tuple[str, str | int]] = (),
    interceptors: Sequence[grpc.aio.ClientInterceptor] | None = None,
) -> grpc.aio.Channel:
    """A channel to a referee: TLS when ``tls`` is given, else plaintext; ``options``:
    grpc's channel arguments. Raises TlsError for a TLS file that cannot be used."""
    if tls is None:
        return grpc.aio.insecure_channel(address, options=list(options), interceptors=interceptors)
    return grpc.aio.secure_channel(
        address,
        tls.credentials(),
        options=[*options, *tls.options()],
        interceptors=interceptors,
    )


def bearer_metadata(token: str) -> tuple[tuple[str, str]]:
    """The metadata an organiser sends with each call."""
    return (("authorization", f"Bearer {token}"),)


class _Bearer:
    """Adds the organiser's token to a call's metadata."""

    def __init__(self, token: str) -> None:
        self.pair = bearer_metadata(token)[0]

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self.pair)
        return grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            metadata,
            details.credentials,
            details.wait_for_ready,
        )


# grpc.aio files an interceptor under the first kind of call it handles: one per kind.
class _BearerUnary(_Bearer, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(self._details(client_call_details), request)


class _BearerStream(_Bearer, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    async def intercept_unary_stream(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(self._details(client_call_details), request)


def organiser_channel(address: str, token: str, tls: ClientTls | None = None) -> grpc.aio.Channel:
    """A channel whose every call carries the organiser's token (plaintext, or TLS)."""
    interceptors: list[Any] = [_BearerUnary(token), _BearerStream(token)]
    return client_channel(address, tls, interceptors=interceptors)
