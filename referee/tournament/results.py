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
    logs/ID.jsonl       each match's event log (``referee verify`` checks it)
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
from pathlib import Path
from typing import IO, Any

from referee.log.summary import SeatSummary

STATUS_FINISHED = "finished"
STATUS_CANCELLED = "cancelled"
STATUS_FAILED = "failed"


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

    def to_json(self) -> dict[str, Any]:
        s = self.summary
        return {
            "seat": s.seat,
            "bot": self.bot,
            "place": s.place,
            "total": s.total,
            "hands_won": s.hands_won,
            "scores": list(s.scores),
            "connected": s.connected,
            "timeouts": s.timeouts,
            "illegal_defaults": s.illegal_defaults,
            "absent_turns": s.absent_turns,
            "benched_turns": s.benched_turns,
            "rejected": s.rejected,
            "disconnects": s.disconnects,
            "late": s.late,
            "crashed": self.crashed,
            "exit_code": self.exit_code,
            "crash": self.crash,
            "stderr": self.stderr,
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
            timeouts=int(d["timeouts"]),
            illegal_defaults=int(d["illegal_defaults"]),
            absent_turns=int(d["absent_turns"]),
            benched_turns=int(d["benched_turns"]),
            rejected=int(d["rejected"]),
            disconnects=int(d["disconnects"]),
            late=int(d.get("late", 0)),  # results written before late answers were apart
        )
        code = d.get("exit_code")
        return cls(
            str(d["bot"]),
            summary,
            bool(d["crashed"]),
            None if code is None else int(code),
            str(d.get("crash", "")),
            str(d.get("stderr", "")),
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

    @property
    def finished(self) -> bool:
        return self.status == STATUS_FINISHED

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "index": self.index,
            "group": self.group,
            "round": self.round,
            "table": self.table,
            "seating": self.seating,
            "seed": self.seed,
            "status": self.status,
            "error": self.error,
            "referee_match_id": self.referee_match_id,
            "log": self.log,
            "hands": self.hands,
            "verified": self.verified,
            "started": self.started,
            "duration_s": round(self.duration_s, 3),
            "seats": [s.to_json() for s in self.seats],
        }

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
        )


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
)


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
        ]


def _csv_text(rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def write_atomic(path: Path, text: str, *, sync: bool = True) -> None:
    """Replace a file's contents in one step (write a sibling, rename over the file).

    ``sync=False`` skips the fsync, for files that are rebuilt from results.jsonl on the
    next start anyway (standings, results.csv)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        if sync:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


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
    "write_atomic",
]
