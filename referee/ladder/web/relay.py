"""A running match's public events, relayed from the worker's referee that plays it.

A worker records where its match can be watched (``matches.live_address``, its
referee's public address, and ``live_id``, that referee's id for the match). The ladder's
web follows the match through that referee's ``SpectatorService.WatchMatch`` from its
start: the public events only (no card of a hand before it ends), exactly what any
spectator of that referee may see. One relay per match feeds the web's shared channel
(``referee.web.channels.MatchChannel``), so viewers add no load on the worker.

The address comes from the ladder's own database, written by its workers; it is still
checked to be a plain ``host:port`` before anything connects to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

from google.protobuf import json_format

from referee.client.channels import client_channel
from referee.client.spectate import follow_match
from referee.protocol import common
from referee.web.feed import ViewerTooSlow

ADDRESS = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,253}):\d{1,5}")


class RelaySubscription:
    """``referee.web.feed.EventSource`` over a referee's WatchMatch."""

    def __init__(self, address: str, live_id: str, limit: int) -> None:
        if not ADDRESS.fullmatch(address):
            raise ValueError(f"not a referee address: {address[:100]!r}")
        self._channel = client_channel(address)
        self._queue: asyncio.Queue[tuple[int, dict[str, Any]] | None] = asyncio.Queue(limit)
        self._overflow = False
        self._ended = False
        self._task = asyncio.create_task(self._pump(live_id), name=f"ladder relay {live_id}")

    def _put(self, seq: int, event: common.Event) -> bool:
        as_json = json_format.MessageToDict(event, preserving_proto_field_name=True)
        try:
            self._queue.put_nowait((seq, as_json))
        except asyncio.QueueFull:
            self._overflow = True
            return False
        return True

    async def _pump(self, live_id: str) -> None:
        try:  # until the worker's referee ends the match, goes away or forgets it
            await follow_match(self._channel, live_id, self._put, from_start=True)
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
        asyncio.get_running_loop().create_task(self._channel.close(grace=None))


__all__ = ["RelaySubscription"]
