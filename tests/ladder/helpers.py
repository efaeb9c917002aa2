"""Building blocks for the ladder's tests: versions as an upload makes them, outcomes as a
worker records them."""

from __future__ import annotations

import hashlib
import json

from referee.ladder.storage.records import MatchOutcome, SeatRecord, TeamLimits, Version
from referee.ladder.storage.store import LadderStore

LIMITS = TeamLimits()


def upload_version(
    store: LadderStore,
    team: str,
    bot: str,
    *,
    archive_bytes: int = 1000,
    unpacked_bytes: int = 4000,
    limits: TeamLimits = LIMITS,
) -> Version:
    """A pending version, through the upload path (the team exists)."""
    upload = store.reserve_upload(team, archive_bytes, limits)
    sha = hashlib.sha256(f"{team}/{bot}/{upload}".encode()).hexdigest()
    return store.add_version(
        upload,
        bot,
        archive_sha256=sha,
        archive_format="tar.gz",
        archive_bytes=archive_bytes,
        unpacked_bytes=unpacked_bytes,
        files=3,
        manifest_json=json.dumps({"runtime": "python", "command": ["bot.py"]}),
        runtime="python",
        limits=limits,
    )


def active_version(store: LadderStore, team: str, bot: str) -> Version:
    """An active version (validated, as far as the store knows; the team exists)."""
    return store.activate(upload_version(store, team, bot).id)


def finished(places: tuple[int, int, int, int] = (1, 2, 3, 4), match_id: str = "m") -> MatchOutcome:
    """A finished match with those places in seats 0..3 (totals follow the places)."""
    return MatchOutcome(
        finished=True,
        seats=tuple(
            SeatRecord(
                seat=s,
                place=p,
                total=10 * (p - 1),
                hands_won=int(p == 1),
                scores=(10 * (p - 1),),
                stderr_path=f"stderr/{match_id}/seat-{s}.txt",
            )
            for s, p in enumerate(places)
        ),
        log_path=f"logs/{match_id}.jsonl",
        log_hash=hashlib.sha256(match_id.encode()).hexdigest(),
        hands=1,
        duration_s=1.5,
    )


def failed(cause: str = "start", detail: str = "seat 2 could not be started") -> MatchOutcome:
    return MatchOutcome(finished=False, failure=cause, failure_detail=detail)
