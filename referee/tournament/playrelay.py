"""PlayService, and nothing else, from the sandboxes' socket to a referee elsewhere.

A referee in the tournament's process serves its sandboxed bots on a second gRPC server
that has PlayService alone (``RefereeServer(bot_listen=...)``). A ``referee serve`` on
another machine has no such listener, so the tournament serves the sandboxes' Unix
socket itself and forwards each ``PlayService.Play`` stream to it, message by message,
as opaque bytes. Any other call (creating, cancelling, listing or watching matches,
fetching logs: what would let a bot read the finished matches of its deal group) is
UNIMPLEMENTED on the socket, just as on the local bots' server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc

from referee.client.channels import client_channel
from referee.client.tls import ClientTls
from referee.protocol import play_service
from referee.table.referees import JAILED_SERVER_OPTIONS

SERVICE = play_service.DESCRIPTOR.services_by_name["PlayService"].full_name
METHOD = f"/{SERVICE}/Play"


class PlayRelay:
    """Serves ``listen`` (``unix:PATH``) and relays Play streams to ``upstream``."""

    def __init__(self, listen: str, upstream: str, tls: ClientTls | None = None) -> None:
        self.listen = listen
        self.upstream = upstream
        self.tls = tls
        """TLS to the referee server, as the tournament's own calls use."""
        self._channel: grpc.aio.Channel | None = None
        self._server: grpc.aio.Server | None = None

    async def start(self) -> None:
        self._channel = client_channel(self.upstream, self.tls)
        self._server = grpc.aio.server(options=JAILED_SERVER_OPTIONS)
        handler = grpc.stream_stream_rpc_method_handler(self._play)  # bytes in, bytes out
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Play": handler}),)
        )
        if not self._server.add_insecure_port(self.listen):
            raise OSError(f"cannot listen on {self.listen}")
        await self._server.start()

    async def _play(
        self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        assert self._channel is not None
        relay = self._channel.stream_stream(METHOD, None, None)  # opaque bytes both ways
        call = relay(None)

        async def forward() -> None:
            async for request in requests:
                await call.write(request)
            await call.done_writing()

        pump = asyncio.create_task(forward())
        try:
            async for response in call:
                yield response
        except grpc.aio.AioRpcError as exc:
            await context.abort(exc.code(), exc.details() or "")
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await pump
            call.cancel()

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(1.0)
        if self._channel is not None:
            await self._channel.close(grace=None)


__all__ = ["PlayRelay"]
