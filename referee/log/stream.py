"""Reading a log from disk without stopping the event loop: in chunks, in a thread.

A server streams logs of any size (GetMatchLog, WatchMatch from the start) while it
plays other matches; reading or parsing a 20 MB log on the loop would stall every turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from referee.log.reader import MAX_LINE_BYTES, LogFormatError, decode_line, parse_line
from referee.match.observer import for_spectator
from referee.protocol import common

CHUNK_BYTES = 256 * 1024


async def stream_lines(path: Path, chunk: int = CHUNK_BYTES) -> AsyncIterator[str]:
    """The whole lines of a file (no newline), read ``chunk`` bytes at a time off the
    loop; a last line without its newline (being written, or torn) is left out.
    LogFormatError at a line that ``decode_line`` refuses (too long, not UTF-8)."""
    file = await asyncio.to_thread(open, path, "rb")
    try:
        rest = b""
        number = 0
        while True:
            data = await asyncio.to_thread(file.read, chunk)
            if not data:
                return
            rest += data
            *whole, rest = rest.split(b"\n")
            for raw in whole:
                number += 1
                yield decode_line(number, raw)
            if len(rest) > MAX_LINE_BYTES:
                raise LogFormatError(number + 1, f"a line of over {MAX_LINE_BYTES} bytes")
    finally:
        await asyncio.to_thread(file.close)


def _parse_public(lines: list[tuple[int, str]]) -> list[tuple[int, common.Event]]:
    out = []
    for number, raw in lines:
        if raw.startswith('{"trailer"'):
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
