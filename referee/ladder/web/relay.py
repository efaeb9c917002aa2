"""A running match's public events, relayed from the worker's referee that plays it.

A worker records where its match can be watched (``matches.live_address``, its
referee's public address, and ``live_id``, that referee's id for the match). The ladder's
web follows the match through that referee's ``SpectatorService.WatchMatch`` from its
start: the public events only (no card of a hand before it ends), exactly what any
spectator of that referee may see. One relay per match feeds the web's shared channel
(``referee.web.app.MatchChannel``), so viewers add no load on the worker.

The address comes from the ladder's own database, written by its workers; it is still
checked to be a plain ``host:port`` before anything connects to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

import grpc
from google.protobuf import json_format

from referee.protocol import spectator_service, spectator_service_grpc
from referee.web.feed import ViewerTooSlow

ADDRESS = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,253}):\d{1,5}")


class RelaySubscription:
    """``referee.web.feed.EventSource`` over a referee's WatchMatch."""

    def __init__(self, address: str, live_id: str, limit: int) -> None:
        if not ADDRESS.fullmatch(address):
            raise ValueError(f"not a referee address: {address[:100]!r}")
        self._channel = grpc.aio.insecure_channel(address)
        stub = spectator_service_grpc.SpectatorServiceStub(self._channel)
        self._call = stub.WatchMatch(
            spectator_service.WatchMatchRequest(match_id=live_id, from_start=True)
        )
        self._queue: asyncio.Queue[tuple[int, dict[str, Any]] | None] = asyncio.Queue(limit)
        self._overflow = False
        self._ended = False
        self._task = asyncio.create_task(self._pump(), name=f"ladder relay {live_id}")

    async def _pump(self) -> None:
        try:
            async for item in self._call:
                event = json_format.MessageToDict(item.event, preserving_proto_field_name=True)
                try:
                    self._queue.put_nowait((item.seq, event))
                except asyncio.QueueFull:
                    self._overflow = True
                    return
        except grpc.aio.AioRpcError:
            pass  # the worker's referee went away or forgot the match: the feed ends
        finally:
            self._ended = True
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)

    async def next(self, wait_s: float) -> tuple[int, dict[str, Any]] | None:
        if self._ended and self._queue.empty():
            item = None
        else:
            try:
                item = await asyncio.wait_for(self._queue.get(), wait_s)
            except TimeoutError:
                return None
        if item is None:
            if self._overflow:
                raise ViewerTooSlow("the relay fell behind the match")
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        self._task.cancel()
        self._call.cancel()
        asyncio.get_running_loop().create_task(self._channel.close(grace=None))


__all__ = ["RelaySubscription"]
