"""The values the store hands out and takes in: frozen, typed, checked where they come
from outside (a worker's outcome is checked before it reaches the database); the states
a version, a match and a deal group go through, which the schema's CHECKs hold to."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row

from referee.ladder.errors import LadderError
from referee.ladder.storage.rating import Rating
from referee.ladder.uploads.manifest import Manifest

if TYPE_CHECKING:  # the tournament package is heavy to import; only its type is needed
    from referee.log.summary import SeatSummary
    from referee.tournament.results import SeatResult

MAX_SEAT_TEXT = 2000
"""Bytes of a crash message or a breach kept per seat."""
MAX_FAILURE_DETAIL = 4000


class VersionState(enum.StrEnum):
    PENDING = "pending"
    """Uploaded and unpacked; waiting for (or playing) its validation match."""
    ACTIVE = "active"
    """Validated: scheduled for ranked matches and shown on the leaderboard."""
    REJECTED = "rejected"
    """Failed validation; ``reason`` and ``stderr_tail`` say why."""
    RETIRED = "retired"
    """No longer scheduled (a newer version replaced it, or its team retired it); its
    matches and ratings stay."""


class LadderMatchState(enum.StrEnum):
    SCHEDULED = "scheduled"
    RUNNING = "running"
    """Claimed by a worker under a lease; a lease that ran out puts it back in the queue."""
    FINISHED = "finished"
    FAILED = "failed"
    """Could not be played to its end (``failure`` names the cause)."""
    CANCELLED = "cancelled"
    """Taken off the queue before it was played (a version of it was retired)."""


class GroupPurpose(enum.StrEnum):
    RANKED = "ranked"
    """Rated when its last match is recorded."""
    VALIDATION = "validation"
    """A pending version against built-in bots; never rated."""


@dataclasses.dataclass(frozen=True, slots=True)
class TeamLimits:
    """What one team may put on the ladder."""

    uploads_per_hour: int = 10
    disk_bytes: int = 512 * 1024 * 1024
    """Archives and unpacked folders of its versions whose files are kept."""
    versions_kept: int = 5
    """Retired and rejected versions whose files are kept (their history always is)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Team:
    id: int
    name: str
    house: bool
    created_at: float
    key_id: str | None
    """The key's public id (``pdl_<id>_...``); None for the house team."""


@dataclasses.dataclass(frozen=True, slots=True)
class NewKey:
    """A team and its key, which is shown this once and never stored."""

    team: Team
    key: str = dataclasses.field(repr=False)


@dataclasses.dataclass(frozen=True, slots=True)
class Version:
    id: int
    team: str
    bot: str
    number: int
    state: VersionState
    runtime: str
    manifest: Manifest
    archive_sha256: str | None
    archive_format: str | None
    archive_bytes: int
    unpacked_bytes: int
    files: int
    reason: str
    stderr_tail: str
    uploaded_at: float
    state_at: float
    rating: Rating
    rated_groups: int
    matches: int
    failed_matches: int
    last_played_at: float | None
    files_removed_at: float | None

    @property
    def label(self) -> str:
        """``team/bot#number``, as the leaderboard and logs name it."""
        return f"{self.team}/{self.bot}#{self.number}"


def team_from_row(row: Row[Any]) -> Team:
    return Team(row.id, row.name, bool(row.house), row.created_at, row.key_id)


