"""Reading event logs: strict about the middle, forgiving about a cut-short end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from google.protobuf import json_format

from referee.pb import common


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


@dataclasses.dataclass(frozen=True, slots=True)
class LogRead:
    """The whole lines of a log, and whether the log ends as a finished match's does."""

    path: Path
    lines: list[LogLine]
    truncated: bool
    """The last line was cut short (a crash while writing) and was left out."""

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


def parse_line(number: int, raw: str, *, ignore_unknown: bool = False) -> common.LogEntry:
    """One line as a LogEntry; with ``ignore_unknown``, fields and event kinds this
    version does not know are skipped (an unknown event kind leaves ``event`` empty)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LogFormatError(number, f"not JSON ({exc.msg})") from None
    entry = common.LogEntry()
    try:
        json_format.ParseDict(data, entry, ignore_unknown_fields=ignore_unknown)
    except json_format.ParseError as exc:
        raise LogFormatError(number, f"not a LogEntry ({exc})") from None
    return entry


def read_log_lines(path: Path) -> tuple[list[str], bool]:
    """The whole lines of a file and whether a final partial line was dropped."""
    data = Path(path).read_bytes()
    truncated = bool(data) and not data.endswith(b"\n")
    raw_lines = data.split(b"\n")
    raw_lines.pop()  # after the last newline: b"" for a whole file, else the partial line
    return [r.decode("utf-8", errors="replace") for r in raw_lines], truncated


def read_log(path: Path, *, ignore_unknown: bool = False) -> LogRead:
    """Read a log; a malformed line before the last raises ``LogFormatError``.

    ``ignore_unknown`` suits readers that only look at some events (positions, replay of
    a newer log): fields and event kinds added after this version are skipped.
    """
    raws, truncated = read_log_lines(path)
    lines: list[LogLine] = []
    for i, raw in enumerate(raws, start=1):
        lines.append(LogLine(i, raw, parse_line(i, raw, ignore_unknown=ignore_unknown)))
    return LogRead(Path(path), lines, truncated)
