"""The traces bound to a log: the file format's checks, for ``referee verify``.

A seat that keeps a trace (the language-model seat, ``referee.llm``) sends with each
action the SHA-256 of that action's line in its trace file; the log records it in the
action's command (docs/log-format.md, section 3). Here: where a released trace lives
(beside its log), how it is read (bounded), and ``check_trace``, which finds a line
changed, added, dropped or reordered against the log. The writer is ``referee.llm.trace``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.log.reader import LogFormatError, LogRead, read_log

MAX_TRACE_LINE_BYTES = 4 << 20
"""A trace line's bound when it is read back (a move's calls with full prompts)."""
MAX_TRACE_LINES = 100_000


def trace_path(log_path: Path, seat: int) -> Path:
    """Where a released trace lives: beside its log (``M.jsonl`` -> ``M.seat2.trace.ndjson``).

    >>> trace_path(Path("logs/m1.jsonl"), 2).as_posix()
    'logs/m1.seat2.trace.ndjson'
    """
    return log_path.with_name(f"{log_path.stem}.seat{seat}.trace.ndjson")


def line_sha256(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


class TraceError(ValueError):
    """A trace that does not match its log; the message names the line."""


@dataclasses.dataclass(frozen=True, slots=True)
class TraceLine:
    number: int
    sha256: str
    record: dict[str, Any]


def read_trace(path: Path) -> Iterator[TraceLine]:
    """A trace's lines, each with its hash (of its bytes as stored); TraceError for a
    line that is not a JSON object, too long, or too many lines."""
    with Path(path).open("rb") as f:
        for number, raw in enumerate(f, 1):
            if number > MAX_TRACE_LINES:
                raise TraceError(f"{path}: more than {MAX_TRACE_LINES} lines")
            if len(raw) > MAX_TRACE_LINE_BYTES or not raw.endswith(b"\n"):
                raise TraceError(f"{path}:{number}: a line too long, or cut short")
            line = raw[:-1]
            try:
                record = json.loads(line)
            except ValueError:
                raise TraceError(f"{path}:{number}: not JSON") from None
            if not isinstance(record, dict):
                raise TraceError(f"{path}:{number}: not a JSON object")
            yield TraceLine(number, line_sha256(line), record)


@dataclasses.dataclass(frozen=True, slots=True)
class LoggedAction:
    """An action command of the log that carries a trace hash."""

    line: int
    seat: int
    turn_id: int
    cards: tuple[str, ...]
    passed: bool
    trace_sha256: str


def check_trace(path: Path, seat: int, actions: list[LoggedAction]) -> int:
    """Check the trace of ``seat`` against the log's actions of that seat that carry a
    trace hash (in log order): one line per action, each line's hash the one logged, its
    seat, turn and move those of the action. The number of lines; TraceError."""
    mine = [a for a in actions if a.seat == seat]
    count = 0
    for line, action in _zip_lines(read_trace(path), mine, path):
        r = line.record
        where = f"{path}:{line.number}"
        if line.sha256 != action.trace_sha256:
            raise TraceError(
                f"{where}: its SHA-256 is not the one logged with the action on log line "
                f"{action.line} (the line was changed, or lines are missing or out of order)"
            )
        if r.get("seat") != seat or r.get("turn_id") != action.turn_id:
            raise TraceError(f"{where}: seat or turn differs from log line {action.line}")
        sent = r.get("action")
        cards = sent.get("play") if isinstance(sent, dict) else None
        if (bool(sent.get("pass")) if isinstance(sent, dict) else False) != action.passed or (
            not action.passed and list(cards or []) != list(action.cards)
        ):
            raise TraceError(f"{where}: its action differs from log line {action.line}")
        count += 1
    return count


def _zip_lines(
    lines: Iterator[TraceLine], actions: list[LoggedAction], path: Path
) -> Iterator[tuple[TraceLine, LoggedAction]]:
    pending = iter(actions)
    for line in lines:
        action = next(pending, None)
        if action is None:
            raise TraceError(
                f"{path}:{line.number}: a line no logged action carries (added after the match)"
            )
        yield line, action
    missing = next(pending, None)
    if missing is not None:
        raise TraceError(
            f"{path}: ends before the line of the action on log line {missing.line} "
            "(lines were removed)"
        )


def logged_actions(read: LogRead) -> list[LoggedAction]:
    """The log's action commands that carry a trace hash, in log order."""
    out = []
    for number, line in enumerate(read.lines, 1):
        entry = line.entry
        if not entry.HasField("command") or entry.command.WhichOneof("kind") != "action":
            continue
        cmd = entry.command.action
        if cmd.trace_sha256:
            passed = bool(getattr(cmd, "pass"))
            out.append(
                LoggedAction(
                    number, cmd.seat, cmd.turn_id, tuple(cmd.cards), passed, cmd.trace_sha256
                )
            )
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class TraceCheck:
    """One seat's trace against its log: ``problem`` None when it holds, ``path`` None
    when the log binds a trace that is not there (not released yet, or withheld)."""

    seat: int
    path: Path | None
    lines: int
    problem: str | None = None

    def summary(self) -> str:
        if self.path is None:
            return f"trace of seat {self.seat}: not present (the log binds {self.lines} lines)"
        if self.problem is not None:
            return f"FAILED: trace of seat {self.seat}: {self.problem}"
        return f"OK: {self.path}: {self.lines} lines, each bound to its action in the log"


def check_traces(
    log_path: Path, read: LogRead, given: dict[int, Path] | None = None
) -> list[TraceCheck]:
    """Every seat's trace that the log binds: the files ``given`` by seat, else those
    beside the log (``trace_path``); a given file for a seat the log binds no trace of
    fails (a trace from another match, or a bot that sent no hashes)."""
    actions = logged_actions(read)
    seats = sorted({a.seat for a in actions} | set(given or {}))
    checks = []
    for seat in seats:
        path = (given or {}).get(seat) or trace_path(Path(log_path), seat)
        bound = sum(1 for a in actions if a.seat == seat)
        if not path.exists():
            if given and seat in given:
                checks.append(TraceCheck(seat, path, 0, f"cannot read {path}"))
            else:
                checks.append(TraceCheck(seat, None, bound))
            continue
        try:
            checks.append(TraceCheck(seat, path, check_trace(path, seat, actions)))
        except TraceError as exc:
            checks.append(TraceCheck(seat, path, 0, str(exc)))
        except OSError as exc:
            checks.append(TraceCheck(seat, path, 0, f"cannot read {path}: {exc.strerror}"))
    return checks


def verify_traces(log_path: Path, given: dict[int, Path] | None = None) -> list[TraceCheck]:
    """``check_traces`` on a log file (read again, bounded); none for a log that cannot
    be read (``verify_log`` says why)."""
    try:
        read = read_log(Path(log_path))
    except (LogFormatError, OSError):
        return []
    return check_traces(log_path, read, given)
