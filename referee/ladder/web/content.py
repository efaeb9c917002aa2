"""What the ladder's web shows, as plain JSON values: the leaderboard, a bot with its
versions, rating history, head to head and matches, the queue, a match, the ladder's
status. The pages (``referee.ladder.web.pages``) draw these, and ``/api/`` serves them as
they are, so a script sees exactly what a person sees.

Only public information is here: ratings, results, failures' causes and reasons, the
queue. A bot's output (stderr) is its team's (``team_json``, behind its key).

Head to head: for a version and each other version it shared complete ranked deal groups
with, one value per group, the difference of their scores per hand on the same deals
(higher is better: fewer penalty points, or more chips), summarised by the tournament's
``referee.tournament.stats.paired`` (mean, 95% confidence interval, likelihood of
superiority), as the tournament's head-to-head matrix is.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Integer, and_, func, select

from referee.ladder.errors import NotFound
from referee.ladder.play.first_score import first_score
from referee.ladder.storage import queries
from referee.ladder.storage.records import GroupPurpose, LadderMatchState, Version, VersionState
from referee.ladder.storage.schema import (
    bots,
    deal_groups,
    match_seats,
    matches,
    seat_results,
    teams,
    versions,
)
from referee.ladder.storage.store import LadderStore
from referee.rules import Scoring

RECENT = 30
"""Matches listed on a bot's page (and in its JSON)."""


def _finite(x: float | None, digits: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)


def labels(conn: Connection) -> dict[int, str]:
    """Every version's ``team/bot#number``."""
    rows = conn.execute(
        select(versions.c.id, teams.c.name, bots.c.name, versions.c.number).select_from(
            versions.join(bots).join(teams)
        )
    ).all()
    return {r[0]: f"{r[1]}/{r[2]}#{r[3]}" for r in rows}


def version_json(v: Version) -> dict[str, Any]:
    from referee.tournament.stats import rating_interval

    low, high = rating_interval(v.rating.mu, v.rating.sigma)
    return {
        "id": v.id,
        "label": v.label,
        "team": v.team,
        "bot": v.bot,
        "number": v.number,
        "state": str(v.state),
        "runtime": v.runtime,
        "description": v.manifest.description,
        "reason": v.reason,
        "mu": round(v.rating.mu, 3),
        "sigma": round(v.rating.sigma, 3),
        "low": low,
        "high": high,
        "rated_groups": v.rated_groups,
        "matches": v.matches,
        "failed_matches": v.failed_matches,
        "uploaded_at": v.uploaded_at,
        "state_at": v.state_at,
        "last_played_at": v.last_played_at,
        "archive_sha256": v.archive_sha256,
        "files_kept": v.files_removed_at is None,
    }


def leaderboard_json(store: LadderStore) -> list[dict[str, Any]]:
    """Active versions by ``mu - 3 sigma``, with their results in ranked matches; ``~``
    (``overlaps_above``) where the interval overlaps the one above."""
    from referee.tournament.stats import overlaps

    board = queries.leaderboard(store)
    with store.reading() as conn:
        played = {
            r[0]: r
            for r in conn.execute(
                select(
                    match_seats.c.version_id,
                    func.count(),
                    func.avg(seat_results.c.place),
                    func.sum(func.cast(seat_results.c.place == 1, Integer)),
                )
                .select_from(_ranked_results())
                .where(matches.c.state == LadderMatchState.FINISHED)
                .group_by(match_seats.c.version_id)
            ).all()
        }
    marks = overlaps([(r.low, r.high) for r in board])
    out = []
    for row, overlap in zip(board, marks, strict=True):
        stats = played.get(row.version_id)
        out.append(
            {
                "rank": row.rank,
                "version_id": row.version_id,
                "label": f"{row.team}/{row.bot}#{row.version}",
                "team": row.team,
                "bot": row.bot,
                "version": row.version,
                "house": row.team == "house",
                "mu": round(row.mu, 3),
                "sigma": round(row.sigma, 3),
                "ordinal": round(row.mu - 3 * row.sigma, 3),
                "low": row.low,
                "high": row.high,
                "overlaps_above": overlap,
                "matches": row.matches,
                "wins": int(stats[3] or 0) if stats else 0,
                "avg_place": _finite(float(stats[2])) if stats and stats[2] is not None else None,
                "last_played_at": row.last_played_at,
            }
        )
    return out


def _ranked_results() -> Any:
    return (
        seat_results.join(match_seats)
        .join(matches, matches.c.id == seat_results.c.match_id)
        .join(
            deal_groups,
            and_(
                deal_groups.c.id == matches.c.group_id,
                deal_groups.c.purpose == GroupPurpose.RANKED,
            ),
        )
    )


