"""The ladder's tables, as SQLAlchemy Core metadata: one schema for SQLite and PostgreSQL.

This module is what the code queries; ``migrations/versions/`` is what builds a database,
and a test holds the two equal on both engines (``alembic.autogenerate.compare_metadata``
finds no difference after ``upgrade head``). A change here goes with a new revision.

Times are seconds since the epoch (``DOUBLE``/``REAL``): one type on both engines, no
time zones to get wrong, compared as numbers for leases. States are short strings with a
CHECK, not database enums (an enum type is a migration of its own on PostgreSQL): their
values are ``records``' (``VersionState``, ``LadderMatchState``, ``GroupPurpose``).

The tables, and the issue's words they answer:

- ``teams``: who submits; the API key as its public id and a hash (``referee.ladder.storage.keys``).
  The house team (no key) owns the built-in bots that validate and anchor the ladder.
- ``bots``, ``versions``: a bot is a name under a team; each upload that unpacked is an
  immutable version (archive hash, manifest, sizes) whose state moves pending ->
  active | rejected, active -> retired, and never back. A version's current rating lives
  on its row (the leaderboard's one read), its history in ``ratings``.
- ``uploads``: every upload, refused ones too: the uploads-per-hour limit counts them.
- ``deal_groups``, ``matches``, ``match_seats``: a group is one seed played at several
  seatings by the same versions (duplicate deals); a match is one seating, with its state
  (scheduled, running, finished, failed, cancelled), its lease while a worker plays it,
  and its log's path and final hash once recorded. The queue is the scheduled matches
  (and running ones whose lease ran out): one row per match, so no match is queued twice.
- ``seat_results``: what each seat came to, written once when the match is recorded.
- ``ratings``: one row per version per rated group; unique, so a group is rated once.
"""

from __future__ import annotations

import enum

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from referee.ladder.storage.records import GroupPurpose, LadderMatchState, VersionState

# Constraint names fixed by convention, so migrations can name what they alter and the
# two engines agree (SQLite keeps the names it is given).
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


UNARCHIVED_RUNTIMES = ("builtin", "remote")
"""The runtimes of versions that no archive brings (``referee.ladder.uploads.manifest``)."""

DONE = (LadderMatchState.FINISHED, LadderMatchState.FAILED, LadderMatchState.CANCELLED)
"""The states a match never leaves."""


def _one_of(column: str, values: type[enum.StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


teams = Table(
    "teams",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(40), nullable=False, unique=True),
    # The key's public part: finds the row without scanning, names the key in logs.
    Column("key_id", String(32), unique=True),
    Column("key_hash", String(100)),
    Column("created_at", Double, nullable=False),
    Column("key_created_at", Double),
    # The house team: owns the built-in bots, has no key, never uploads.
    Column("house", Boolean, nullable=False, default=False),
    CheckConstraint("(key_id IS NULL) = (key_hash IS NULL)", name="key_whole"),
    sqlite_autoincrement=True,
)

bots = Table(
    "bots",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False),
    Column("name", String(40), nullable=False),
    Column("created_at", Double, nullable=False),
    UniqueConstraint("team_id", "name"),
    sqlite_autoincrement=True,
)

