"""Reading event logs: one typed reader, and visitors that walk what it reads.

Strict about the middle of a log (a line that is not a LogEntry raises LogFormatError
with its number), forgiving about a cut-short end (a torn last line from a crash is left
out and reported). The last line may be the signature trailer, outside the hash chain.

A line is bytes, hashed as they are: one that is not UTF-8 is refused, never repaired
(a decoder that replaced its bad bytes would hand the hash chain other bytes than the
file's, and a line would check or fail for the wrong reason).

Schema versions: 2 adds the ``command`` of each decision and new event kinds; events
themselves kept their shape, so a schema-1 entry reads as a schema-2 entry without
commands. Readers of events (replay, summaries, the spectator feed) need nothing else;
``verify`` keeps the rules of each version.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from google.protobuf import json_format

from referee.log.fastjson import parse_entry
from referee.protocol import SUPPORTED_LOG_SCHEMA_VERSIONS, common

MAX_LINE_BYTES = 1 << 20
"""No line the referee writes comes near this many bytes; a longer one is not a log line."""


class LogFormatError(ValueError):
    """A log line that is not a LogEntry; ``line`` is its 1-based number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclasses.dataclass(frozen=True, slots=True)
class LogLine:
    """One whole line of a log: its number, its exact text and the entry it holds."""

    number: int
    raw: str
    entry: common.LogEntry

    @property
    def kind(self) -> str:
        return self.entry.event.WhichOneof("kind") or ""


@dataclasses.dataclass(frozen=True, slots=True)
class LogRead:
    """The whole lines of a log, its trailer, and how it ends."""

    path: Path
    lines: list[LogLine]
    truncated: bool
    """The last line was cut short (a crash while writing) and was left out."""
    torn_bytes: int = 0
    """Bytes of that cut-short line."""
    whole_bytes: int = 0
    """Bytes of the whole lines (and trailer): where a resumed log continues."""
    trailer: common.LogTrailer | None = None

    @property
    def finished(self) -> bool:
        return bool(self.lines) and self.lines[-1].entry.event.HasField("match_ended")

    @property
    def complete(self) -> bool:
        return self.finished and not self.truncated

    def status(self) -> str:
        if self.truncated:
            return f"incomplete: the last line (line {len(self.lines) + 1}) is cut short"
        if not self.finished:
            return "incomplete: the log ends before the match ended"
        return "complete"


def decode_line(number: int, raw: bytes) -> str:
    """The text of one line's bytes (without its newline); LogFormatError when it is longer
    than MAX_LINE_BYTES or not UTF-8, so that the text encodes back to these very bytes."""
    if len(raw) > MAX_LINE_BYTES:
        raise LogFormatError(number, f"a line of {len(raw)} bytes is not a log line")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.end].hex(" ")
        raise LogFormatError(
            number, f"not UTF-8 (the bytes {bad} at byte {exc.start + 1} of the line)"
        ) from None


def parse_line(number: int, raw: str, *, ignore_unknown: bool = False) -> common.LogEntry:
    """The entry of one line; LogFormatError when it is not one.

    With ``ignore_unknown`` (for readers that look at some events only, such as
    ``referee rules positions``), fields, event kinds and schema versions this version
    does not know are skipped rather than refused; an unknown event kind leaves ``event``
    empty.
    """
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LogFormatError(number, f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise LogFormatError(number, "not a JSON object")
    try:
        entry = parse_entry(data, ignore_unknown=ignore_unknown)
    except json_format.ParseError as exc:
        raise LogFormatError(number, f"not a LogEntry ({exc})") from None
    if entry.schema_version not in SUPPORTED_LOG_SCHEMA_VERSIONS and not ignore_unknown:
        raise LogFormatError(number, f"unknown schema version {entry.schema_version}")
    return entry


def _trailer(raw: str) -> common.LogTrailer | None:
    """The trailer a line holds, or None when the line is not one."""
    if not raw.startswith('{"trailer"'):
        return None
    try:
        data = json.loads(raw)
        trailer = common.LogTrailer()
        json_format.ParseDict(data["trailer"], trailer)
    except (ValueError, KeyError, TypeError, json_format.ParseError):
        return None
    return trailer


def read_log_lines(path: Path) -> tuple[list[str], bool]:
    """The whole lines of a file and whether a final partial line was dropped;
    LogFormatError at a line that ``decode_line`` refuses."""
    data = Path(path).read_bytes()
    truncated = bool(data) and not data.endswith(b"\n")
    raw_lines = data.split(b"\n")
    raw_lines.pop()  # after the last newline: b"" for a whole file, else the partial line
    return [decode_line(i, r) for i, r in enumerate(raw_lines, start=1)], truncated


def read_log(path: Path, *, ignore_unknown: bool = False) -> LogRead:
    """Read a log; a malformed line before the last raises ``LogFormatError``.

    ``ignore_unknown``: see ``parse_line``.
    """
    data = Path(path).read_bytes()
    end = data.rfind(b"\n") + 1
    torn = len(data) - end
    raws = [decode_line(i, r) for i, r in enumerate(data[:end].split(b"\n")[:-1], start=1)]
    trailer = None
    if raws:
        trailer = _trailer(raws[-1])
        if trailer is not None:
            raws.pop()
    lines = []
    for i, raw in enumerate(raws, start=1):
        lines.append(LogLine(i, raw, parse_line(i, raw, ignore_unknown=ignore_unknown)))
    return LogRead(Path(path), lines, torn > 0, torn, end, trailer)


class LogVisitor(Protocol):
    """Something that walks a log's lines in order (replay text, summaries, verify)."""

    def visit(self, line: LogLine) -> None: ...


def walk(lines: Iterable[LogLine], *visitors: LogVisitor) -> None:
    """Show every line, in order, to each visitor."""
    for line in lines:
        for visitor in visitors:
            visitor.visit(line)


def decisions(lines: Iterable[LogLine]) -> Iterator[tuple[common.Command | None, list[LogLine]]]:
    """The lines grouped by decision: each group starts at a line with a command (schema
    2); lines before the first command (schema 1 logs) come as one group with None."""
    command: common.Command | None = None
    group: list[LogLine] = []
    for line in lines:
        if line.entry.HasField("command"):
            if group:
                yield command, group
            command, group = line.entry.command, [line]
        else:
            group.append(line)
    if group:
        yield command, group
