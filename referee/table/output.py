"""A spawned bot's output: read through a pipe, kept in a file, each line's arrival timed.

A bot's standard output and error are one pipe, which the table reads on its own event
loop, a chunk at a time and never blocking (``loop.connect_read_pipe``). What it reads
goes to the raw file that ``referee match``'s crash report and bot authors read (the same
file as before, ``<log-dir>/<match>.seat<N>.stderr`` or a tournament's
``stderr/<match>/seat<N>-<bot>.txt``), and beside it a small sidecar, ``<file>.times``,
records when each line arrived, so that ``referee view --with-stderr`` shows a line at
the move it belongs to (the file and its sidecar as they are read back, their format:
``referee.log.outputs``). Reads less than a millisecond apart share a record, and the
sidecar holds at most ``limit`` bytes (lines past that have no recorded time).

Bounded as the file always was: at most ``limit`` bytes are kept (then a line says the
output was cut); past that the pipe is still read, so a chatty bot never blocks on a
full pipe, but only at ``DRAIN_BYTES_PER_S``: a bot that floods its output is slowed,
never the referee's loop, which would otherwise spend itself copying the flood. A bot in
a sandbox is cut at the same limit inside it already (its own CPU pays for that).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from referee.files import replace_private_file
from referee.log.outputs import FORMAT, VERSION, times_path

DEFAULT_LIMIT = 1024 * 1024
"""Bytes of output kept per bot and match (a sandbox's default ``stderr_kb``)."""
DRAIN_BYTES_PER_S = 2 * 1024 * 1024
"""Past the limit, how fast the rest is read and dropped: each read wakes the bot, and on a
busy machine a bot woken a hundred times a second delays the referee's timers by
milliseconds (bench/bench_bot_output.py); at this pace, a tenth of one."""
COALESCE_US = 1000


def cut_notice(limit: int) -> bytes:
    return f"[output cut at {limit} bytes]\n".encode()


class BotOutput:
    """One bot's output for one match: ``create``, ``attach(read_fd)``, ``await
    closed(within)``, ``close()``. The files are created private (mode 0600)."""

    def __init__(
        self, path: Path, limit: int = DEFAULT_LIMIT, *, clock: Callable[[], int] = time.time_ns
    ) -> None:
        self.path = path
        self.limit = limit
        self._clock = clock
        self._start_us = clock() // 1000
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # 0700 whatever the umask
        replace_private_file(path, b"")
        self._times = times_path(path)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "output": path.name,
            "start_unix_us": self._start_us,
            "limit": limit,
        }
        replace_private_file(self._times, (json.dumps(header) + "\n").encode())
        flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        self._out: int | None = os.open(path, flags)
        self._times_fd: int | None = os.open(self._times, flags)
        self.kept = 0
        """Bytes of the bot's output in the file."""
        self.dropped = 0
        """Bytes read past the limit and dropped."""
        self.cut = False
        self._partial = False
        """The file ends inside a line."""
        self._times_bytes = 0
        self._pending: list[int] | None = None
        """The record being gathered: [µs after start, lines]."""
        self._transport: asyncio.ReadTransport | None = None
        self._done = asyncio.Event()
        self._resume: asyncio.TimerHandle | None = None

    # -- reading ------------------------------------------------------------------------

    async def attach(self, read_fd: int) -> None:
        """Read the pipe ``read_fd`` (taken over: closed with the output) until its end."""
        loop = asyncio.get_running_loop()
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        try:
            transport, _ = await loop.connect_read_pipe(lambda: _Reader(self), pipe)
        except BaseException:
            pipe.close()
            self.close()
            raise
        self._transport = transport

    def feed(self, data: bytes) -> None:
        """Bytes read from the bot, now."""
        if self._out is None:
            return
        now = self._clock() // 1000 - self._start_us
        room = self.limit - self.kept
        kept = data[:room] if room > 0 else b""
        lines = 0
        if kept:
            self._write(kept)
            self.kept += len(kept)
            lines = kept.count(b"\n")
            self._partial = not kept.endswith(b"\n")
        if len(data) > len(kept):
            if not self.cut:
                notice = (b"\n" if self._partial else b"") + cut_notice(self.limit)
                self._write(notice)
                lines += notice.count(b"\n")
                self._partial = False
                self.cut = True
            self.dropped += len(data) - len(kept)
            self._throttle(len(data) - len(kept))
        self._count(now, lines)

    def _write(self, data: bytes) -> None:
        assert self._out is not None
        view = memoryview(data)
        while view:
            written = os.write(self._out, view)
            view = view[written:]

    def _throttle(self, dropped: int) -> None:
        """Past the limit: read no faster than ``DRAIN_BYTES_PER_S``."""
        transport = self._transport
        if transport is None or self._resume is not None or transport.is_closing():
            return
        transport.pause_reading()
        loop = asyncio.get_running_loop()
        self._resume = loop.call_later(dropped / DRAIN_BYTES_PER_S, self._resume_reading)

    def _resume_reading(self) -> None:
        self._resume = None
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    # -- the times sidecar --------------------------------------------------------------

    def _count(self, now_us: int, lines: int) -> None:
        if not lines:
            return
        pending = self._pending
        if pending is not None and now_us - pending[0] < COALESCE_US:
            pending[1] += lines
            return
        self._flush()
        self._pending = [now_us, lines]

    def _flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None or self._times_fd is None:
            return
        record = (json.dumps(pending, separators=(",", ":")) + "\n").encode()
        if self._times_bytes + len(record) > self.limit:
            return  # the sidecar is full: later lines have no time
        self._times_bytes += len(record)
        with contextlib.suppress(OSError):
            os.write(self._times_fd, record)

    # -- the end ------------------------------------------------------------------------

    def ended(self) -> None:
        """The pipe's end: every process holding it has closed it."""
        self.close()

    async def closed(self, within: float) -> bool:
        """Wait until the whole output is read (the pipe's end), at most ``within`` s."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._done.wait(), within)
        return self._done.is_set()

    def close(self) -> None:
        """Stop reading (a process that escaped the bot's group may hold the pipe) and
        close the files; the last line, if cut short, is counted as read now."""
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        if self._out is None:
            return
        if self._partial:
            self._count(self._clock() // 1000 - self._start_us, 1)
            self._partial = False
        self._flush()
        for fd in (self._out, self._times_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._out = self._times_fd = None
        self._done.set()


class _Reader(asyncio.Protocol):
    def __init__(self, output: BotOutput) -> None:
        self.output = output

    def data_received(self, data: bytes) -> None:
        self.output.feed(data)

    def eof_received(self) -> bool | None:
        self.output.ended()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.output.ended()


# -- reading it back (referee view --with-stderr) ----------------------------------------


# -- the kits' raised marker (docs/kits.md, section 5) -----------------------------------


__all__ = ["DEFAULT_LIMIT", "DRAIN_BYTES_PER_S", "BotOutput", "cut_notice"]