def version_from_row(row: Row[Any]) -> Version:
    return Version(
        id=row.id,
        team=row.team,
        bot=row.bot,
        number=row.number,
        state=VersionState(row.state),
        runtime=row.runtime,
        manifest=Manifest.from_json(row.manifest),
        archive_sha256=row.archive_sha256,
        archive_format=row.archive_format,
        archive_bytes=row.archive_bytes,
        unpacked_bytes=row.unpacked_bytes,
        files=row.files,
        reason=row.reason,
        stderr_tail=row.stderr_tail,
        uploaded_at=row.uploaded_at,
        state_at=row.state_at,
        rating=Rating(row.mu, row.sigma),
        rated_groups=row.rated_groups,
        matches=row.matches,
        failed_matches=row.failed_matches,
        last_played_at=row.last_played_at,
        files_removed_at=row.files_removed_at,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Claim:
    """A match a worker holds under a lease: what it needs to play it."""

    match_id: str
    token: str = dataclasses.field(repr=False)
    """Proves the lease: ``renew``, ``release`` and ``record`` need it."""
    worker: str
    group_id: int
    purpose: GroupPurpose
    seating: int
    seed: str = dataclasses.field(repr=False)
    """The deal group's seed: every seating of the group plays the same deals."""
    attempt: int
    expires_at: float
    version_ids: tuple[int, ...]
    """The versions in seats 0..3."""


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat of a played match: the log's summary of it (``referee.log.summary``)
    and what only the worker saw (the process's end, the sandbox's breach)."""

    seat: int
    place: int
    total: int
    hands_won: int = 0
    scores: tuple[int, ...] = ()
    timeouts: int = 0
    illegal_defaults: int = 0
    absent_turns: int = 0
    rejected: int = 0
    disconnects: int = 0
    turns: int = 0
    think_ms: int = 0
    crashed: bool = False
    exit_code: int | None = None
    crash: str = ""
    breach: str = ""
    stderr_path: str = ""

    @classmethod
    def from_summary(cls, summary: SeatSummary, seat: int, **worker: Any) -> SeatRecord:
        """A seat of the log's summary (every field the summary has), with what only the
        worker saw (``worker``)."""
        taken = {
            f.name: getattr(summary, f.name)
            for f in dataclasses.fields(cls)
            if f.name not in ("seat", "scores") and hasattr(summary, f.name)
        }
        return cls(seat=seat, scores=tuple(summary.scores), **taken, **worker)

    @classmethod
    def of(cls, result: SeatResult) -> SeatRecord:
        """A seat as the tournament's table reports it (``referee.tournament.results``),
        which is what the ladder's workers will have."""
        return cls.from_summary(
            result.summary,
            result.summary.seat,
            crashed=result.crashed,
            exit_code=result.exit_code,
            crash=result.crash,
            breach=result.breach,
            stderr_path=result.stderr,
        )

    def row(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["scores"] = json.dumps(list(self.scores))
        for key in ("crash", "breach", "stderr_path"):
            values[key] = values[key][:MAX_SEAT_TEXT]
        return values


@dataclasses.dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What a worker records for a match it played.

    ``finished``: the match reached its end (all four seats' results given);
    otherwise it failed and ``failure`` names the cause in one stable word (metrics count
    by it: ``start``, ``referee``, ``timeout``...), ``failure_detail`` says more, and the
    seats' results are whatever the worker has (a bot that could not start, its crash).
    """

    finished: bool
    seats: tuple[SeatRecord, ...] = ()
    log_path: str | None = None
    log_hash: str | None = None
    log_signed_by: str | None = None
    hands: int | None = None
    duration_s: float | None = None
    failure: str | None = None
    failure_detail: str | None = None

    def check(self) -> None:
        """LadderError when the outcome cannot be right, before anything is written."""
        seats = [s.seat for s in self.seats]
        if len(set(seats)) != len(seats) or not set(seats) <= {0, 1, 2, 3}:
            raise LadderError(f"seat results for seats {seats}: each of 0..3 at most once")
        if any(not 0 <= s.place <= 4 for s in self.seats):
            raise LadderError("places are 1 to 4 (0: the seat has none, in a failed match)")
        if self.finished:
            if sorted(seats) != [0, 1, 2, 3]:
                raise LadderError("a finished match has a result for each of its four seats")
            if any(not 1 <= s.place <= 4 for s in self.seats):
                raise LadderError("places are 1 to 4")
            if not self.log_path or not self.log_hash or len(self.log_hash) != 64:
                raise LadderError("a finished match has its log's path and final hash")
            if self.failure:
                raise LadderError("a finished match has no failure")
        elif not self.failure or len(self.failure) > 40:
            raise LadderError("a failed match names its cause in one word (failure)")

    def match_values(self) -> dict[str, Any]:
        return {
            "log_path": self.log_path,
            "log_hash": self.log_hash,
            "log_signed_by": self.log_signed_by,
            "hands": self.hands,
            "duration_s": self.duration_s,
            "failure": self.failure,
            "failure_detail": (self.failure_detail or "")[:MAX_FAILURE_DETAIL] or None,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class Recorded:
    match_id: str
    state: LadderMatchState
    already: bool
    """The match was recorded before: nothing changed."""
    group_rated: bool
    """This record completed a ranked deal group, and its ratings were applied."""
