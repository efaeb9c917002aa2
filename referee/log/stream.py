"""A log's public events without stopping the event loop: parsed in batches, in a thread.

A server streams logs of any size (WatchMatch from the start, the web's feed) while it
plays other matches; reading or parsing a 20 MB log on the loop would stall every turn.
The lines come from the one reader (``referee.log.reader.stream_lines``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from referee.log.reader import parse_line, stream_lines
from referee.log.signing import looks_like_trailer
from referee.match.observer import for_spectator
from referee.protocol import common


def _parse_public(lines: list[tuple[int, str]]) -> list[tuple[int, common.Event]]:
    out = []
    for number, raw in lines:
        if looks_like_trailer(raw):
            continue
        entry = parse_line(number, raw)
        public = for_spectator(entry.event)
        if public is not None:
            out.append((entry.seq, public))
    return out


async def public_events(path: Path, batch: int = 512) -> AsyncIterator[tuple[int, common.Event]]:
    """(seq, event) of a log as a spectator may see them, parsed off the loop in batches.
    Raises LogFormatError at a line that is not an entry."""
    pending: list[tuple[int, str]] = []
    number = 0
    async for raw in stream_lines(path):
        number += 1
        pending.append((number, raw))
        if len(pending) >= batch:
            for item in await asyncio.to_thread(_parse_public, pending):
                yield item
            pending = []
    if pending:
        for item in await asyncio.to_thread(_parse_public, pending):
            yield item
