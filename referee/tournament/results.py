"""What a match came to, and the tournament's files on disk.

The event log is the source of truth: ``referee.log.summary.summarize_log`` (a visitor
over the log reader) counts, per seat, its place and scores and every fault the referee
recorded. A ``MatchResult`` adds what only the tournament and its table know (the
schedule entry, whether a bot process crashed, its exit status, where its output went).

The folder of a tournament::

    tournament.json     the configuration's identity and hash, the master seed, the size
    results.jsonl       one line per match played, appended and fsynced as it ends
    results.csv         the same, one row per seat (rebuilt from results.jsonl on start)
    standings.json      ratings and statistics per bot, rewritten after every match
    standings.csv       the same table
    logs/ID.jsonl       each match's event log (``referee verify`` checks it), whichever
                        backend played it (a Ray worker's log is written here on arrival)
    signing-key.pub     the public key the referee signed the logs with (base64)
    state/              the tournament's own referee's signing key (mode 0700; never
                        publish it; never under logs/)
    stderr/ID/          each spawned bot's stdout and stderr, one file per seat
    work/               the referee's logs of matches being played, and live processes

``results.jsonl`` is what resuming trusts: a match is done when its line is there. The
log is moved into ``logs/`` before the line is written, and everything else is derived.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar

from referee.files import create_private_file, write_atomic
from referee.log.summary import SeatSummary

if TYPE_CHECKING:
    from referee.backends import FinishedMatch
    from referee.table.table import SeatReport
    from referee.tournament.schedule import MatchSpec

STATUS_FINISHED = "finished"
STATUS_CANCELLED = "cancelled"
STATUS_FAILED = "failed"


def timestamp(when: datetime) -> str:
    """A time as the tournament's files write it: UTC, to the second.

    >>> timestamp(datetime(2025, 3, 1, 12, 30, 5, 999, tzinfo=UTC))
    '2025-03-01T12:30:05Z'
    """
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


_DEFAULT_COUNTS = (
    "timeouts",
    "illegal_defaults",
    "absent_turns",
    "benched_turns",
    "rejected",
    "disconnects",
)
"""The seat's counts of turns played by default and of actions refused, as every
results line has had them (``SeatSummary``'s fields, under their own names)."""


def _integers(d: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """Those fields of a results line as integers, to pass on as keyword arguments."""
    return {name: int(d[name]) for name in names}


@dataclasses.dataclass(frozen=True, slots=True)
class SeatResult:
    """One bot's part in one match."""

    bot: str
    summary: SeatSummary
    crashed: bool = False
    """The bot's process (or in-process task) ended before the match did."""
    exit_code: int | None = None
    """A spawned bot's exit status (negative: killed by that signal); None otherwise."""
    crash: str = ""
    """How the bot ended before the match did (``exited with status 1``, ``could not be
    started: ...``); empty when it did not."""
    stderr: str = ""
    """A spawned bot's output file, relative to the tournament folder."""
    breach: str = ""
    """The sandbox limit the bot broke and was killed for ("memory limit", ...)."""
    cpu_s: float | None = None
    """CPU time of a sandboxed bot over the match (all its processes); None otherwise."""
    cpu_turns_ms: float | None = None
    """A sandboxed bot's CPU time within its own turns (``referee.sandbox.turnclock``)."""
    cpu_turn_max_ms: float | None = None
    memory_mb: float | None = None
    """Peak memory of a sandboxed bot; None otherwise."""
    replaced_by: str = ""
    """The bot was disqualified before this match: who played its seat (a built-in
    bot, or "forfeit" for nobody)."""
    disqualified: str = ""
    """Set on the match that got the bot disqualified: why."""
    raised: int = 0
    """Turns on which a spawned bot's own code raised and its kit played the fallback
    (the kit's raised marker, docs/kits.md section 5)."""
    raised_first: str = ""
    """The first of them: ``hand 1, move 14: ZeroDivisionError: division by zero``."""

    @property
    def wall_ms_per_turn(self) -> float | None:
        s = self.summary
        return round(s.think_ms / s.turns, 1) if s.turns else None

    @property
    def cpu_ms_per_turn(self) -> float | None:
        if self.cpu_turns_ms is None or not self.summary.turns:
            return None
        return round(self.cpu_turns_ms / self.summary.turns, 1)

    def to_json(self) -> dict[str, Any]:
        s = self.summary
        return {
            "seat": s.seat,
            "bot": self.bot,
            "place": s.place,
            "total": s.total,
            "hands_won": s.hands_won,
            "scores": list(s.scores),
            "faulty_hands": list(s.faulty_hands),
            "connected": s.connected,
            **{name: getattr(s, name) for name in _DEFAULT_COUNTS},
            "late": s.late,
            "crashed": self.crashed,
            "exit_code": self.exit_code,
            "crash": self.crash,
            "stderr": self.stderr,
            "breach": self.breach,
            "turns": s.turns,
            "think_ms": s.think_ms,
            "wall_ms_per_turn": self.wall_ms_per_turn,
            "wall_ms_max_turn": s.think_max_ms,
            "cpu_s": _rounded(self.cpu_s, 3),
            "cpu_turns_ms": _rounded(self.cpu_turns_ms, 1),
            "cpu_ms_per_turn": self.cpu_ms_per_turn,
            "cpu_ms_max_turn": _rounded(self.cpu_turn_max_ms, 1),
            "memory_mb": _rounded(self.memory_mb, 1),
            "replaced_by": self.replaced_by,
            "disqualified": self.disqualified,
            "raised": self.raised,
            "raised_first": self.raised_first,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SeatResult:
        summary = SeatSummary(
            seat=int(d["seat"]),
            place=int(d["place"]),
            total=int(d["total"]),
            hands_won=int(d["hands_won"]),
            scores=tuple(int(x) for x in d["scores"]),
            connected=bool(d["connected"]),
            **_integers(d, _DEFAULT_COUNTS),
            late=int(d.get("late", 0)),  # results written before late answers were apart
            turns=int(d.get("turns", 0)),
            think_ms=int(d.get("think_ms", 0)),
            think_max_ms=int(d.get("wall_ms_max_turn", 0)),
            faulty_hands=tuple(int(x) for x in d.get("faulty_hands", ())),
        )
        code = d.get("exit_code")
        return cls(
            str(d["bot"]),
            summary,
            bool(d["crashed"]),
            None if code is None else int(code),
            str(d.get("crash", "")),
            str(d.get("stderr", "")),
            breach=str(d.get("breach", "")),
            cpu_s=_number(d.get("cpu_s")),
            cpu_turns_ms=_number(d.get("cpu_turns_ms")),
            cpu_turn_max_ms=_number(d.get("cpu_ms_max_turn")),
            memory_mb=_number(d.get("memory_mb")),
            replaced_by=str(d.get("replaced_by", "")),
            disqualified=str(d.get("disqualified", "")),
            raised=int(d.get("raised", 0)),  # results written before the marker: none
            raised_first=str(d.get("raised_first", "")),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class MatchResult:
    """One line of results.jsonl."""

    match_id: str
    index: int
    group: int
    round: int
    table: int
    seating: int
    seed: str
    status: str
    """finished; cancelled (ran over its time limit); failed (could not be played)."""
    error: str
    referee_match_id: str
    log: str
    """The log's path relative to the tournament folder; empty when there is none."""
    hands: int
    verified: bool | None
    """Whether ``referee verify`` passed on the log; None when not checked."""
    started: str
    duration_s: float
    seats: tuple[SeatResult, ...]
    retries: tuple[str, ...] = ()
    """Earlier attempts at the match that were lost with their node (Ray backend), and
    why, oldest first; the recorded match is the one attempt that came back whole."""
    final_hash: str = ""
    """SHA-256 of the log's last entry line (what its signature covers): published so
    that a log rewritten later no longer matches; empty when there is no log."""
    signed_by: str = ""
    """The key (base64 Ed25519) that signed the log; empty: unsigned."""

    @property
    def finished(self) -> bool:
        return self.status == STATUS_FINISHED

    def to_json(self) -> dict[str, Any]:
        """Every field, in the order the class declares them (the line's key order)."""
        line = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        line.update(
            duration_s=round(self.duration_s, 3),
            seats=[s.to_json() for s in self.seats],
            retries=list(self.retries),
        )
        return line

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MatchResult:
        verified = d.get("verified")
        return cls(
            match_id=str(d["match_id"]),
            index=int(d["index"]),
            group=int(d["group"]),
            round=int(d["round"]),
            table=int(d["table"]),
            seating=int(d["seating"]),
            seed=str(d["seed"]),
            status=str(d["status"]),
            error=str(d.get("error", "")),
            referee_match_id=str(d.get("referee_match_id", "")),
            log=str(d.get("log", "")),
            hands=int(d.get("hands", 0)),
            verified=None if verified is None else bool(verified),
            started=str(d.get("started", "")),
            duration_s=float(d.get("duration_s", 0.0)),
            seats=tuple(SeatResult.from_json(s) for s in d["seats"]),
            retries=tuple(str(x) for x in d.get("retries", ())),
            final_hash=str(d.get("final_hash", "")),
            signed_by=str(d.get("signed_by", "")),
        )


class ResultSink(Protocol):
    """What adds results up, one at a time (the standings, a sequential test)."""

    def add(self, result: MatchResult) -> object: ...


Sink = TypeVar("Sink", bound=ResultSink)


def fed(sink: Sink, results: Iterable[MatchResult]) -> Sink:
    """``sink`` with ``results`` added in schedule order, so that what it comes to is
    the same whatever order the matches ended in; returns ``sink``."""
    for result in sorted(results, key=lambda r: r.index):
        sink.add(result)
    return sink


CSV_COLUMNS = (
    "match_id",
    "index",
    "group",
    "seating",
    "status",
    "seat",
    "bot",
    "place",
    "total",
    "hands",
    "hands_won",
    "timeouts",
    "illegal_defaults",
    "absent_turns",
    "rejected",
    "disconnects",
    "crashed",
    "exit_code",
    "crash",
    "verified",
    "duration_s",
    "log",
    "breach",
    "turns",
    "wall_ms_per_turn",
    "cpu_ms_per_turn",
    "replaced_by",
)


def result_of(
    spec: MatchSpec, match: FinishedMatch, *, folder: Path, replaced_by: Sequence[str]
) -> MatchResult:
    """The results line of a match a backend gave back (paths relative to ``folder``);
    ``replaced_by``: who played each seat's disqualified bot, by seat."""
    report = match.report
    identity: dict[str, Any] = {
        "match_id": spec.match_id,
        "index": spec.index,
        "group": spec.group,
        "round": spec.round,
        "table": spec.table,
        "seating": spec.seating,
        "seed": spec.seed,
        "started": timestamp(match.started),
        "duration_s": match.duration_s,
        "retries": match.retries,
        "seats": seat_results(match, spec.bots, folder=folder, replaced_by=replaced_by),
    }
    if report is None:
        return MatchResult(
            status=STATUS_FAILED,
            error=match.error,
            referee_match_id=match.referee_match_id,
            log="",
            hands=0,
            verified=None,
            **identity,
        )
    return MatchResult(
        status=report.status,
        error=report.cancel_reason,
        referee_match_id=report.match_id,
        log=_relative(report.log_path, folder),
        hands=report.hands,
        verified=match.verified,
        final_hash=report.final_hash,
        signed_by=report.signed_by,
        **identity,
    )


def seat_results(
    match: FinishedMatch,
    bots: Sequence[str],
    *,
    folder: Path,
    replaced_by: Sequence[str] = ("", "", "", ""),
) -> tuple[SeatResult, ...]:
    """Each seat's result of a match a backend gave back (a failed match: four empty
    ones), named ``bots`` by seat, output paths relative to ``folder``. The ladder's
    workers read their seats' outcomes from these too."""
    from referee.log.outputs import raised_where

    if match.report is None:
        return tuple(SeatResult(bots[s], SeatSummary(seat=s)) for s in range(4))
    return tuple(
        SeatResult(
            bot=bots[r.seat],
            summary=r.summary,
            crashed=r.crashed,
            exit_code=r.exit_code,
            crash=r.exit.what if r.exit is not None else "",
            stderr=_relative(r.stderr_path, folder),
            replaced_by=replaced_by[r.seat],
            raised=len(r.raised),
            raised_first=(
                f"{raised_where(r.raised[0], match.report.turn_moves)}: {r.raised[0].error}"
                if r.raised
                else ""
            ),
            **_sandbox_fields(r),
        )
        for r in match.report.seats
    )


def _relative(path: Path | None, folder: Path) -> str:
    return "" if path is None else str(path.relative_to(folder))


def _sandbox_fields(seat: SeatReport) -> dict[str, Any]:
    """A seat's result fields from what its sandbox measured (none when it had none)."""
    out: dict[str, Any] = {}
    if seat.sandbox is not None:
        out["breach"] = seat.sandbox.breach.value if seat.sandbox.breach else ""
        out["cpu_s"] = seat.sandbox.cpu_s
        out["memory_mb"] = seat.sandbox.memory_peak_mb
    if seat.turns_cpu_ms is not None:
        out["cpu_turns_ms"], out["cpu_turn_max_ms"] = seat.turns_cpu_ms
    return out


def csv_rows(result: MatchResult) -> Iterator[list[Any]]:
    for sr in result.seats:
        s = sr.summary
        yield [
            result.match_id,
            result.index,
            result.group,
            result.seating,
            result.status,
            s.seat,
            sr.bot,
            s.place,
            s.total,
            result.hands,
            s.hands_won,
            s.timeouts,
            s.illegal_defaults,
            s.absent_turns,
            s.rejected,
            s.disconnects,
            int(sr.crashed),
            "" if sr.exit_code is None else sr.exit_code,
            sr.crash,
            "" if result.verified is None else int(result.verified),
            round(result.duration_s, 3),
            result.log,
            sr.breach,
            s.turns,
            "" if sr.wall_ms_per_turn is None else sr.wall_ms_per_turn,
            "" if sr.cpu_ms_per_turn is None else sr.cpu_ms_per_turn,
            sr.replaced_by,
        ]


def _csv_text(rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


class ResultsFiles:
    """results.jsonl and results.csv: read what is there, then append one match at a time."""

    def __init__(self, folder: Path) -> None:
        self.jsonl_path = folder / "results.jsonl"
        self.csv_path = folder / "results.csv"
        self._jsonl: IO[str] | None = None
        self._csv: IO[str] | None = None

    def read(self) -> list[MatchResult]:
        """The results recorded so far, changing nothing on disk (a dry run): a last
        line cut short is left out; a match that appears twice counts once."""
        data = self.jsonl_path.read_bytes() if self.jsonl_path.exists() else b""
        return self._parse(data[: data.rfind(b"\n") + 1])

    def load(self) -> list[MatchResult]:
        """The results recorded so far. A line cut short by a crash is dropped from the
        file; if a match appears twice only its first line counts. results.csv is
        rebuilt from them, so neither file has a partial or repeated row."""
        data = b""
        if self.jsonl_path.exists():
            data = self.jsonl_path.read_bytes()
            keep = data.rfind(b"\n") + 1
            if keep != len(data):
                with open(self.jsonl_path, "r+b") as f:
                    f.truncate(keep)
            data = data[:keep]
        results = self._parse(data)
        rows = [CSV_COLUMNS, *(row for r in results for row in csv_rows(r))]
        write_atomic(self.csv_path, _csv_text(rows), sync=False)
        return results

    @staticmethod
    def _parse(data: bytes) -> list[MatchResult]:
        results: list[MatchResult] = []
        seen: set[str] = set()
        for line in data.decode("utf-8").splitlines():
            if not line.strip():
                continue
            result = MatchResult.from_json(json.loads(line))
            if result.match_id not in seen:
                seen.add(result.match_id)
                results.append(result)
        return results

    def open(self) -> None:
        for path in (self.jsonl_path, self.csv_path):
            create_private_file(path, b"", sync=False)  # a tournament's files are private
        self._jsonl = open(self.jsonl_path, "a", encoding="utf-8")  # noqa: SIM115
        self._csv = open(self.csv_path, "a", encoding="utf-8", newline="")  # noqa: SIM115

    def append(self, result: MatchResult) -> None:
        """Write the match's line (fsynced before returning: resuming trusts it) and its
        CSV rows (flushed; results.csv is rebuilt from results.jsonl on every start)."""
        if self._jsonl is None or self._csv is None:
            raise ValueError("ResultsFiles.open() first")
        line = json.dumps(result.to_json(), separators=(",", ":"), ensure_ascii=False)
        self._jsonl.write(line + "\n")
        self._jsonl.flush()
        os.fsync(self._jsonl.fileno())
        self._csv.write(_csv_text(csv_rows(result)))
        self._csv.flush()

    def close(self) -> None:
        for f in (self._jsonl, self._csv):
            if f is not None:
                f.close()
        self._jsonl = self._csv = None


__all__ = [
    "CSV_COLUMNS",
    "STATUS_CANCELLED",
    "STATUS_FAILED",
    "STATUS_FINISHED",
    "MatchResult",
    "ResultsFiles",
    "SeatResult",
    "SeatSummary",
    "csv_rows",
    "result_of",
    "seat_results",
    "timestamp",
]
