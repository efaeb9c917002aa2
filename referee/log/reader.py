"""The one reader of event logs: every module that reads a log file reads it here.

One size limit, one way to split a file into lines (a torn last line is left out and
reported), one test of the signature trailer, then one of two modes:

- strict (``read_log``): every line is a ``LogEntry``, or ``LogFormatError`` names the
  first that is not. Verify, replay, summaries, positions, the dataset and resuming
  read this way: what they say about a match must come from a well-formed log.
- lenient (``read_lenient``): never refuses what a line holds. Each line is the JSON
  object it holds (``LooseLine``, unchecked), the trailer, or a ``BadLine`` saying why
  it is neither: all a viewer needs to show any file, however damaged or new.

A line is bytes, hashed as they are: one that is not UTF-8, or longer than
``MAX_LINE_BYTES``, is refused (a ``BadLine`` when lenient), never repaired (a decoder
that replaced its bad bytes would hand the hash chain other bytes than the file's).

What the lines mean is the visitors' business (``walk``): replay text, positions,
summaries and the viewer's fold follow the same lines, and follow hands with the one
``referee.log.hands.HandTracker``. The server streams lines off its event loop
(``stream_lines``) and asks whether a log on disk was closed (``is_closed``).

Schema versions: 2 adds the ``command`` of each decision and new event kinds; events
themselves kept their shape, so a schema-1 entry reads as a schema-2 entry without
commands. Readers of events need nothing else; ``verify`` keeps the rules of each version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

from google.protobuf import json_format

from referee.log.fastjson import parse_entry
from referee.log.signing import looks_like_trailer
from referee.protocol import SUPPORTED_LOG_SCHEMA_VERSIONS, common

MAX_LOG_BYTES = 65 * 1024 * 1024
"""The largest file read as a log. A referee cancels a match once its log passes its cap
(64 MiB by default, ``referee.server.host.DEFAULT_MAX_LOG_BYTES``); the decision that
crossed it, the end and the trailer fit in the margin. So every log a referee writes
opens in every command, and a larger file is refused before any of it is read."""
MAX_LINE_BYTES = 1 << 20
"""No line the referee writes comes near this many bytes; a longer one is not a log line."""
CHUNK_BYTES = 256 * 1024
_TAIL_BYTES = 64 * 1024


class LogFormatError(ValueError):
    """A log that cannot be read: ``line`` is the 1-based number of the first line that
    is not a LogEntry, or None when the file as a whole is refused."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line
        self.message = message


class LogTooLarge(LogFormatError):
    """A file larger than ``MAX_LOG_BYTES``: no log of this referee."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)


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


@dataclasses.dataclass(frozen=True, slots=True)
class LooseLine:
    """A line as the lenient reader gives it: the JSON object it holds, unchecked."""

    number: int
    data: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class TrailerLine:
    """The signature trailer, as the lenient reader gives it: its body, unchecked."""

    number: int
    body: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class BadLine:
    """A line the lenient reader could not read as a JSON object, and why."""

    number: int
    problem: str


TORN = "the last line is cut short (the log is incomplete)"


@dataclasses.dataclass(frozen=True, slots=True)
class LenientRead:
    """Every line of a file as far as it can be read; a torn last line is the last
    ``BadLine`` (its problem is ``TORN``)."""

    path: Path
    data: bytes
    """The file's bytes, as read."""
    lines: list[LooseLine | TrailerLine | BadLine]
    truncated: bool

    @property
    def whole_lines(self) -> int:
        return len(self.lines) - self.truncated


# -- the file ------------------------------------------------------------------------


