"""The rows the store's transactions read and write: a team's, a version's, a bot made
on first use, a new version, and the checks of a team's upload limits. Each takes the
transaction's connection; ``LadderStore`` holds the API and the transactions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, func, insert, select

from referee.ladder.errors import NotFound, QuotaExceeded
from referee.ladder.storage.rating import Rating
from referee.ladder.storage.records import TeamLimits, VersionState
from referee.ladder.storage.schema import bots, teams, uploads, versions


def team_row(conn: Connection, name: str, lock: bool = False) -> Row[Any]:
    """A team's row (locked for the transaction with ``lock``), or NotFound."""
    query = select(teams).where(teams.c.name == name)
    row = conn.execute(query.with_for_update() if lock else query).first()
    if row is None:
        raise NotFound(f"no team {name!r}")
    return row


def version_row(
    conn: Connection, version_id: int, lock: bool = False, full: bool = False
) -> Row[Any]:
    """A version's row, with its bot's and team's names when ``full``, or NotFound."""
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


def ensure_bot(conn: Connection, team_id: int, name: str, now: float) -> int:
    """A team's bot's id, the bot made on first use."""
    query = select(bots.c.id).where(bots.c.team_id == team_id, bots.c.name == name)
    found = conn.execute(query.with_for_update()).scalar()
    if found is not None:
        return int(found)
    return int(
        conn.execute(
            insert(bots).values(team_id=team_id, name=name, created_at=now).returning(bots.c.id)
        ).scalar_one()
    )


def insert_version(
    conn: Connection,
    bot_id: int,
    now: float,
    state: VersionState,
    initial: Rating,
    **values: Any,
) -> int:
    """A new version of a bot, numbered after its last, at the rating model's start."""
    number = conn.execute(
        select(func.coalesce(func.max(versions.c.number), 0)).where(versions.c.bot_id == bot_id)
    ).scalar_one()
    return int(
        conn.execute(
            insert(versions)
            .values(bot_id=bot_id, number=number + 1, state=state, uploaded_at=now)
            .values(state_at=now, mu=initial.mu, sigma=initial.sigma, **values)
            .values(reason="", stderr_tail="", rated_groups=0, matches=0, failed_matches=0)
            .returning(versions.c.id)
        ).scalar_one()
    )


def team_disk(conn: Connection, team_id: int) -> int:
    """The bytes of a team's versions whose files are kept (archive and folder)."""
    return int(
        conn.execute(
            select(func.coalesce(func.sum(versions.c.archive_bytes + versions.c.unpacked_bytes), 0))
            .select_from(versions.join(bots))
            .where(bots.c.team_id == team_id, versions.c.files_removed_at.is_(None))
        ).scalar_one()
    )


def check_rate(
    conn: Connection, team_id: int, now: float, limits: TeamLimits, in_flight: int = 0
) -> None:
    """QuotaExceeded when the team's uploads of the last hour (and ``in_flight`` more)
    reach its limit, with how long to wait."""
    recent = conn.execute(
        select(uploads.c.at)
        .where(uploads.c.team_id == team_id, uploads.c.at > now - 3600)
        .order_by(uploads.c.at)
    ).scalars()
    times = list(recent)
    over = len(times) + in_flight - limits.uploads_per_hour
    if over >= 0:
        wait = times[over] + 3600 - now if over < len(times) else 60.0
        raise QuotaExceeded(
            f"{limits.uploads_per_hour} uploads in the last hour; wait {wait:.0f} s",
            max(1.0, wait),
        )


def check_disk(conn: Connection, team_id: int, more: int, limits: TeamLimits) -> None:
    """QuotaExceeded when ``more`` bytes would take the team past its disk."""
    used = team_disk(conn, team_id)
    if used + more > limits.disk_bytes:
        raise QuotaExceeded(
            f"the team's versions take {used} bytes of its {limits.disk_bytes}: "
            "retire some (their files go, their history stays)"
        )
