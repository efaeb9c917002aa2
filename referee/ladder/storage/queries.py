"""What the ladder shows, read from its store: the leaderboard, a version's history and
matches, the queue, the figures for metrics, and a consistency check.

Each function reads in one snapshot (``LadderStore.reading``), so a page never mixes a
match's result with the ratings from before it. These are the queries the web's pages
and ``/api/`` will serve (docs/ladder.md, "What is still to come"); the head to head per
pair of versions comes from ``seat_results.scores`` over shared deal groups, with the
tournament's ``referee.tournament.stats.paired``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Integer, Row, Select, func, select

from referee.ladder.storage.records import GroupPurpose, LadderMatchState, VersionState
from referee.ladder.storage.schema import (
    DONE,
    bots,
    deal_groups,
    match_seats,
    matches,
    ratings,
    seat_results,
    teams,
    versions,
)
from referee.ladder.storage.store import LadderStore


@dataclasses.dataclass(frozen=True, slots=True)
class LeaderRow:
    rank: int
    version_id: int
    team: str
    bot: str
    version: int
    mu: float
    sigma: float
    low: float
    high: float
    """The rating's 95% interval."""
    matches: int
    last_played_at: float | None


def leaderboard(store: LadderStore) -> list[LeaderRow]:
    """Active versions by ``mu - 3 sigma``, as the tournament's table orders bots."""
    from referee.tournament.stats import rating_interval  # scipy: only where it is shown

    with store.reading() as conn:
        rows = conn.execute(
            select(versions, bots.c.name.label("bot"), teams.c.name.label("team"))
            .select_from(versions.join(bots).join(teams))
            .where(versions.c.state == VersionState.ACTIVE)
            .order_by((versions.c.mu - 3 * versions.c.sigma).desc(), versions.c.id)
        ).all()
    board = []
    for rank, r in enumerate(rows, 1):
        low, high = rating_interval(r.mu, r.sigma)
        board.append(
            LeaderRow(
                rank=rank,
                version_id=r.id,
                team=r.team,
                bot=r.bot,
                version=r.number,
                mu=r.mu,
                sigma=r.sigma,
                low=low,
                high=high,
                matches=r.matches,
                last_played_at=r.last_played_at,
            )
        )
    return board


@dataclasses.dataclass(frozen=True, slots=True)
class RatingPoint:
    group_id: int
    mu: float
    sigma: float
    at: float


def rating_history(store: LadderStore, version_id: int) -> list[RatingPoint]:
    """A version's rating after each of its rated groups, oldest first (the chart)."""
    with store.reading() as conn:
        rows = conn.execute(
            select(ratings)
            .where(ratings.c.version_id == version_id)
            .order_by(ratings.c.at, ratings.c.group_id)
        ).all()
    return [RatingPoint(r.group_id, r.mu, r.sigma, r.at) for r in rows]


@dataclasses.dataclass(frozen=True, slots=True)
class QueueEntry:
    position: int
    match_id: str
    state: LadderMatchState
    purpose: GroupPurpose
    version_ids: tuple[int, ...]
    queued_at: float
    worker: str | None
    """Running: who plays it."""


def queue(store: LadderStore, limit: int = 100) -> list[QueueEntry]:
    """The matches to play, in the order they will be claimed, running ones first."""
    with store.reading() as conn:
        rows, seats = _with_seats(
            conn,
            select(matches, deal_groups.c.purpose)
            .select_from(matches.join(deal_groups))
            .where(matches.c.state.in_((LadderMatchState.SCHEDULED, LadderMatchState.RUNNING)))
            .order_by(
                (matches.c.state == LadderMatchState.SCHEDULED),
                matches.c.priority,
                matches.c.queued_at,
                matches.c.id,
            )
            .limit(limit),
        )
    return [
        QueueEntry(
            i,
            r.id,
            LadderMatchState(r.state),
            GroupPurpose(r.purpose),
            seats.get(r.id, ()),
            r.queued_at,
            r.worker if r.state == LadderMatchState.RUNNING else None,
        )
        for i, r in enumerate(rows, 1)
    ]