def read_bounded(path: Path, limit: int = MAX_LOG_BYTES) -> bytes:
    """A log file's bytes; LogTooLarge past ``limit`` (checked before reading, and again
    for a file that grows meanwhile), OSError when it cannot be read."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise LogTooLarge(
                f"{path} is {size / 2**20:.1f} MB, larger than any log a referee writes "
                f"({limit / 2**20:.0f} MB at most)"
            )
        data = f.read(limit + 1)
    if len(data) > limit:
        raise LogTooLarge(f"{path} grew past {limit / 2**20:.0f} MB while being read")
    return data


def _whole_lines(data: bytes) -> tuple[list[bytes], int]:
    """The whole lines of a file (no newline) and the bytes of a torn last line."""
    end = data.rfind(b"\n") + 1
    return data[:end].split(b"\n")[:-1], len(data) - end


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


# -- strict ----------------------------------------------------------------------------


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
    except RecursionError:
        raise LogFormatError(number, "not JSON (nested too deeply)") from None
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
    if not looks_like_trailer(raw):
        return None
    try:
        data = json.loads(raw)
        trailer = common.LogTrailer()
        json_format.ParseDict(data["trailer"], trailer)
    except (ValueError, KeyError, TypeError, RecursionError, json_format.ParseError):
        return None
    return trailer


def read_log_lines(path: Path) -> tuple[list[str], bool]:
    """The whole lines of a file and whether a final partial line was dropped;
    LogFormatError at a line that ``decode_line`` refuses."""
    whole, torn = _whole_lines(read_bounded(path))
    return [decode_line(i, r) for i, r in enumerate(whole, start=1)], torn > 0


def read_log(path: Path, *, ignore_unknown: bool = False) -> LogRead:
    """Read a log strictly: a malformed whole line raises ``LogFormatError`` (a torn
    last line is reported, not raised), so does a file over ``MAX_LOG_BYTES``.

    ``ignore_unknown``: see ``parse_line``.
    """
    data = read_bounded(path)
    whole, torn = _whole_lines(data)
    raws = [decode_line(i, r) for i, r in enumerate(whole, start=1)]
    trailer = None
    if raws:
        trailer = _trailer(raws[-1])
        if trailer is not None:
            raws.pop()
    lines = []
    for i, raw in enumerate(raws, start=1):
        lines.append(LogLine(i, raw, parse_line(i, raw, ignore_unknown=ignore_unknown)))
    return LogRead(Path(path), lines, torn > 0, torn, len(data) - torn, trailer)


# -- lenient ---------------------------------------------------------------------------


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _loose(number: int, line: bytes) -> LooseLine | TrailerLine | BadLine:
    try:
        raw = decode_line(number, line)
    except LogFormatError as exc:
        return BadLine(number, exc.message)
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        return BadLine(number, f"not JSON ({exc})")
    if not isinstance(data, Mapping):
        return BadLine(number, "not a log entry")
    if looks_like_trailer(raw):
        body = data.get("trailer")
        return TrailerLine(number, body if isinstance(body, Mapping) else {})
    return LooseLine(number, data)


def read_lenient(path: Path) -> LenientRead:
    """Read every line of a log as far as it goes; raises only for the file itself
    (LogTooLarge over ``MAX_LOG_BYTES``, OSError)."""
    data = read_bounded(path)
    whole, torn = _whole_lines(data)
    lines = [_loose(number, line) for number, line in enumerate(whole, start=1)]
    if torn:
        lines.append(BadLine(len(whole) + 1, TORN))
    return LenientRead(Path(path), data, lines, torn > 0)


# -- for the server ----------------------------------------------------------------------


def _open_binary(path: Path) -> BinaryIO:
    return open(path, "rb")


async def stream_lines(path: Path, chunk: int = CHUNK_BYTES) -> AsyncIterator[str]:
    """The whole lines of a log (no newline), read ``chunk`` bytes at a time off the
    event loop: a server streams logs of any size while it plays other matches. A last
    line without its newline (being written, or torn) is left out. LogFormatError at a
    line that ``decode_line`` refuses (too long, not UTF-8)."""
    file = await asyncio.to_thread(_open_binary, path)
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


def is_closed(path: Path) -> bool:
    """Whether a log on disk ends as a closed log does (match_ended, or a trailer),
    reading its last 64 KiB only. One that does not (its referee stopped mid-match)
    holds the hidden cards of a match that a restart resumes."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - _TAIL_BYTES))
        tail = f.read()
    if not tail.endswith(b"\n"):
        return False
    try:
        last = decode_line(0, tail[:-1].rsplit(b"\n", 1)[-1])
        if looks_like_trailer(last):
            return True
        return parse_line(0, last, ignore_unknown=True).event.HasField("match_ended")
    except LogFormatError:
        return False


HEAD_BYTES = 1024


def starts_as_log(path: Path) -> bool:
    """Whether a file begins as a match log does, whatever its name (its first KiB: a
    JSON object naming a match and its creation), for the rule that hides an author's
    logs from bots (``referee.sandbox.private_files``). False for a file it cannot read."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"match_id"' in head and b'"match_created"' in head


# -- visitors --------------------------------------------------------------------------

L_contra = TypeVar("L_contra", contravariant=True)


class LogVisitor(Protocol[L_contra]):
    """Something that walks a log's lines in order (replay text, summaries, positions,
    the viewer's fold): a ``LogLine`` of the strict reader, or a line of the lenient one."""

    def visit(self, line: L_contra) -> None: ...


L = TypeVar("L")


def walk(lines: Iterable[L], *visitors: LogVisitor[L]) -> None:
    """Show every line, in order, to each visitor: one pass for all of them."""
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
