"""The queue of matches (``MatchQueue``): what the matchmaker and the workers do.

What a worker does, and why a SIGKILL at any moment loses no recorded result and
counts no match twice:

1. ``claim(worker, lease_s)`` takes the first match of the queue (scheduled, or running
   under a lease that ran out) and marks it running under a fresh lease token, in one
   transaction. Two workers never get the same match: SQLite serialises writers
   (``BEGIN IMMEDIATE``), PostgreSQL locks the row (``FOR UPDATE SKIP LOCKED``, so
   the other worker takes the next match instead of waiting).
2. While it plays, the worker ``renew``\\ s its lease. A worker that was killed stops
   renewing; its lease runs out and the next ``claim`` plays the match again (each
   attempt writes its log apart; only the recorded attempt's is indexed). A match claimed
   ``max_attempts`` times without a result is given up as failed (``abandoned``):
   a match that kills its worker every time does not stall the queue.
3. ``record(match_id, token, outcome)`` writes the result, the seats' results, the
   versions' counters and, when it is the last match of its deal group, the group's
   rating, all in one transaction: either all of it is in the database or none of it is.
   It is idempotent: the same attempt recording again (a worker retrying after a commit
   whose answer it lost) changes nothing and says so (``Recorded.already``). Only the
   holder of the current lease records; a worker whose lease was taken over gets
   ``LeaseLost`` and drops its result, before the match is recorded by its new holder or
   after (the match keeps the token of the attempt that recorded it).

Times come from ``clock`` (seconds since the epoch), so tests move time instead of
sleeping; on several machines the clocks must agree to well within a lease (NTP).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Row,
    and_,
    func,
    insert,
    or_,
    select,
    update,
)

from referee.ladder.errors import Conflict, LadderError, LeaseLost, NotFound
from referee.ladder.storage import db
from referee.ladder.storage.rating import Rater, Rating
from referee.ladder.storage.records import (
    Claim,
    GroupPurpose,
    LadderMatchState,
    MatchOutcome,
    Recorded,
    VersionState,
)
from referee.ladder.storage.schema import (
    DONE,
    bots,
    deal_groups,
    match_seats,
    seat_results,
    teams,
    versions,
)
from referee.ladder.storage.schema import matches as matches_t
from referee.ladder.storage.schema import ratings as ratings_t

T = TypeVar("T")
PRIORITY = {GroupPurpose.VALIDATION: 0, GroupPurpose.RANKED: 10}
"""Validation first: an entrant waits for their new version, nobody waits for a ranked match."""


class MatchQueue:
    """The queue of matches over the ladder's database (``LadderStore.queue``, on the
    same engine, clock and rater as the store)."""

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

    def _write(self, body: Callable[[Connection], T]) -> T:
        return db.write(self.engine, body)

    def cancel_matches_of(
        self, conn: Connection, version_id: int, why: str, cause: str = "retired"
    ) -> None:
        """Take a version's scheduled matches off the queue (running ones finish), in the
        caller's transaction (the store's, when a version is retired or rejected)."""
        queued = conn.execute(
            select(matches_t.c.id, matches_t.c.group_id)
            .where(matches_t.c.state == LadderMatchState.SCHEDULED)
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
                .values(state=LadderMatchState.CANCELLED, finished_at=now, failure=cause)
                .values(failure_detail=why)
            )
        for group_id in sorted({g for _, g in queued}):
            self._group_done(conn, group_id, now)

    # -- the queue ----------------------------------------------------------------------

    def schedule(
        self,
        version_ids: Sequence[int],
        seatings: Sequence[Sequence[int]],
        purpose: GroupPurpose = GroupPurpose.RANKED,
    ) -> list[str]:
        """A deal group: one fresh seed, the four versions at each seating (indexes into
        ``version_ids`` for seats 0..3), one scheduled match per seating. Its match ids.
        A validation group may seat a house bot twice; a ranked one seats four versions,
        at most one of each team (the house's aside): Conflict otherwise."""
        purpose = GroupPurpose(purpose)
        if len(version_ids) != 4:
            raise LadderError("a table seats four versions")
        if purpose is GroupPurpose.RANKED and len(set(version_ids)) != 4:
            raise LadderError("a ranked table seats four different versions")
        if not 1 <= len(seatings) <= 24 or any(sorted(s) != [0, 1, 2, 3] for s in seatings):
            raise LadderError("seatings are 1 to 24 orders of the table's four places")

        def body(conn: Connection) -> list[str]:
            found = conn.execute(
                select(versions.c.id, versions.c.state, teams.c.name, teams.c.house)
                .select_from(versions.join(bots).join(teams))
                .where(versions.c.id.in_(version_ids))
            ).all()
            states = {r.id: r.state for r in found}
            if purpose is GroupPurpose.RANKED:
                sides = [r.name for r in found if not r.house]
                twice = sorted({t for t in sides if sides.count(t) > 1})
                if twice:
                    raise Conflict(
                        f"a ranked table holds at most one version of a team; {twice[0]} "
                        "would have two"
                    )
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
                        state=LadderMatchState.SCHEDULED,
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

    def claim(
        self, worker: str, lease_s: float, *, remote_online: Collection[int] | None = None
    ) -> Claim | None:
        """The first match of the queue, now running under a new lease of ``lease_s``
        seconds held by ``worker``; None when the queue is empty.

        A match with a remote version (``runtime = "remote"``, a bot in a lobby) is
        played where that lobby is: ``remote_online`` None claims only matches without
        one (a worker); a set of version ids claims only matches with one, all of whose
        remote versions are in the set (those online now)."""
        remote_seat = (
            select(match_seats.c.match_id)
            .select_from(match_seats.join(versions))
            .where(versions.c.runtime == "remote")
        )
        kind: ColumnElement[bool]
        if remote_online is None:
            kind = matches_t.c.id.not_in(remote_seat)
        else:
            kind = and_(
                matches_t.c.id.in_(remote_seat),
                matches_t.c.id.not_in(remote_seat.where(versions.c.id.not_in(remote_online))),
            )

        def body(conn: Connection) -> Claim | None:
            now = self.clock()
            while True:
                row = conn.execute(
                    select(matches_t)
                    .where(
                        or_(
                            matches_t.c.state == LadderMatchState.SCHEDULED,
                            and_(
                                matches_t.c.state == LadderMatchState.RUNNING,
                                matches_t.c.lease_expires_at < now,
                            ),
                        ),
                        kind,
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
                    LadderMatchState.FAILED,
                    now,
                    failure="abandoned",
                    failure_detail=f"its worker stopped without a result {row.attempts} times "
                    f"(last: {row.worker})",
                )
            token = secrets.token_hex(16)
            conn.execute(
                update(matches_t)
                .where(matches_t.c.id == row.id)
                .values(state=LadderMatchState.RUNNING, worker=worker[:100], lease_token=token)
                .values(lease_expires_at=now + lease_s, attempts=row.attempts + 1, started_at=now)
                .values(live_address=None, live_id=None)
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
                .where(matches_t.c.state == LadderMatchState.RUNNING)
                .values(lease_expires_at=expires)
            )
            if done.rowcount != 1:
                raise LeaseLost(f"match {match_id} is no longer this worker's")
            return expires

        return self._write(body)

    def playing(self, match_id: str, token: str, address: str, live_id: str) -> None:
        """Where the match can be watched while it runs: the public address of the
        referee playing it, and that referee's id for it (the web relays its public
        events). LeaseLost when the match is no longer this worker's."""

        def body(conn: Connection) -> None:
            done = conn.execute(
                update(matches_t)
                .where(matches_t.c.id == match_id, matches_t.c.lease_token == token)
                .where(matches_t.c.state == LadderMatchState.RUNNING)
                .values(live_address=address[:100], live_id=live_id[:40])
            )
            if done.rowcount != 1:
                raise LeaseLost(f"match {match_id} is no longer this worker's")

        self._write(body)

    def cancel_queued(self, version_id: int, why: str) -> None:
        """Take a version's scheduled matches off the queue (a remote bot gone offline);
        its running ones finish. A group whose other matches are done is closed (and
        rated on what it played)."""
        self._write(lambda conn: self.cancel_matches_of(conn, version_id, why, "offline"))

    def release(self, match_id: str, token: str) -> None:
        """Give a claimed match back to the queue unplayed (a worker shutting down)."""

        def body(conn: Connection) -> None:
            done = conn.execute(
                update(matches_t)
                .where(matches_t.c.id == match_id, matches_t.c.lease_token == token)
                .where(matches_t.c.state == LadderMatchState.RUNNING)
                .values(state=LadderMatchState.SCHEDULED, lease_token=None, lease_expires_at=None)
                .values(attempts=matches_t.c.attempts - 1, live_address=None, live_id=None)
            )
            if done.rowcount != 1:
                raise LeaseLost(f"match {match_id} is no longer this worker's")

        self._write(body)

    def record(self, match_id: str, token: str, outcome: MatchOutcome) -> Recorded:
        """Record a played match (finished, or failed with its cause). Idempotent: this
        attempt's result, recorded already, stays as it was (``Recorded.already``);
        LeaseLost when the match is another attempt's, recorded or not, or cancelled."""
        outcome.check()

        def body(conn: Connection) -> Recorded:
            row = conn.execute(
                select(matches_t).where(matches_t.c.id == match_id).with_for_update()
            ).first()
            if row is None:
                raise NotFound(f"no match {match_id}")
            if row.state in DONE and row.lease_token == token:  # this attempt's, again
                return Recorded(
                    match_id, LadderMatchState(row.state), already=True, group_rated=False
                )
            if row.state != LadderMatchState.RUNNING or row.lease_token != token:
                raise LeaseLost(f"match {match_id} is no longer this worker's")
            if outcome.seats:
                conn.execute(
                    insert(seat_results),
                    [{"match_id": match_id, **s.row()} for s in outcome.seats],
                )
            state = LadderMatchState.FINISHED if outcome.finished else LadderMatchState.FAILED
            now = self.clock()
            rated = self._close(conn, row, state, now, token=token, **outcome.match_values())
            return Recorded(match_id, state, already=False, group_rated=rated)

        return self._write(body)

    def _close(
        self,
        conn: Connection,
        row: Row[Any],
        state: LadderMatchState,
        now: float,
        token: str | None = None,
        **values: Any,
    ) -> bool:
        """End a match in ``state``: its versions' counters (a ranked match that was
        played, to its end or not), its group rated if it was the last; True if so. A
        recorded match keeps the ``token`` of the attempt that recorded it, so that only
        that attempt's worker hears ``already`` (renewals need a running match)."""
        conn.execute(
            update(matches_t)
            .where(matches_t.c.id == row.id)
            .values(state=state, finished_at=now, lease_token=token, lease_expires_at=None)
            .values(live_address=None, live_id=None, **values)
        )
        purpose = conn.execute(
            select(deal_groups.c.purpose).where(deal_groups.c.id == row.group_id)
        ).scalar_one()
        if purpose == GroupPurpose.RANKED and state != LadderMatchState.CANCELLED:
            counter = (
                versions.c.matches
                if state == LadderMatchState.FINISHED
                else versions.c.failed_matches
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
                seat_results.join(match_seats).join(
                    matches_t, matches_t.c.id == seat_results.c.match_id
                )
            )
            .where(matches_t.c.group_id == group_id, matches_t.c.state == LadderMatchState.FINISHED)
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