def _with_seats(
    conn: Connection, query: Select[Any]
) -> tuple[Sequence[Row[Any]], dict[str, tuple[int, ...]]]:
    """The match rows a query selects (their ``id``), and each match's versions by seat."""
    rows = conn.execute(query).all()
    found: dict[str, list[int]] = {}
    for match_id, version_id in conn.execute(
        select(match_seats.c.match_id, match_seats.c.version_id)
        .where(match_seats.c.match_id.in_([r.id for r in rows]))
        .order_by(match_seats.c.match_id, match_seats.c.seat)
    ):
        found.setdefault(match_id, []).append(version_id)
    return rows, {k: tuple(v) for k, v in found.items()}


@dataclasses.dataclass(frozen=True, slots=True)
class PlayedMatch:
    match_id: str
    state: LadderMatchState
    finished_at: float | None
    seat: int
    place: int | None
    total: int | None
    log_path: str | None
    failure: str | None
    crash: str
    version_ids: tuple[int, ...]


def recent_matches(store: LadderStore, version_id: int, limit: int = 50) -> list[PlayedMatch]:
    """A version's last matches, newest first: its seat, place, the log (the replay
    link), and why it failed when it did."""
    with store.reading() as conn:
        rows, seats = _with_seats(
            conn,
            select(
                matches.c.id,
                matches.c.state,
                matches.c.finished_at,
                matches.c.log_path,
                matches.c.failure,
                match_seats.c.seat,
                seat_results.c.place,
                seat_results.c.total,
                seat_results.c.crash,
            )
            .select_from(match_seats.join(matches).outerjoin(seat_results))
            .where(
                match_seats.c.version_id == version_id,
                matches.c.state.in_((LadderMatchState.FINISHED, LadderMatchState.FAILED)),
            )
            .order_by(matches.c.finished_at.desc(), matches.c.id)
            .limit(limit),
        )
    return [
        PlayedMatch(
            r.id,
            LadderMatchState(r.state),
            r.finished_at,
            r.seat,
            r.place,
            r.total,
            r.log_path,
            r.failure,
            r.crash or "",
            seats.get(r.id, ()),
        )
        for r in rows
    ]


@dataclasses.dataclass(frozen=True, slots=True)
class LadderFigures:
    """The figures metrics export (docs/ladder.md)."""

    queued: int
    running: int
    finished_last_minute: int
    failures: dict[str, int]
    """Failed and cancelled matches by cause, since the start."""
    versions: dict[str, int]
    """Versions by state."""
    finished: int = 0
    """Matches finished since the start."""
    queued_by_purpose: dict[str, int] = dataclasses.field(default_factory=dict)
    faults: dict[str, int] = dataclasses.field(default_factory=dict)
    """Bots' faults in recorded matches since the start: crashes, sandbox breaches,
    timeouts, disconnects, rejected actions."""


def figures(store: LadderStore) -> LadderFigures:
    now = store.clock()
    with store.reading() as conn:
        states: dict[str, int] = dict(
            conn.execute(select(matches.c.state, func.count()).group_by(matches.c.state)).all()
        )
        recent = conn.execute(
            select(func.count())
            .select_from(matches)
            .where(matches.c.state == LadderMatchState.FINISHED, matches.c.finished_at > now - 60)
        ).scalar_one()
        failures: dict[str, int] = dict(
            conn.execute(
                select(matches.c.failure, func.count())
                .where(matches.c.failure.is_not(None))
                .group_by(matches.c.failure)
            ).all()
        )
        by_state: dict[str, int] = dict(
            conn.execute(select(versions.c.state, func.count()).group_by(versions.c.state)).all()
        )
        by_purpose: dict[str, int] = dict(
            conn.execute(
                select(deal_groups.c.purpose, func.count())
                .select_from(matches.join(deal_groups))
                .where(matches.c.state == LadderMatchState.SCHEDULED)
                .group_by(deal_groups.c.purpose)
            ).all()
        )
        sums = conn.execute(
            select(
                func.coalesce(func.sum(func.cast(seat_results.c.crashed, Integer)), 0),
                func.count(seat_results.c.breach).filter(seat_results.c.breach != ""),
                func.coalesce(func.sum(seat_results.c.timeouts), 0),
                func.coalesce(func.sum(seat_results.c.disconnects), 0),
                func.coalesce(func.sum(seat_results.c.rejected), 0),
            )
        ).one()
    return LadderFigures(
        queued=states.get(LadderMatchState.SCHEDULED, 0),
        running=states.get(LadderMatchState.RUNNING, 0),
        finished_last_minute=recent,
        failures=failures,
        versions=by_state,
        finished=states.get(LadderMatchState.FINISHED, 0),
        queued_by_purpose=by_purpose,
        faults=dict(zip(FAULTS, (int(x) for x in sums), strict=True)),
    )


