"""Connections the server feeds: a seat's stream and a spectator's, each with a bounded
outbox, so that a reader that falls behind is cut off instead of growing the referee.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from typing import Generic, TypeVar

import grpc

from referee.protocol import common, play_service

DEFAULT_SEAT_OUTBOX = 1024
"""Messages a seat's stream may have waiting (a whole match sends a seat ~1,000)."""
DEFAULT_SPECTATOR_OUTBOX = 4096
LOW_WATER_FRACTION = 4
"""An outbox is drained once it is down to a quarter of its limit."""

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class StreamEnd:
    """How the server ends a stream: a gRPC status and its details (OK: a plain end)."""

    code: grpc.StatusCode = grpc.StatusCode.OK
    details: str = ""


class Outbox(Generic[T]):
    """Messages waiting for one reader; ``put`` refuses past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: collections.deque[T] = collections.deque()
        self._ready = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self.low_water = limit // LOW_WATER_FRACTION
        self.end: StreamEnd | None = None
        """Set once the stream must end (after the queued messages)."""

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: T) -> bool:
        """Queue ``item``; False (nothing queued) when the reader is ``limit`` behind."""
        if self.end is not None:
            return True  # closing: the message is dropped quietly
        if len(self._items) >= self.limit:
            return False
        self._items.append(item)
        self._ready.set()
        if len(self._items) > self.low_water:
            self._drained.clear()
        return True

    def close(self, end: StreamEnd | None = None) -> None:
        if self.end is None:
            self.end = end or StreamEnd()
            self._ready.set()
            self._drained.set()

    @property
    def backlogged(self) -> bool:
        return len(self._items) > self.low_water and self.end is None

    async def drained(self) -> None:
        """Wait until the reader is down to the low-water mark (or the outbox closed)."""
        await self._drained.wait()

    @property
    def closed(self) -> bool:
        return self.end is not None

    async def get(self) -> T | None:
        """The next message; None once the outbox is closed and drained."""
        while not self._items:
            if self.end is not None:
                return None
            self._ready.clear()
            await self._ready.wait()
        item = self._items.popleft()
        if len(self._items) <= self.low_water:
            self._drained.set()
        return item


class Session:
    """One bot stream: the outbox its RPC handler drains, and the seat it asked for."""

    def __init__(self, seat: int, peer: str = "", limit: int = DEFAULT_SEAT_OUTBOX) -> None:
        self.seat = seat
        self.peer = peer
        self.outbox: Outbox[play_service.PlayResponse] = Outbox(limit)
        self.seated = False
        """The match accepted this stream for its seat (until it ends)."""
        self.gone = False
        """The match was told that this stream ended."""
        self.malformed = False
        """The bot sent bytes that are not a PlayRequest (its call ends INVALID_ARGUMENT)."""
        self.batch: list[common.Event] | None = None
        """Events held for the next prompt or batch (Hello.batch_events); None: live."""

    def send(self, msg: play_service.PlayResponse) -> bool:
        """Queue a message; a batching stream holds events for its next prompt (or its
        hand's end) and is not told of its accepted actions. False when over the limit."""
        batch = self.batch
        if batch is None:
            return self.outbox.put(msg)
        kind = msg.WhichOneof("kind")
        if kind == "event":
            batch.append(msg.event)
            if msg.event.WhichOneof("kind") not in ("hand_ended", "match_ended"):
                return True
            flush = play_service.PlayResponse(batch=play_service.EventBatch(events=batch))
            batch.clear()
            return self.outbox.put(flush)
        if kind == "prompt":
            msg.prompt.events.extend(batch)
            batch.clear()
        elif kind == "result" and msg.result.accepted:
            return True
        return self.outbox.put(msg)

    def close(self, end: StreamEnd | None = None) -> None:
        self.seated = False
        self.outbox.close(end)

    @property
    def closed(self) -> bool:
        return self.outbox.closed


class Spectator:
    """One WatchMatch stream: public events (seq, event) in order."""

    def __init__(self, limit: int = DEFAULT_SPECTATOR_OUTBOX) -> None:
        self.outbox: Outbox[tuple[int, common.Event]] = Outbox(limit)
