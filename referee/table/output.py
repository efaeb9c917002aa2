"""A spawned bot's output: read through a pipe, kept in a file, each line's arrival timed.

A bot's standard output and error are one pipe, which the table reads on its own event
loop, a chunk at a time and never blocking (``loop.connect_read_pipe``). What it reads
goes to the raw file that ``referee match``'s crash report and bot authors read (the same
file as before, ``<log-dir>/<match>.seat<N>.stderr`` or a tournament's
``stderr/<match>/seat<N>-<bot>.txt``), and beside it a small sidecar, ``<file>.times``,
records when each line arrived, so that ``referee view --with-stderr`` shows a line at
the move it belongs to. The sidecar (JSON lines) is::

    {"format": "pusoy-output-times", "version": 1, "output": "<file name>",
     "start_unix_us": 1764700000000000, "limit": 1048576}
    [12034, 2]        µs after start, how many more lines of the file were complete then
    [250117, 1]
    ...

The lines of the file are its bytes split after each ``\\n`` (a last line without one
counts too); the counts, in order, add up to the lines of the file. Reads less than a
millisecond apart share a record, and the sidecar holds at most ``limit`` bytes (lines
past that have no recorded time).

The kits write one defined line when the bot's own code raised on a turn and they played
the fallback (docs/kits.md, section 5); ``raised_in`` finds those lines in the file, for
``referee match``'s summary and the viewer.

Bounded as the file always was: at most ``limit`` bytes are kept (then a line says the
output was cut); past that the pipe is still read, so a chatty bot never blocks on a
full pipe, but only at ``DRAIN_BYTES_PER_S``: a bot that floods its output is slowed,
never the referee's loop, which would otherwise spend itself copying the flood. A bot in
a sandbox is cut at the same limit inside it already (its own CPU pays for that).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from referee.files import replace_private_file
from referee.text import printable

FORMAT = "pusoy-output-times"
VERSION = 1
TIMES_SUFFIX = ".times"
DEFAULT_LIMIT = 1024 * 1024
"""Bytes of output kept per bot and match (a sandbox's default ``stderr_kb``)."""
DRAIN_BYTES_PER_S = 2 * 1024 * 1024
"""Past the limit, how fast the rest is read and dropped: each read wakes the bot, and on a
busy machine a bot woken a hundred times a second delays the referee's timers by
milliseconds (bench/bench_bot_output.py); at this pace, a tenth of one."""
COALESCE_US = 1000


def times_path(path: Path) -> Path:
    """The sidecar that times the lines of output file ``path``."""
    return path.with_name(path.name + TIMES_SUFFIX)


def tail_bytes(path: Path, limit: int) -> bytes:
    """The last ``limit`` bytes of a bot's output file; b"" when it cannot be read."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read(limit)
    except OSError:
        return b""


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


@dataclasses.dataclass(frozen=True, slots=True)
class TimedLine:
    at_us: int | None
    """When the line was read (µs since the epoch); None when no time was recorded."""
    text: str


@dataclasses.dataclass(frozen=True, slots=True)
class TimedOutput:
    lines: list[TimedLine]
    timed: bool
    """The sidecar was there and readable."""
    skipped: int = 0
    """Lines left out in the middle (past ``max_lines``)."""


def read_output(
    path: Path, *, max_bytes: int = 4 * DEFAULT_LIMIT, max_lines: int = 1000
) -> TimedOutput:
    """A bot's output file with each line's time from its sidecar (when there is one).

    At most ``max_bytes`` of the file are read; past ``max_lines`` lines, the first and
    the last half are kept and ``skipped`` says how many were left out. OSError when the
    file cannot be read; a sidecar that cannot be read leaves the lines untimed.
    """
    with open(path, "rb") as f:
        raw = f.read(max_bytes)
    pieces = raw.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    times: list[int | None] = [None] * len(pieces)
    timed = False
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        records = times_path(path).read_text(encoding="utf-8").splitlines()
        header = json.loads(records[0])
        if header.get("format") == FORMAT and header.get("version") == VERSION:
            start = int(header["start_unix_us"])
            line = 0
            for record in records[1:]:
                at, count = json.loads(record)
                at, count = int(at), int(count)
                for i in range(line, min(line + max(count, 0), len(pieces))):
                    times[i] = start + at
                line += max(count, 0)
                if line >= len(pieces):
                    break
            timed = True
    lines = [TimedLine(t, p.decode("utf-8", "replace")) for t, p in zip(times, pieces, strict=True)]
    skipped = 0
    if len(lines) > max_lines:
        half = max_lines // 2
        skipped = len(lines) - 2 * half
        lines = lines[:half] + lines[-half:]
    return TimedOutput(lines, timed, skipped)


# -- the kits' raised marker (docs/kits.md, section 5) -----------------------------------

RAISED_MARKER = "PUSOY_BOT_RAISED"
MAX_RAISED = 1000
"""Marker lines kept per bot and match: a bot writes its own output, and may write many."""
_RAISED = re.compile(
    r"PUSOY_BOT_RAISED turn=(\d{1,20}) call=(choose|on_rejected) error=(.*)", re.ASCII
)


@dataclasses.dataclass(frozen=True, slots=True)
class Raised:
    """What a kit says when the bot's own code raised on a turn and it played the fallback.
    The bot's own word about its own seat: it may print the line itself."""

    turn: int
    call: str
    """``choose`` or ``on_rejected``."""
    error: str
    """What was raised, made safe to show and at most 200 characters
    (``ZeroDivisionError: division by zero``)."""


def raised_of(line: str) -> Raised | None:
    """The marker a line of a bot's output holds, or None.

    >>> raised_of("PUSOY_BOT_RAISED turn=14 call=choose error=ZeroDivisionError: division by zero")
    Raised(turn=14, call='choose', error='ZeroDivisionError: division by zero')
    >>> raised_of("mybot: PUSOY_BOT_RAISED turn=14 call=choose error=x") is None
    True
    """
    found = _RAISED.fullmatch(line.rstrip("\r\n"))
    if found is None:
        return None
    return Raised(int(found[1]), found[2], printable(found[3][:200]))


def raised_where(raised: Raised, turn_moves: Mapping[int, tuple[int, int]]) -> str:
    """Where a marker puts the bot's failure: ``hand 1, move 14`` as ``referee view``
    numbers moves (the log's ``turn_moves``), or its turn when the log has no move of it.

    >>> raised_where(Raised(14, "choose", "KeyError"), {14: (2, 9)})
    'hand 2, move 9'
    """
    place = turn_moves.get(raised.turn)
    return f"hand {place[0]}, move {place[1]}" if place else f"turn {raised.turn}"


def raised_in(path: Path, *, max_bytes: int = 4 * DEFAULT_LIMIT) -> tuple[Raised, ...]:
    """Every marker of a bot's output file (at most ``MAX_RAISED``, from its first
    ``max_bytes``); none when it cannot be read."""
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes)
    except OSError:
        return ()
    found: list[Raised] = []
    for line in raw.split(b"\n"):
        if line.startswith(RAISED_MARKER.encode()):
            raised = raised_of(line.decode("utf-8", "replace"))
            if raised is not None:
                found.append(raised)
                if len(found) >= MAX_RAISED:
                    break
    return tuple(found)


__all__ = [
    "DEFAULT_LIMIT",
    "DRAIN_BYTES_PER_S",
    "FORMAT",
    "MAX_RAISED",
    "RAISED_MARKER",
    "BotOutput",
    "Raised",
    "TimedLine",
    "TimedOutput",
    "cut_notice",
    "raised_in",
    "raised_of",
    "raised_where",
    "read_output",
    "times_path",
]