FAULTS = ("crash", "breach", "timeout", "disconnect", "rejected")


def check(store: LadderStore) -> list[str]:
    """What is inconsistent in the store (empty: nothing), after a crash or a restore:
    every recorded match has its seats' results once, no more; each version's counters
    are what its matches say; each closed ranked group rated each of its players once,
    and no open group has ratings."""
    problems: list[str] = []
    with store.reading() as conn:
        per_match: Counter[str] = Counter(
            dict(
                conn.execute(
                    select(seat_results.c.match_id, func.count()).group_by(seat_results.c.match_id)
                ).all()
            )
        )
        rows = conn.execute(select(matches.c.id, matches.c.state, matches.c.log_hash)).all()
        for match_id, state, log_hash in rows:
            if state == LadderMatchState.FINISHED and (per_match[match_id] != 4 or not log_hash):
                problems.append(f"{match_id}: finished with {per_match[match_id]} seat results")
            if (
                state in (LadderMatchState.SCHEDULED, LadderMatchState.RUNNING)
                and per_match[match_id]
            ):
                problems.append(f"{match_id}: {state} with seat results")
        counted: Counter[int] = Counter()
        failed: Counter[int] = Counter()
        for _match, state, version_id in conn.execute(
            select(matches.c.id, matches.c.state, match_seats.c.version_id)
            .select_from(match_seats.join(matches).join(deal_groups))
            .where(deal_groups.c.purpose == GroupPurpose.RANKED)
            .distinct()
        ):
            if state == LadderMatchState.FINISHED:
                counted[version_id] += 1
            elif state == LadderMatchState.FAILED:
                failed[version_id] += 1
        rated: Counter[int] = Counter(
            dict(
                conn.execute(
                    select(ratings.c.version_id, func.count()).group_by(ratings.c.version_id)
                ).all()
            )
        )
        for v in conn.execute(select(versions)).all():
            if (v.matches, v.failed_matches, v.rated_groups) != (
                counted[v.id],
                failed[v.id],
                rated[v.id],
            ):
                problems.append(
                    f"version {v.id}: counts {v.matches}/{v.failed_matches}/{v.rated_groups}, "
                    f"its matches say {counted[v.id]}/{failed[v.id]}/{rated[v.id]}"
                )
        for g in conn.execute(select(deal_groups)).all():
            states = [
                s
                for (s,) in conn.execute(select(matches.c.state).where(matches.c.group_id == g.id))
            ]
            done = all(s in DONE for s in states)
            n_ratings = conn.execute(
                select(func.count()).select_from(ratings).where(ratings.c.group_id == g.id)
            ).scalar_one()
            if len(states) != g.size:
                problems.append(f"group {g.id}: {len(states)} matches of {g.size}")
            if done != (g.closed_at is not None):
                problems.append(f"group {g.id}: closed_at {g.closed_at} but done is {done}")
            if n_ratings and (g.closed_at is None or g.purpose != GroupPurpose.RANKED):
                problems.append(f"group {g.id}: {n_ratings} ratings while open or unranked")
            if g.purpose == GroupPurpose.RANKED and g.closed_at is not None:
                players = conn.execute(
                    select(func.count(match_seats.c.version_id.distinct()))
                    .select_from(match_seats.join(matches))
                    .where(matches.c.group_id == g.id, matches.c.state == LadderMatchState.FINISHED)
                ).scalar_one()
                if players >= 2 and n_ratings != players:
                    problems.append(f"group {g.id}: {n_ratings} ratings for {players} versions")
    return problems