versions = Table(
    "versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("bot_id", Integer, ForeignKey("bots.id"), nullable=False),
    # 1, 2, 3... within its bot.
    Column("number", Integer, nullable=False),
    # The uploaded archive's SHA-256: names its unpacked folder (content-addressed). None
    # for the versions no archive brings: built-in bots and remote ones (in the lobby).
    Column("archive_sha256", String(64)),
    Column("archive_format", String(8)),
    Column("archive_bytes", Integer, nullable=False, default=0),
    Column("unpacked_bytes", Integer, nullable=False, default=0),
    Column("files", Integer, nullable=False, default=0),
    # The manifest as parsed (JSON): runtime and command.
    Column("manifest", Text, nullable=False),
    Column("runtime", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    # Why it was rejected or retired.
    Column("reason", Text, nullable=False, default=""),
    # The last lines of its stderr in the validation match that rejected it.
    Column("stderr_tail", Text, nullable=False, default=""),
    Column("uploaded_at", Double, nullable=False),
    # When it entered its current state.
    Column("state_at", Double, nullable=False),
    Column("mu", Double, nullable=False),
    Column("sigma", Double, nullable=False),
    Column("rated_groups", Integer, nullable=False, default=0),
    # Ranked matches finished with it seated.
    Column("matches", Integer, nullable=False, default=0),
    Column("failed_matches", Integer, nullable=False, default=0),
    Column("last_played_at", Double),
    # Its archive and folder were removed (versions kept per team); history stays.
    Column("files_removed_at", Double),
    UniqueConstraint("bot_id", "number"),
    CheckConstraint(_one_of("state", VersionState), name="state"),
    CheckConstraint(
        f"(archive_sha256 IS NULL) = (runtime IN {UNARCHIVED_RUNTIMES!r})", name="archive"
    ),
    Index(None, "state", "sigma"),
    sqlite_autoincrement=True,
)

uploads = Table(
    "uploads",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team_id", Integer, ForeignKey("teams.id"), nullable=False),
    Column("at", Double, nullable=False),
    Column("archive_bytes", Integer, nullable=False),
    # The version it made; NULL while it is being checked or when it was refused.
    Column("version_id", Integer, ForeignKey("versions.id")),
    # Why it was refused (not an archive, too big, no manifest...); NULL otherwise.
    Column("refused", Text),
    Index(None, "team_id", "at"),
    sqlite_autoincrement=True,
)

deal_groups = Table(
    "deal_groups",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("purpose", String(16), nullable=False),
    Column("seed", String(64), nullable=False),
    # How many matches (seatings) it has.
    Column("size", Integer, nullable=False),
    Column("created_at", Double, nullable=False),
    # When its last match was done (and a ranked group rated): set once, in that
    # match's transaction.
    Column("closed_at", Double),
    CheckConstraint(_one_of("purpose", GroupPurpose), name="purpose"),
    CheckConstraint("size BETWEEN 1 AND 24", name="size"),
    sqlite_autoincrement=True,
)

matches = Table(
    "matches",
    metadata,
    # The match id: the referee's id for it and its log's file name.
    Column("id", String(40), primary_key=True),
    Column("group_id", Integer, ForeignKey("deal_groups.id"), nullable=False),
    Column("seating", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    # Lower is played first (validation before ranked matches).
    Column("priority", Integer, nullable=False),
    Column("queued_at", Double, nullable=False),
    # The worker holding (or that last held) its lease.
    Column("worker", String(100)),
    # The current lease's; a recorded match keeps the token of the attempt that recorded it.
    Column("lease_token", String(64)),
    Column("lease_expires_at", Double),
    # Claims so far: a match whose worker died this many times is given up on.
    Column("attempts", Integer, nullable=False, default=0),
    Column("started_at", Double),
    Column("finished_at", Double),
    # Relative to the ladder's folder.
    Column("log_path", Text),
    # The log's final hash (what its signature covers), and the key that signed it
    # (base64; each worker's referee may have its own).
    Column("log_hash", String(64)),
    Column("log_signed_by", String(64)),
    Column("hands", Integer),
    Column("duration_s", Double),
    # The cause of a failed or cancelled match, a short stable word (metrics count by it).
    Column("failure", String(40)),
    Column("failure_detail", Text),
    # While it runs: the public address of the referee playing it (its SpectatorService)
    # and that referee's id for the match, so the ladder's web can relay its public
    # events (revision 0002).
    Column("live_address", String(100)),
    Column("live_id", String(40)),
    UniqueConstraint("group_id", "seating"),
    CheckConstraint(_one_of("state", LadderMatchState), name="state"),
    Index(None, "state", "priority", "queued_at"),
    Index(None, "state", "finished_at"),
)

match_seats = Table(
    "match_seats",
    metadata,
    Column("match_id", String(40), ForeignKey("matches.id"), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("version_id", Integer, ForeignKey("versions.id"), nullable=False),
    PrimaryKeyConstraint("match_id", "seat"),
    CheckConstraint("seat BETWEEN 0 AND 3", name="seat"),
    Index(None, "version_id"),
)

seat_results = Table(
    "seat_results",
    metadata,
    Column("match_id", String(40), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("place", Integer, nullable=False),
    Column("total", Integer, nullable=False),
    Column("hands_won", Integer, nullable=False),
    # Its score in each hand, a JSON list (the head to head's paired differences).
    Column("scores", Text, nullable=False),
    Column("timeouts", Integer, nullable=False),
    Column("illegal_defaults", Integer, nullable=False),
    Column("absent_turns", Integer, nullable=False),
    Column("rejected", Integer, nullable=False),
    Column("disconnects", Integer, nullable=False),
    Column("turns", Integer, nullable=False),
    Column("think_ms", Integer, nullable=False),
    Column("crashed", Boolean, nullable=False),
    Column("exit_code", Integer),
    Column("crash", Text, nullable=False),
    Column("breach", Text, nullable=False),
    # The bot's output file, relative to the ladder's folder (its team's page shows it).
    Column("stderr_path", Text, nullable=False),
    PrimaryKeyConstraint("match_id", "seat"),
    ForeignKeyConstraint(["match_id", "seat"], ["match_seats.match_id", "match_seats.seat"]),
)

ratings = Table(
    "ratings",
    metadata,
    Column("version_id", Integer, ForeignKey("versions.id"), nullable=False),
    Column("group_id", Integer, ForeignKey("deal_groups.id"), nullable=False),
    Column("mu", Double, nullable=False),
    Column("sigma", Double, nullable=False),
    Column("at", Double, nullable=False),
    PrimaryKeyConstraint("version_id", "group_id"),
    Index(None, "version_id", "at"),
)