def head_to_head_json(
    store: LadderStore, version_id: int, scoring: Scoring = Scoring.PENALTY
) -> list[dict[str, Any]]:
    """The version against each other version, on the same deals (module docstring)."""
    from referee.tournament.ratings import PairRow
    from referee.tournament.stats import paired

    sign = -1 if scoring is Scoring.PENALTY else 1
    with store.reading() as conn:
        groups = select(matches.c.group_id).where(
            matches.c.id.in_(
                select(match_seats.c.match_id).where(match_seats.c.version_id == version_id)
            )
        )
        rows = conn.execute(
            select(
                matches.c.group_id,
                matches.c.state,
                match_seats.c.version_id,
                seat_results.c.scores,
            )
            .select_from(
                match_seats.join(matches)
                .outerjoin(seat_results)
                .join(deal_groups, deal_groups.c.id == matches.c.group_id)
            )
            .where(
                matches.c.group_id.in_(groups),
                deal_groups.c.purpose == GroupPurpose.RANKED,
                deal_groups.c.closed_at.is_not(None),
            )
            .order_by(matches.c.group_id)
        ).all()
        names = labels(conn)
    points: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    broken: set[int] = set()
    for group_id, state, vid, scores in rows:
        if state != LadderMatchState.FINISHED or scores is None:
            broken.add(group_id)
            continue
        values = json.loads(scores)
        acc = points[group_id][vid]
        acc[0] += sum(values)
        acc[1] += len(values)
    diffs: dict[int, list[float]] = defaultdict(list)
    for group_id, per_version in points.items():
        mine = per_version.get(version_id)
        if group_id in broken or mine is None or not mine[1]:
            continue
        me = sign * mine[0] / mine[1]
        for other, (total, hands) in per_version.items():
            if other != version_id and hands:
                diffs[other].append(me - sign * total / hands)
    out = []
    for other, values in sorted(diffs.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        pair = PairRow.of(names.get(version_id, ""), names.get(other, ""), paired(values))
        row = pair.to_json()
        row["version_id"] = other
        out.append(row)
    return out


def matches_json(store: LadderStore, version_ids: list[int]) -> list[dict[str, Any]]:
    """The versions' latest matches (ranked and validation), newest first."""
    found: list[queries.PlayedMatch] = []
    for vid in version_ids:
        found += queries.recent_matches(store, vid, RECENT)
    found.sort(key=lambda m: (-(m.finished_at or 0), m.match_id))
    with store.reading() as conn:
        names = labels(conn)
        purposes = dict(
            conn.execute(
                select(matches.c.id, deal_groups.c.purpose)
                .select_from(matches.join(deal_groups))
                .where(matches.c.id.in_([m.match_id for m in found[:RECENT]]))
            ).all()
        )
    return [
        {
            "match_id": m.match_id,
            "state": str(m.state),
            "purpose": str(purposes.get(m.match_id, "")),
            "finished_at": m.finished_at,
            "seat": m.seat,
            "place": m.place,
            "total": m.total,
            "failure": m.failure,
            "crash": m.crash,
            "replay": f"/matches/{m.match_id}/replay" if m.log_path else None,
            "seats": [{"version_id": v, "label": names.get(v, "")} for v in m.version_ids],
        }
        for m in found[:RECENT]
    ]


def bot_json(store: LadderStore, team: str, bot: str, folder: Path | None = None) -> dict[str, Any]:
    """A bot's page: its versions (newest first) with their rating histories and, under
    a benchmark pool, their first scores (the ladder's ``folder``), head to head of its
    current version, its recent matches and its failures."""
    with store.reading() as conn:
        ids = list(
            conn.execute(
                select(versions.c.id)
                .select_from(versions.join(bots).join(teams))
                .where(teams.c.name == team, bots.c.name == bot)
                .order_by(versions.c.number.desc())
            ).scalars()
        )
    if not ids:
        raise NotFound(f"no bot {team}/{bot}")
    all_versions = [store.version(v) for v in ids]
    current = next((v for v in all_versions if v.state is VersionState.ACTIVE), all_versions[0])
    history = {
        v.id: [
            {"group_id": p.group_id, "mu": round(p.mu, 3), "sigma": round(p.sigma, 3), "at": p.at}
            for p in queries.rating_history(store, v.id)
        ]
        for v in all_versions
    }
    recent = matches_json(store, ids)
    failures = [m for m in recent if m["state"] == "failed" or m["crash"]]
    return {
        "team": team,
        "bot": bot,
        "current": version_json(current),
        "versions": [
            {
                **version_json(v),
                "history": history[v.id],
                "first_score": first_score(folder, v.id) if folder is not None else None,
            }
            for v in all_versions
        ],
        "head_to_head": head_to_head_json(store, current.id),
        "matches": recent,
        "failures": failures,
        "rejected": [
            {"label": v.label, "reason": v.reason, "at": v.state_at}
            for v in all_versions
            if v.state is VersionState.REJECTED
        ],
    }


def queue_json(store: LadderStore, limit: int = 100) -> dict[str, Any]:
    """The running matches, then the queued ones in the order they will be played."""
    entries = queries.queue(store, limit)
    with store.reading() as conn:
        names = labels(conn)
        live = dict(
            conn.execute(
                select(matches.c.id, matches.c.live_id).where(
                    matches.c.state == LadderMatchState.RUNNING, matches.c.live_id.is_not(None)
                )
            ).all()
        )
        counts: dict[str, int] = dict(
            conn.execute(
                select(matches.c.state, func.count())
                .where(matches.c.state.in_((LadderMatchState.SCHEDULED, LadderMatchState.RUNNING)))
                .group_by(matches.c.state)
            ).all()
        )
    rows = [
        {
            "position": e.position,
            "match_id": e.match_id,
            "state": str(e.state),
            "purpose": str(e.purpose),
            "queued_at": e.queued_at,
            "live": f"/matches/{e.match_id}" if e.match_id in live else None,
            "seats": [{"version_id": v, "label": names.get(v, "")} for v in e.version_ids],
        }
        for e in entries
    ]
    return {
        "queued": int(counts.get(LadderMatchState.SCHEDULED, 0)),
        "running": int(counts.get(LadderMatchState.RUNNING, 0)),
        "matches": rows,
    }


def match_json(store: LadderStore, match_id: str) -> dict[str, Any]:
    with store.reading() as conn:
        row = conn.execute(
            select(matches, deal_groups.c.purpose)
            .select_from(matches.join(deal_groups))
            .where(matches.c.id == match_id)
        ).first()
        if row is None:
            raise NotFound(f"no match {match_id}")
        seats = conn.execute(
            select(match_seats.c.seat, match_seats.c.version_id, seat_results)
            .select_from(match_seats.outerjoin(seat_results))
            .where(match_seats.c.match_id == match_id)
            .order_by(match_seats.c.seat)
        ).all()
        names = labels(conn)
    return {
        "match_id": row.id,
        "group_id": row.group_id,
        "seating": row.seating,
        "purpose": str(row.purpose),
        "state": str(row.state),
        "queued_at": row.queued_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "hands": row.hands,
        "duration_s": row.duration_s,
        "failure": row.failure,
        "failure_detail": row.failure_detail,
        "log_hash": row.log_hash,
        "log_signed_by": row.log_signed_by,
        "replay": f"/matches/{row.id}/replay" if row.log_path else None,
        "live": f"/matches/{row.id}"
        if row.state == LadderMatchState.RUNNING and row.live_id
        else None,
        "seats": [
            {
                "seat": s.seat,
                "version_id": s.version_id,
                "label": names.get(s.version_id, ""),
                "place": s.place,
                "total": s.total,
                "timeouts": s.timeouts,
                "crashed": s.crashed,
                "crash": s.crash,
                "breach": s.breach,
            }
            for s in seats
        ],
    }


def status_json(store: LadderStore) -> dict[str, Any]:
    f = queries.figures(store)
    with store.reading() as conn:
        names = labels(conn)
        pending = list(
            conn.execute(
                select(versions.c.id).where(versions.c.state == VersionState.PENDING)
            ).scalars()
        )
        rejected = conn.execute(
            select(versions.c.id, versions.c.reason)
            .where(versions.c.state == VersionState.REJECTED)
            .order_by(versions.c.state_at.desc())
            .limit(50)
        ).all()
    return {
        "queue": {
            "queued": f.queued,
            "running": f.running,
            "validation": f.queued_by_purpose.get(GroupPurpose.VALIDATION, 0),
        },
        "matches_per_minute": f.finished_last_minute,
        "finished": f.finished,
        "failures": f.failures,
        "faults": f.faults,
        "versions": f.versions,
        "leaderboard": leaderboard_json(store),
        "pending": [{"id": v, "label": names.get(v, "")} for v in pending],
        "rejected": [
            {"id": r.id, "label": names.get(r.id, ""), "reason": r.reason} for r in rejected
        ],
        "problems": queries.check(store),
    }


def team_json(store: LadderStore, team: str) -> dict[str, Any]:
    """A team's own page: its bots and versions, with what only it may see (the output
    of its rejected versions' validation, its bots' output files in recent matches)."""
    with store.reading() as conn:
        rows = conn.execute(
            select(versions.c.id, bots.c.name)
            .select_from(versions.join(bots).join(teams))
            .where(teams.c.name == team)
            .order_by(bots.c.name, versions.c.number.desc())
        ).all()
    out_bots: dict[str, list[dict[str, Any]]] = {}
    ids = []
    for vid, bot in rows:
        v = store.version(vid)
        ids.append(vid)
        out_bots.setdefault(bot, []).append({**version_json(v), "stderr_tail": v.stderr_tail})
    own = set(ids)
    recent = matches_json(store, ids)
    for m in recent:
        m["stderr"] = [
            f"/team/stderr/{m['match_id']}/{s}"
            for s, seat in enumerate(m["seats"])
            if seat["version_id"] in own
        ]
    return {"team": team, "bots": out_bots, "matches": recent}


__all__ = [
    "RECENT",
    "bot_json",
    "head_to_head_json",
    "labels",
    "leaderboard_json",
    "match_json",
    "matches_json",
    "queue_json",
    "status_json",
    "team_json",
    "version_json",
]
