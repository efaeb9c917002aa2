"""A bot's output file, read back: the file a spawned bot's output is kept in (written by
``referee.table.output``) and its sidecar of times, for the viewer, the crash reports
and the ladder.

The sidecar, ``<file>.times`` (JSON lines), records when each line arrived::

    {"format": "pusoy-output-times", "version": 1, "output": "<file name>",
     "start_unix_us": 1764700000000000, "limit": 1048576}
    [12034, 2]        µs after start, how many more lines of the file were complete then
    [250117, 1]
    ...

The lines of the file are its bytes split after each ``\\n`` (a last line without one
counts too); the counts, in order, add up to the lines of the file. The kits write one
defined line when the bot's own code raised on a turn and they played the fallback
(docs/kits.md, section 5); ``raised_in`` finds those lines in the file, for ``referee
match``'s summary and the viewer. Every read is bounded; a file that cannot be read reads
as empty.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from referee.text import printable

FORMAT = "pusoy-output-times"


VERSION = 1


TIMES_SUFFIX = ".times"


def times_path(path: Path) -> Path:
    """The sidecar that times the lines of output file ``path``."""
    return path.with_name(path.name + TIMES_SUFFIX)


TAIL_LINES = 10


TAIL_BYTES = 4096


MAX_TAIL_LINE_CHARS = 300


def tail_bytes(path: Path, limit: int) -> bytes:
    """The last ``limit`` bytes of a bot's output file; b"" when it cannot be read."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read(limit)
    except OSError:
        return b""


def output_line_shown(line: str) -> str:
    """A line of a bot's output made safe for a terminal: control characters escaped.

    >>> output_line_shown("ok\\x1b[2J\\tdone")
    'ok\\\\x1b[2J\\tdone'
    """
    out = "\t".join(printable(part) for part in line[:MAX_TAIL_LINE_CHARS].split("\t"))
    return out + ("…" if len(line) > MAX_TAIL_LINE_CHARS else "")


def read_tail(path: Path, lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> tuple[str, ...]:
    """The last lines of a bot's output file (at most ``max_bytes`` read), safe to print."""
    data = tail_bytes(path, max_bytes + 1)
    cut = len(data) > max_bytes
    data = data[-max_bytes:]
    found = data.decode("utf-8", "replace").splitlines()
    if cut and found:
        found = found[1:]  # cut somewhere in its middle
    return tuple(output_line_shown(line) for line in found if line.strip())[-lines:]


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
    path: Path, *, max_bytes: int = 4 * 1024 * 1024, max_lines: int = 1000
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


def raised_in(path: Path, *, max_bytes: int = 4 * 1024 * 1024) -> tuple[Raised, ...]:
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
    "FORMAT",
    "MAX_RAISED",
    "MAX_TAIL_LINE_CHARS",
    "RAISED_MARKER",
    "TAIL_BYTES",
    "TAIL_LINES",
    "TIMES_SUFFIX",
    "VERSION",
    "Raised",
    "TimedLine",
    "TimedOutput",
    "output_line_shown",
    "raised_in",
    "raised_of",
    "raised_where",
    "read_output",
    "read_tail",
    "tail_bytes",
    "times_path",
]
