"""The ladder's store: a small typed API over its database, every write one transaction.

What a worker does with it, and why a SIGKILL at any moment loses no recorded result and
counts no match twice:

1. ``claim(worker, lease_s)`` takes the first match of the queue (scheduled, or running
   under a lease that ran out) and marks it running under a fresh lease token, in one
   transaction. Two workers never get the same match: SQLite serialises writers
   (``BEGIN IMMEDIATE``), PostgreSQL locks the row (``FOR UPDATE SKIP LOCKED``, so
   the other worker takes the next match instead of waiting).
2. While it plays, the worker ``renew``\\ s its lease. A worker that was killed stops
   renewing; its lease runs out and the next ``claim`` plays the match again (its log
   under a new file; the old attempt's is never indexed). A match claimed
   ``max_attempts`` times without a result is given up as failed (``abandoned``):
   a match that kills its worker every time does not stall the queue.
3. ``record(match_id, token, outcome)`` writes the result, the seats' results, the
   versions' counters and, when it is the last match of its deal group, the group's
   rating, all in one transaction: either all of it is in the database or none of it is.
   It is idempotent by match id: a second record of a finished match changes nothing and
   says so (``Recorded.already``). Only the holder of the current lease records; a worker
   whose lease was taken over gets ``LeaseLost`` and drops its result.

Times come from ``clock`` (seconds since the epoch), so tests move time instead of
sleeping; on several machines the clocks must agree to well within a lease (NTP).
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Row, and_, func, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from referee.ladder import db
from referee.ladder.errors import (
    Conflict,
    KeyRefused,
    LadderError,
    LeaseLost,
    NotFound,
    QuotaExceeded,
)
from referee.ladder.keys import matches as key_matches
from referee.ladder.keys import new_key, parse_key
from referee.ladder.rating import Rater, Rating
from referee.ladder.schema import (
    DONE,
    GroupPurpose,
    MatchState,
    VersionState,
    bots,
    deal_groups,
    match_seats,
    seat_results,
    teams,
    uploads,
    versions,
)
from referee.ladder.schema import matches as matches_t
from referee.ladder.schema import ratings as ratings_t
from referee.ladder.types import (
    Claim,
    MatchOutcome,
    NewKey,
    Recorded,
    Team,
    TeamLimits,
    Version,
    team_of,
    version_of,
)

T = TypeVar("T")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
"""Team and bot names: they go into URLs, file names and logs."""
HOUSE = "house"
PRIORITY = {GroupPurpose.VALIDATION: 0, GroupPurpose.RANKED: 10}
"""Validation first: an entrant waits for their new version, nobody waits for a ranked match."""
_RETRY_SQLSTATES = {"40001", "40P01"}  # serialization failure, deadlock (PostgreSQL)
_WRITE_ATTEMPTS = 4


def check_name(kind: str, name: str) -> str:
    """A team or bot name, or LadderError.

    >>> check_name("bot", "greedy-2")
    'greedy-2'
    >>> check_name("team", "../etc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    referee.ladder.errors.LadderError: a team name is 1 to 40 of ..., not '../etc'
    """
    if not NAME.fullmatch(name):
        raise LadderError(
            f"a {kind} name is 1 to 40 of a-z 0-9 _ - (a letter or digit first), not {name[:60]!r}"
        )
    return name


class LadderStore:
    """The ladder's database. ``open`` migrates it to the newest schema first."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], float] = time.time,
        rater: Rater | None = None,
        max_attempts: int = 3,
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.rater = rater or Rater()
        self.max_attempts = max_attempts

    @classmethod
    def open(cls, url: str, *, migrate: bool = True, **kwargs: Any) -> LadderStore:
        engine = db.make_engine(url)
        if migrate:
            db.upgrade(engine)
        elif db.current_revision(engine) != db.head_revision():
            raise LadderError("the ladder's database is not at the newest schema: migrate it")
        return cls(engine, **kwargs)

    def close(self) -> None:
        self.engine.dispose()

    # -- transactions -------------------------------------------------------------------

    def _write(self, body: Callable[[Connection], T]) -> T:
        """Run ``body`` in one write transaction; again (a few times) when PostgreSQL
        aborts it for a deadlock or a serialization failure, which nothing else fixes."""
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                with db.writing(self.engine) as conn:
                    return body(conn)
            except DBAPIError as exc:
                code = getattr(exc.orig, "sqlstate", None)
                if code not in _RETRY_SQLSTATES or attempt == _WRITE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A consistent snapshot for several reads (``referee.ladder.views``)."""
        with db.reading(self.engine) as conn:
            yield conn

    # -- teams and keys -----------------------------------------------------------------

    def create_team(self, name: str) -> NewKey:
        """A new team and its API key, shown this once (only its hash is kept)."""
        check_name("team", name)
        if name == HOUSE:
            raise Conflict(f"the team name {HOUSE!r} is the ladder's own")
        key, key_id, digest = new_key()

        def body(conn: Connection) -> Team:
            now = self.clock()
            try:
                team_id = conn.execute(
                    insert(teams)
                    .values(name=name, key_id=key_id, key_hash=digest, created_at=now)
                    .values(key_created_at=now, house=False)
                    .returning(teams.c.id)
                ).scalar_one()
            except IntegrityError:
                raise Conflict(f"there is already a team {name!r}") from None
            return Team(team_id, name, False, now, key_id)

        return NewKey(self._write(body), key)

    def rotate_key(self, team_name: str) -> NewKey:
        """A new key for a team; the old one stops working at once."""
        key, key_id, digest = new_key()

        def body(conn: Connection) -> Team:
            row = self._team_row(conn, team_name, lock=True)
            if row.house:
                raise Conflict("the house team has no key")
            conn.execute(
                update(teams)
                .where(teams.c.id == row.id)
                .values(key_id=key_id, key_hash=digest, key_created_at=self.clock())
            )
            return dataclasses.replace(team_of(row), key_id=key_id)

        return NewKey(self._write(body), key)

    def team_by_key(self, key: str) -> Team:
        """The team a presented key belongs to; KeyRefused otherwise. Throttling the
        refusals is the caller's (``keys.KeyGuard``): this only answers."""
        key_id, secret = parse_key(key)
        with db.reading(self.engine) as conn:
            row = conn.execute(select(teams).where(teams.c.key_id == key_id)).first()
        if not key_matches(row.key_hash if row else None, key_id, secret) or row is None:
            raise KeyRefused("not a key of this ladder (or an old one)")
        return team_of(row)

    def team(self, name: str) -> Team:
        with db.reading(self.engine) as conn:
            return team_of(self._team_row(conn, name))

    def _team_row(self, conn: Connection, name: str, lock: bool = False) -> Row[Any]:
        query = select(teams).where(teams.c.name == name)
        row = conn.execute(query.with_for_update() if lock else query).first()
        if row is None:
            raise NotFound(f"no team {name!r}")
        return row

    # -- versions -----------------------------------------------------------------------

    def builtin_version(self, strategy: str) -> Version:
        """The house's version of a built-in strategy (``random``, ``greedy``...), made
        active the first time it is asked for: validation matches and the leaderboard's
        anchors play against it."""
        check_name("bot", strategy)

        def body(conn: Connection) -> int:
            house = conn.execute(select(teams.c.id).where(teams.c.house)).scalar()
            now = self.clock()
            if house is None:
                house = conn.execute(
                    insert(teams)
                    .values(name=HOUSE, created_at=now, house=True)
                    .returning(teams.c.id)
                ).scalar_one()
            bot_id = self._bot_id(conn, house, strategy, now)
            found = conn.execute(
                select(versions.c.id).where(versions.c.bot_id == bot_id).order_by(versions.c.id)
            ).scalar()
            if found is not None:
                return int(found)
            manifest = json.dumps({"runtime": "builtin", "command": [strategy]})
            return self._insert_version(
                conn, bot_id, now, VersionState.ACTIVE, runtime="builtin", manifest=manifest
            )

        return self.version(self._write(body))

    def reserve_upload(self, team_name: str, archive_bytes: int, limits: TeamLimits) -> int:
        """Count an upload against its team's limits before its archive is unpacked:
        the upload's id, or QuotaExceeded (uploads in the last hour, disk). Refused
        uploads count too, so a team cannot flood the ladder with broken archives."""

        def body(conn: Connection) -> int:
            team = self._team_row(conn, team_name, lock=True)  # one upload at a time
            if team.house:
                raise Conflict("the house team does not upload")
            now = self.clock()
            recent = conn.execute(
                select(uploads.c.at)
                .where(uploads.c.team_id == team.id, uploads.c.at > now - 3600)
                .order_by(uploads.c.at)
            ).scalars()
            times = list(recent)
            if len(times) >= limits.uploads_per_hour:
                wait = times[len(times) - limits.uploads_per_hour] + 3600 - now
                raise QuotaExceeded(
                    f"{limits.uploads_per_hour} uploads in the last hour; wait {wait:.0f} s"
                )
            used = self._disk_used(conn, team.id)
            if used + archive_bytes > limits.disk_bytes:
                raise QuotaExceeded(
                    f"the team's versions take {used} bytes of its {limits.disk_bytes}: "
                    "retire some (their files go, their history stays)"
                )
            return int(
                conn.execute(
                    insert(uploads)
                    .values(team_id=team.id, at=now, archive_bytes=archive_bytes)
                    .returning(uploads.c.id)
                ).scalar_one()
            )

        return self._write(body)

    def refuse_upload(self, upload_id: int, reason: str) -> None:
        def body(conn: Connection) -> None:
            conn.execute(
                update(uploads)
                .where(uploads.c.id == upload_id, uploads.c.version_id.is_(None))
                .values(refused=reason[:2000])
            )

        self._write(body)

    def add_version(
        self,
        upload_id: int,
        bot_name: str,
        *,
        archive_sha256: str,
        archive_format: str,
        archive_bytes: int,
        unpacked_bytes: int,
        files: int,
        manifest_json: str,
        runtime: str,
        limits: TeamLimits,
    ) -> Version:
        """A new pending version of ``bot_name`` (the bot is made on its first upload)
        from a reserved upload whose archive unpacked (``archive.UnpackedArchive``)."""
        check_name("bot", bot_name)

        def body(conn: Connection) -> int:
            up = conn.execute(select(uploads).where(uploads.c.id == upload_id)).first()
            if up is None or up.version_id is not None or up.refused is not None:
                raise Conflict(f"upload {upload_id} is not waiting for its version")
            used = self._disk_used(conn, up.team_id)
            if used + archive_bytes + unpacked_bytes > limits.disk_bytes:
                raise QuotaExceeded(
                    f"this version would take the team's disk to "
                    f"{used + archive_bytes + unpacked_bytes} bytes of its {limits.disk_bytes}"
                )
            now = self.clock()
            bot_id = self._bot_id(conn, up.team_id, bot_name, now)
            version_id = self._insert_version(
                conn,
                bot_id,
                now,
                VersionState.PENDING,
                runtime=runtime,
                manifest=manifest_json,
                archive_sha256=archive_sha256,
                archive_format=archive_format,
                archive_bytes=archive_bytes,
                unpacked_bytes=unpacked_bytes,
                files=files,
            )
            conn.execute(
                update(uploads).where(uploads.c.id == upload_id).values(version_id=version_id)
            )
            return version_id

        return self.version(self._write(body))

    def _bot_id(self, conn: Connection, team_id: int, name: str, now: float) -> int:
        query = select(bots.c.id).where(bots.c.team_id == team_id, bots.c.name == name)
        found = conn.execute(query.with_for_update()).scalar()
        if found is not None:
            return int(found)
        return int(
            conn.execute(
                insert(bots).values(team_id=team_id, name=name, created_at=now).returning(bots.c.id)
            ).scalar_one()
        )

    def _insert_version(
        self, conn: Connection, bot_id: int, now: float, state: VersionState, **values: Any
    ) -> int:
        number = conn.execute(
            select(func.coalesce(func.max(versions.c.number), 0)).where(versions.c.bot_id == bot_id)
        ).scalar_one()
        initial = self.rater.initial()
        return int(
            conn.execute(
                insert(versions)
                .values(bot_id=bot_id, number=number + 1, state=state, uploaded_at=now)
                .values(state_at=now, mu=initial.mu, sigma=initial.sigma, **values)
                .values(reason="", stderr_tail="", rated_groups=0, matches=0, failed_matches=0)
                .returning(versions.c.id)
            ).scalar_one()
        )

    def _disk_used(self, conn: Connection, team_id: int) -> int:
        """The bytes of a team's versions whose files are kept (archive and folder)."""
        return int(
            conn.execute(
                select(
                    func.coalesce(func.sum(versions.c.archive_bytes + versions.c.unpacked_bytes), 0)
                )
                .select_from(versions.join(bots))
                .where(bots.c.team_id == team_id, versions.c.files_removed_at.is_(None))
            ).scalar_one()
        )

    def disk_used(self, team_name: str) -> int:
        with db.reading(self.engine) as conn:
            return self._disk_used(conn, self._team_row(conn, team_name).id)

    def activate(self, version_id: int) -> Version:
        """A pending version passed validation: active, and its bot's active version
        before it is retired (its queued matches cancelled, its history kept)."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            self._move(conn, row, VersionState.PENDING, VersionState.ACTIVE, "")
            older = conn.execute(
                select(versions)
                .where(versions.c.bot_id == row.bot_id, versions.c.state == VersionState.ACTIVE)
                .where(versions.c.id != version_id)
                .with_for_update()
            ).all()
            for old in older:
                reason = f"replaced by version {row.number}"
                self._move(conn, old, VersionState.ACTIVE, VersionState.RETIRED, reason)

        self._write(body)
        return self.version(version_id)

    def reject(self, version_id: int, reason: str, stderr_tail: str = "") -> Version:
        """A pending version failed validation, with why and its stderr's last lines."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            self._move(conn, row, VersionState.PENDING, VersionState.REJECTED, reason)
            conn.execute(
                update(versions)
                .where(versions.c.id == version_id)
                .values(stderr_tail=stderr_tail[-8000:])
            )

        self._write(body)
        return self.version(version_id)

    def retire(self, version_id: int, reason: str) -> Version:
        """An active version leaves the ladder (its team asked, or an organiser)."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            self._move(conn, row, VersionState.ACTIVE, VersionState.RETIRED, reason)

        self._write(body)
        return self.version(version_id)

    def _move(
        self,
        conn: Connection,
        row: Row[Any],
        before: VersionState,
        after: VersionState,
        reason: str,
    ) -> None:
        if row.state != before:
            raise Conflict(
                f"version {row.id} is {row.state}, not {before}: it cannot become {after}"
            )
        now = self.clock()
        conn.execute(
            update(versions)
            .where(versions.c.id == row.id)
            .values(state=after, state_at=now, reason=reason[:2000])
        )
        if after in (VersionState.RETIRED, VersionState.REJECTED):
            self._cancel_matches_of(conn, row.id, f"version {row.id} {after}")

    def _cancel_matches_of(self, conn: Connection, version_id: int, why: str) -> None:
        """Take a version's scheduled matches off the queue (running ones finish)."""
        queued = conn.execute(
            select(matches_t.c.id, matches_t.c.group_id)
            .where(matches_t.c.state == MatchState.SCHEDULED)
            .where(
                matches_t.c.id.in_(
                    select(match_seats.c.match_id).where(match_seats.c.version_id == version_id)
                )
            )
            .order_by(matches_t.c.id)
            .with_for_update()
        ).all()
        now = self.clock()
        for match_id, _group in queued:
            conn.execute(
                update(matches_t)
                .where(matches_t.c.id == match_id)
                .values(state=MatchState.CANCELLED, finished_at=now, failure="retired")
                .values(failure_detail=why)
            )
        for group_id in sorted({g for _, g in queued}):
            self._group_done(conn, group_id, now)

    def files_removed(self, version_id: int) -> None:
        """A retired or rejected version's archive and folder were deleted (to keep a
        team's disk within its limit): its history stays."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            if row.state in (VersionState.PENDING, VersionState.ACTIVE):
                raise Conflict(f"version {version_id} is {row.state}: its files are in use")
            conn.execute(
                update(versions)
                .where(versions.c.id == version_id, versions.c.files_removed_at.is_(None))
                .values(files_removed_at=self.clock())
            )

        self._write(body)

    def version(self, version_id: int) -> Version:
        with db.reading(self.engine) as conn:
            return version_of(self._version_row(conn, version_id, full=True))

    def _version_row(
        self, conn: Connection, version_id: int, lock: bool = False, full: bool = False
    ) -> Row[Any]:
        if full:
            query = (
                select(versions, bots.c.name.label("bot"), teams.c.name.label("team"))
                .select_from(versions.join(bots).join(teams))
                .where(versions.c.id == version_id)
            )
        else:
            query = select(versions).where(versions.c.id == version_id)
        row = conn.execute(query.with_for_update() if lock else query).first()
        if row is None:
            raise NotFound(f"no version {version_id}")
        return row

    # -- the queue ----------------------------------------------------------------------

    def schedule(
        self,
        version_ids: Sequence[int],
        seatings: Sequence[Sequence[int]],
        purpose: GroupPurpose = GroupPurpose.RANKED,
    ) -> list[str]:
        """A deal group: one fresh seed, the four versions at each seating (indexes into
        ``version_ids`` for seats 0..3), one scheduled match per seating. Its match ids.
        A validation group may seat a house bot twice; a ranked one seats four versions."""
        purpose = GroupPurpose(purpose)
        if len(version_ids) != 4:
            raise LadderError("a table seats four versions")
        if purpose is GroupPurpose.RANKED and len(set(version_ids)) != 4:
            raise LadderError("a ranked table seats four different versions")
        if not 1 <= len(seatings) <= 24 or any(sorted(s) != [0, 1, 2, 3] for s in seatings):
            raise LadderError("seatings are 1 to 24 orders of the table's four places")

        def body(conn: Connection) -> list[str]:
            found = conn.execute(
                select(versions.c.id, versions.c.state).where(versions.c.id.in_(version_ids))
            ).all()
            states = dict(found)
            for v in version_ids:
                if v not in states:
                    raise NotFound(f"no version {v}")
                allowed = {VersionState.ACTIVE}
                if purpose is GroupPurpose.VALIDATION:
                    allowed.add(VersionState.PENDING)
                if states[v] not in allowed:
                    raise Conflict(f"version {v} is {states[v]}: not scheduled")
            now = self.clock()
            group_id = conn.execute(
                insert(deal_groups)
                .values(purpose=purpose, seed=secrets.token_hex(32), size=len(seatings))
                .values(created_at=now)
                .returning(deal_groups.c.id)
            ).scalar_one()
            tag = secrets.token_hex(3)  # ids never repeat, even after a restore
            ids = []
            for i, seating in enumerate(seatings):
                match_id = f"L{group_id:07d}-{tag}-{i}"
                conn.execute(
                    insert(matches_t).values(
                        id=match_id,
                        group_id=group_id,
                        seating=i,
                        state=MatchState.SCHEDULED,
                        priority=PRIORITY[purpose],
                        queued_at=now,
                        attempts=0,
                    )
                )
                conn.execute(
                    insert(match_seats),
                    [
                        {"match_id": match_id, "seat": seat, "version_id": version_ids[place]}
                        for seat, place in enumerate(seating)
                    ],
                )
                ids.append(match_id)
            return ids

        return self._write(body)

    def claim(self, worker: str, lease_s: float) -> Claim | None:
        """The first match of the queue, now running under a new lease of ``lease_s``
        seconds held by ``worker``; None when the queue is empty."""

        def body(conn: Connection) -> Claim | None:
            now = self.clock()
            while True:
                row = conn.execute(
                    select(matches_t)
                    .where(
                        or_(
                            matches_t.c.state == MatchState.SCHEDULED,
                            and_(
                                matches_t.c.state == MatchState.RUNNING,
                                matches_t.c.lease_expires_at < now,
                            ),
                        )
                    )
                    .order_by(matches_t.c.priority, matches_t.c.queued_at, matches_t.c.id)
                    .limit(1)
                    .with_for_update(skip_locked=True)
                ).first()
                if row is None:
                    return None
                if row.attempts < self.max_attempts:
                    break
                self._close(
                    conn,
                    row,
                    MatchState.FAILED,
                    now,
                    failure="abandoned",
                    failure_detail=f"its worker stopped without a result {row.attempts} times "
                    f"(last: {row.worker})",
                )
            token = secrets.token_hex(16)
            conn.execute(
                update(matches_t)
                .where(matches_t.c.id == row.id)
                .values(state=MatchState.RUNNING, worker=worker[:100], lease_token=token)
                .values(lease_expires_at=now + lease_s, attempts=row.attempts + 1, started_at=now)
            )
            group = conn.execute(select(deal_groups).where(deal_groups.c.id == row.group_id)).one()
            seated = conn.execute(
                select(match_seats.c.version_id)
                .where(match_seats.c.match_id == row.id)
                .order_by(match_seats.c.seat)
            ).scalars()
            return Claim(
                match_id=row.id,
                token=token,
                worker=worker,
                group_id=row.group_id,
                purpose=GroupPurpose(group.purpose),
                seating=row.seating,
                seed=group.seed,
                attempt=row.attempts + 1,
                expires_at=now + lease_s,
                version_ids=tuple(seated),
            )

        return self._write(body)

    def renew(self, match_id: str, token: str, lease_s: float) -> float:
        """Extend a lease by ``lease_s`` from now: the new expiry, or LeaseLost."""

        def body(conn: Connection) -> float:
            expires = self.clock() + lease_s
            done = conn.execute(
                update(matches_t)
                .where(matches_t.c.id == match_id, matches_t.c.lease_token == token)
                .where(matches_t.c.state == MatchState.RUNNING)
                .values(lease_expires_at=expires)
            )
            if done.rowcount != 1:
                raise LeaseLost(f"match {match_id} is no longer this worker's")
            return expires

        return self._write(body)

    def release(self, match_id: str, token: str) -> None:
        """Give a claimed match back to the queue unplayed (a worker shutting down)."""

        def body(conn: Connection) -> None:
            done = conn.execute(
                update(matches_t)
                .where(matches_t.c.id == match_id, matches_t.c.lease_token == token)
                .where(matches_t.c.state == MatchState.RUNNING)
                .values(state=MatchState.SCHEDULED, lease_token=None, lease_expires_at=None)
                .values(attempts=matches_t.c.attempts - 1)
            )
            if done.rowcount != 1:
                raise LeaseLost(f"match {match_id} is no longer this worker's")

        self._write(body)

    def record(self, match_id: str, token: str, outcome: MatchOutcome) -> Recorded:
        """Record a played match (finished, or failed with its cause). Idempotent: a
        match already recorded stays as it was (``Recorded.already``)."""
        outcome.check()

        def body(conn: Connection) -> Recorded:
            row = conn.execute(
                select(matches_t).where(matches_t.c.id == match_id).with_for_update()
            ).first()
            if row is None:
                raise NotFound(f"no match {match_id}")
            if row.state in DONE:
                return Recorded(match_id, MatchState(row.state), already=True, group_rated=False)
            if row.state != MatchState.RUNNING or row.lease_token != token:
                raise LeaseLost(f"match {match_id} is no longer this worker's")
            if outcome.seats:
                conn.execute(
                    insert(seat_results),
                    [{"match_id": match_id, **s.row()} for s in outcome.seats],
                )
            state = MatchState.FINISHED if outcome.finished else MatchState.FAILED
            rated = self._close(conn, row, state, self.clock(), **outcome.match_values())
            return Recorded(match_id, state, already=False, group_rated=rated)

        return self._write(body)

    def _close(
        self, conn: Connection, row: Row[Any], state: MatchState, now: float, **values: Any
    ) -> bool:
        """End a match in ``state``: its versions' counters (a ranked match that was
        played, to its end or not), its group rated if it was the last; True if so."""
        conn.execute(
            update(matches_t)
            .where(matches_t.c.id == row.id)
            .values(state=state, finished_at=now, lease_token=None, lease_expires_at=None)
            .values(**values)
        )
        purpose = conn.execute(
            select(deal_groups.c.purpose).where(deal_groups.c.id == row.group_id)
        ).scalar_one()
        if purpose == GroupPurpose.RANKED and state != MatchState.CANCELLED:
            counter = (
                versions.c.matches if state == MatchState.FINISHED else versions.c.failed_matches
            )
            seated = conn.execute(
                select(match_seats.c.version_id)
                .where(match_seats.c.match_id == row.id)
                .distinct()
                .order_by(match_seats.c.version_id)
            ).scalars()
            for version_id in list(seated):
                conn.execute(
                    update(versions)
                    .where(versions.c.id == version_id)
                    .values({counter: counter + 1, versions.c.last_played_at: now})
                )
        return self._group_done(conn, row.group_id, now)

    def _group_done(self, conn: Connection, group_id: int, now: float) -> bool:
        """Rate a ranked group whose every match is done, once; True when it did."""
        group = conn.execute(
            select(deal_groups).where(deal_groups.c.id == group_id).with_for_update()
        ).one()
        if group.closed_at is not None:
            return False
        open_matches = conn.execute(
            select(func.count())
            .select_from(matches_t)
            .where(matches_t.c.group_id == group_id, matches_t.c.state.not_in(DONE))
        ).scalar_one()
        if open_matches:
            return False
        conn.execute(update(deal_groups).where(deal_groups.c.id == group_id).values(closed_at=now))
        if group.purpose != GroupPurpose.RANKED:
            return False
        seats = conn.execute(
            select(match_seats.c.version_id, seat_results.c.place, seat_results.c.total)
            .select_from(
                seat_results.join(
                    match_seats,
                    and_(
                        match_seats.c.match_id == seat_results.c.match_id,
                        match_seats.c.seat == seat_results.c.seat,
                    ),
                ).join(matches_t, matches_t.c.id == seat_results.c.match_id)
            )
            .where(matches_t.c.group_id == group_id, matches_t.c.state == MatchState.FINISHED)
        ).all()
        players = sorted({s.version_id for s in seats})
        if not players:
            return False
        current = {
            r.id: Rating(r.mu, r.sigma)
            for r in conn.execute(
                select(versions.c.id, versions.c.mu, versions.c.sigma)
                .where(versions.c.id.in_(players))
                .order_by(versions.c.id)
                .with_for_update()
            )
        }
        rated = self.rater.rate([(s.version_id, s.place, s.total) for s in seats], current)
        for version_id, rating in sorted(rated.items()):
            conn.execute(
                update(versions)
                .where(versions.c.id == version_id)
                .values(mu=rating.mu, sigma=rating.sigma, rated_groups=versions.c.rated_groups + 1)
            )
            conn.execute(
                insert(ratings_t).values(
                    version_id=version_id,
                    group_id=group_id,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    at=now,
                )
            )
        return bool(rated)
