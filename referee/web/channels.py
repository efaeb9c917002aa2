"""A running match's live feed, shared by all its viewers (``MatchChannel``: its public
events folded once into the viewer's ops), and ``send_live``, the one loop that sends a
match's channel to one viewer, for ``referee serve --http`` and the ladder's web alike."""

from __future__ import annotations

import asyncio
import collections
import json
import time
from collections.abc import Callable

import structlog
from aiohttp import web

from referee.view.fold import Folder
from referee.web.common import LOOK_S, clock_event, viewer_gone
from referee.web.feed import EventSource, ViewerTooSlow

log = structlog.get_logger("referee.web")


class MatchChannel:
    """One running match's live feed, folded once and shared by all its viewers.

    A task reads the match's public events and appends each op, encoded as a
    Server-Sent Event, to ``messages``; each viewer keeps its own place in that list. So a
    viewer costs no fold and no buffer of its own, and a slow one only waits on its own
    socket (cut off when a write takes too long). The list lives while the channel has
    viewers, and holds one short message per public event of the match.
    """

    def __init__(self, match_id: str, subscription: EventSource) -> None:
        self.match_id = match_id
        self.messages: list[tuple[int, bytes]] = []
        self.ended = False
        self.failed = False
        self._subscription = subscription
        self._folder = Folder(match_id)
        self._grew = asyncio.Event()
        self._task = asyncio.create_task(self._pump(), name=f"web feed {match_id}")

    async def _pump(self) -> None:
        try:
            while True:
                item = await self._subscription.next(60.0)
                if item is None:
                    continue
                seq, event = item
                op = self._folder.feed(seq, event)
                data = json.dumps(op, ensure_ascii=True, separators=(",", ":"))
                self.messages.append((seq, f"id: {seq}\ndata: {data}\n\n".encode()))
                self._wake()
        except StopAsyncIteration:
            self.ended = True
        except ViewerTooSlow:  # the referee got that far ahead of this one task
            log.warning("web feed fell behind the match", match_id=self.match_id)
            self.failed = True
        finally:
            self._subscription.close()
            self._wake()

    def _wake(self) -> None:
        self._grew.set()
        self._grew = asyncio.Event()

    async def wait(self, seen: int, wait_s: float) -> bool:
        """Until there are more than ``seen`` messages or the feed ended; False on timeout."""
        if len(self.messages) > seen or self.ended or self.failed:
            return True
        return await woken(self._grew, wait_s)

    def close(self) -> None:
        self._task.cancel()


async def woken(event: asyncio.Event, wait_s: float) -> bool:
    """Whether ``event`` is set within ``wait_s`` seconds."""
    try:
        await asyncio.wait_for(event.wait(), wait_s)
    except TimeoutError:
        return False
    return True


class LiveChannels:
    """A web front's live streams: each running match's shared channel, made by its
    first viewer and closed after its last, and the streams open per key (a match, or
    a list the front keeps current), which its limits count."""

    def __init__(self) -> None:
        self.viewers: collections.Counter[str] = collections.Counter()
        self.channels: dict[str, MatchChannel] = {}

    @property
    def total(self) -> int:
        """Live streams open now, all keys together."""
        return sum(self.viewers.values())

    def join(self, match_id: str, source: Callable[[], EventSource]) -> MatchChannel:
        """The match's channel for one more viewer, started on ``source()`` if it has
        none yet (or its last one failed); what ``source`` raises, the viewer hears."""
        channel = self.channels.get(match_id)
        if channel is None or channel.failed:
            channel = self.channels[match_id] = MatchChannel(match_id, source())
        self.viewers[match_id] += 1
        return channel

    def leave(self, match_id: str, channel: MatchChannel) -> None:
        """A viewer of ``channel`` is gone; after the last one, the channel stops."""
        self.viewers[match_id] -= 1
        if self.viewers[match_id] <= 0:
            del self.viewers[match_id]
            if self.channels.get(match_id) is channel:
                del self.channels[match_id]
            channel.close()

    def close(self) -> None:
        for channel in list(self.channels.values()):
            channel.close()


async def send_live(
    request: web.Request,
    response: web.StreamResponse,
    channel: MatchChannel,
    *,
    last: int,
    write_timeout_s: float,
    heartbeat_s: float | None = None,
) -> None:
    """Send ``channel``'s messages after event ``last`` to one viewer as they come, until
    the match ends, its feed fails or the viewer goes; with ``heartbeat_s``, the server's
    clock on a stream idle that long. TimeoutError when a write waits longer than
    ``write_timeout_s`` (the viewer is cut off), ConnectionResetError when it went."""
    sent = 0
    quiet = time.monotonic()
    await asyncio.wait_for(response.write(b"retry: 2000\n\n" + clock_event()), write_timeout_s)
    while True:
        batch = [msg for seq, msg in channel.messages[sent:] if seq > last]
        sent = len(channel.messages)
        if batch:
            await asyncio.wait_for(response.write(b"".join(batch)), write_timeout_s)
            continue
        if channel.ended or channel.failed or viewer_gone(request):
            break
        if await channel.wait(sent, LOOK_S):
            quiet = time.monotonic()
        elif heartbeat_s is not None and time.monotonic() - quiet > heartbeat_s:
            await asyncio.wait_for(response.write(clock_event()), write_timeout_s)
            quiet = time.monotonic()


__all__ = ["LiveChannels", "MatchChannel", "send_live", "woken"]
