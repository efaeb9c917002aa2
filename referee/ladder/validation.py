"""Validation: a new version plays one match against the house's built-in bots before it
becomes active, and is rejected with the reason and its output's last lines if it does
not really play.

The verdict is a function of what the database holds (the validation match's recorded
seat results and the bot's output file), so it is reached the same way whoever looks:
the worker that recorded the match, at once, or the matchmaker's next pass after that
worker was killed between the two. It is final (``activate`` and ``reject`` move a
pending version once).

A version passes when its validation match finished and, in its seat, the bot did not
end before the match (a crash, a sandbox limit), connected, and played at least half of
its turns itself (not by default for a timeout or too many rejected actions). A match
that could not be played for the ladder's own reasons (its worker died, the referee
failed) is played again, up to ``MAX_TRIES`` times.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select

from referee.ladder.errors import Conflict
from referee.ladder.schema import (
    DONE,
    GroupPurpose,
    MatchState,
    VersionState,
    deal_groups,
    match_seats,
    matches,
    seat_results,
    versions,
)
from referee.ladder.store import LadderStore
from referee.ladder.types import Version
from referee.table.table import read_tail

MAX_TRIES = 3
"""Validation matches that failed for the ladder's reasons before a version is rejected."""
TAIL_LINES = 20


@dataclasses.dataclass(frozen=True, slots=True)
class Tries:
    """A pending version's validation matches so far."""

    open: int
    """Scheduled or running."""
    failed: int
    """Done without a result (the ladder's fault, or cancelled)."""
    last: tuple[str, str | None, str | None] | None
    """The latest done one: (match id, its state, its failure cause)."""


def tries(store: LadderStore, version_id: int) -> Tries:
    with store.reading() as conn:
        rows = conn.execute(
            select(matches.c.id, matches.c.state, matches.c.failure, matches.c.finished_at)
            .select_from(match_seats.join(matches).join(deal_groups))
            .where(
                match_seats.c.version_id == version_id,
                match_seats.c.seat == 0,
                deal_groups.c.purpose == GroupPurpose.VALIDATION,
            )
            .order_by(matches.c.queued_at, matches.c.id)
        ).all()
    done = [r for r in rows if r.state in DONE]
    return Tries(
        open=len(rows) - len(done),
        failed=sum(r.state != MatchState.FINISHED for r in done),
        last=(done[-1].id, done[-1].state, done[-1].failure) if done else None,
    )


def verdict(store: LadderStore, folder: Path, match_id: str) -> tuple[bool, str, str]:
    """(passed, the reason when not, the bot's output's last lines) of a finished
    validation match, whose seat 0 is the version validated."""
    with store.reading() as conn:
        seat = conn.execute(
            select(seat_results).where(
                seat_results.c.match_id == match_id, seat_results.c.seat == 0
            )
        ).one()
    tail = ""
    if seat.stderr_path:
        path = (folder / seat.stderr_path).resolve()
        if folder.resolve() in path.parents:
            tail = "\n".join(read_tail(path, TAIL_LINES, 8192))
    defaulted = seat.timeouts + seat.illegal_defaults
    if seat.crashed or seat.breach:
        why = f"was killed for breaking its {seat.breach}" if seat.breach else seat.crash
        return False, f"its bot {why or 'ended'} before the match ended", tail
    if seat.turns == 0 and seat.timeouts == 0 and seat.absent_turns:
        return False, "its bot never connected to the referee", tail
    if defaulted > seat.turns:
        what = f"{seat.timeouts} timed out" if seat.timeouts else ""
        if seat.illegal_defaults:
            what += (", " if what else "") + f"{seat.illegal_defaults} too many rejected actions"
        return (
            False,
            f"its bot did not play most of its turns: {defaulted} of {defaulted + seat.turns} "
            f"were played by default ({what})",
            tail,
        )
    return True, "", tail


def settle(
    store: LadderStore,
    folder: Path,
    version: Version,
    ready: Callable[[Version], bool] | None = None,
) -> Version | None:
    """Decide a pending version whose validation match is done: the version, activated
    or rejected; None when there is nothing to decide yet (no match done, or one still
    open, or a failed one to play again: ``needs_match``). ``ready``: whether a version
    that passed may be activated yet (its first score, ``referee.ladder.first_score``)."""
    if version.state is not VersionState.PENDING:
        return None
    t = tries(store, version.id)
    if t.open or t.last is None:
        return None
    match_id, state, failure = t.last
    try:
        if state == MatchState.FINISHED:
            passed, reason, tail = verdict(store, folder, match_id)
            if passed:
                if ready is not None and not ready(version):
                    return None  # its first score is being played
                return store.activate(version.id)
            return store.reject(version.id, reason, tail)
        if t.failed >= MAX_TRIES:
            return store.reject(
                version.id,
                f"its validation match could not be played {t.failed} times "
                f"(last: {failure or state})",
            )
    except Conflict:
        return None  # decided meanwhile by another process
    return None


def needs_match(store: LadderStore, version: Version) -> bool:
    """A pending version with no validation match open and none finished to decide on."""
    if version.state is not VersionState.PENDING:
        return False
    t = tries(store, version.id)
    if t.open:
        return False
    return t.last is None or (t.last[1] != MatchState.FINISHED and t.failed < MAX_TRIES)


def pending_versions(store: LadderStore) -> list[Version]:
    with store.reading() as conn:
        ids = conn.execute(
            select(versions.c.id)
            .where(versions.c.state == VersionState.PENDING)
            .order_by(versions.c.id)
        ).scalars()
        found = list(ids)
    return [store.version(v) for v in found]


__all__ = ["MAX_TRIES", "needs_match", "pending_versions", "settle", "tries", "verdict"]
