"""Matchmaking: which versions play next, chosen to make the ratings certain fastest.

Each pass (``Matchmaker.tick``, about once a second in ``referee ladder run``):

1. pending versions: decide those whose validation match is done
   (``referee.ladder.validation``), and queue a validation match (against the house's
   built-in bots, before any ranked match) for those that need one; a remote version
   only while it is online;
2. remote versions away longer than ``[lobby] wait_s``: their queued matches go;
3. the ranked queue is topped up to ``[matchmaking] queue`` matches, one deal group at
   a time, each chosen by ``pick_table``: first the version whose rating is the least
   certain for how much it has played (a wide interval, few matches), then the three
   versions nearest its rating, those that played less preferred among equals, each of
   a team not yet at the table: a ranked table holds at most one version of a team (the
   house's built-in bots aside), so no team holds two seats and decides a result
   between its own versions. Groups are duplicate deals over the four rotations of the
   seats, so the luck of the cards cancels; a group with a remote bot is one match (it
   could remember a deal).
4. now and then, the files of versions past a team's ``versions_kept`` are removed.

Everything it decides is in the database at once (the queue is visible: ``views.queue``);
it keeps no state a restart would lose but its random choices and the remote versions'
absences, which start over.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Mapping, Sequence

import structlog
from sqlalchemy import func, select

from referee.ladder import validation
from referee.ladder.archive import remove_tree
from referee.ladder.config import LadderConfig
from referee.ladder.errors import LadderError
from referee.ladder.first_score import FirstScores
from referee.ladder.schema import (
    GroupPurpose,
    MatchState,
    VersionState,
    bots,
    deal_groups,
    match_seats,
    matches,
    teams,
    versions,
)
from referee.ladder.store import LadderStore
from referee.ladder.types import Version
from referee.tournament.schedule import ROTATIONS

log = structlog.get_logger("referee.ladder.matchmaker")

MAX_GROUPS_PER_TICK = 16
PRUNE_EVERY_S = 60.0


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    """An active version as the matchmaker sees it."""

    version_id: int
    mu: float
    sigma: float
    load: int
    """Ranked matches it has played, failed or has in the queue."""
    remote: bool = False
    team: int | None = None
    """Its team's id; None for the house's built-in bots, which have no stake in a
    result and may share a table."""

    @property
    def side(self) -> tuple[str, int]:
        """Who gains from its seat: its team, or (the house's) the version alone."""
        return ("team", self.team) if self.team is not None else ("house", self.version_id)


def pick_table(candidates: Sequence[Candidate], rng: random.Random) -> list[Candidate] | None:
    """Four versions of four teams for the next deal group, the focus first; None when
    fewer than four teams (the house's versions each count as one) can play.

    The focus is the version with the most uncertainty per share of play: ``sigma`` times
    the mean load over its own load (so a version that has played less than the others
    comes first even with a narrower interval, and every version plays at a similar
    rate). Its opponents are the nearest in rating, measured in their joint uncertainty,
    plus a penalty for having played more than the least-played version, ties broken at
    random; a version whose team is already at the table is passed over.

    >>> cands = [Candidate(i, mu, 2.0, 10) for i, mu in enumerate([10, 20, 21, 22, 40, 41])]
    >>> cands[0] = Candidate(0, 10, 8.0, 10)  # the least certain
    >>> [c.version_id for c in pick_table(cands, random.Random(1))]
    [0, 1, 2, 3]
    >>> cands[2] = Candidate(2, 21, 2.0, 10, team=7)
    >>> cands[3] = Candidate(3, 22, 2.0, 10, team=7)  # team 7's second version
    >>> [c.version_id for c in pick_table(cands, random.Random(1))]
    [0, 1, 2, 4]
    """
    if len({c.side for c in candidates}) < 4:
        return None
    mean = sum(c.load for c in candidates) / len(candidates)
    least = min(c.load for c in candidates)

    def urgency(c: Candidate) -> tuple[float, float]:
        return (c.sigma * (1 + mean) / (1 + c.load), rng.random())

    focus = max(candidates, key=urgency)

    def distance(c: Candidate) -> tuple[float, float]:
        near = abs(c.mu - focus.mu) / (focus.sigma + c.sigma)
        return (near + (c.load - least) / (1 + mean), rng.random())

    table = [focus]
    seated = {focus.side}
    for c in sorted((c for c in candidates if c is not focus), key=distance):
        if c.side not in seated:
            table.append(c)
            seated.add(c.side)
            if len(table) == 4:
                break
    return table


class Matchmaker:
    """The queue's keeper (see the module's docstring)."""

    def __init__(
        self, config: LadderConfig, store: LadderStore, rng: random.Random | None = None
    ) -> None:
        self.config = config
        self.store = store
        self.rng = rng or random.Random()
        self.anchors = [store.builtin_version(name).id for name in config.anchors]
        self.first_scores = (
            FirstScores(config.folder, config.pool, config.versions_dir)
            if config.first_score
            else None
        )
        self.away_since: dict[int, float] = {}
        self._pruned_at = 0.0
        self._groups = 0

    def tick(self, online: Mapping[int, int] | None = None) -> int:
        """One pass; ``online``: the remote versions connected now (and their free
        seats), None when this process holds no lobby. How many groups it queued."""
        online = dict(online or {})
        queued = self._validations(online)
        self._offline(online)
        queued += self._top_up(online)
        if time.monotonic() - self._pruned_at > PRUNE_EVERY_S:
            self._pruned_at = time.monotonic()
            self.prune()
        return queued

    # -- validation -------------------------------------------------------------------

    def _validations(self, online: Mapping[int, int]) -> int:
        queued = 0
        ready = self._first_score_ready if self.first_scores is not None else None
        for version in validation.pending_versions(self.store):
            settled = validation.settle(self.store, self.config.folder, version, ready)
            if settled is not None:
                log.info("version validated", version=settled.label, state=settled.state)
                continue
            if version.runtime == "remote" and version.id not in online:
                continue
            if validation.needs_match(self.store, version):
                anchors = [self.anchors[i % len(self.anchors)] for i in range(3)]
                self.store.schedule(
                    [version.id, *anchors], [(0, 1, 2, 3)], purpose=GroupPurpose.VALIDATION
                )
                queued += 1
        return queued

    def _first_score_ready(self, version: Version) -> bool:
        assert self.first_scores is not None
        return self.first_scores.ready(version, time.monotonic())

    # -- remote versions away -----------------------------------------------------------

    def _offline(self, online: Mapping[int, int]) -> None:
        now = time.monotonic()
        remote = self._remote_active_or_pending()
        for version_id in remote:
            if version_id in online:
                self.away_since.pop(version_id, None)
                continue
            since = self.away_since.setdefault(version_id, now)
            if now - since >= self.config.lobby_wait_s:
                self.store.cancel_queued(version_id, "its remote bot is not in the lobby")
                self.away_since[version_id] = now  # again after another wait

    def _remote_active_or_pending(self) -> list[int]:
        with self.store.reading() as conn:
            return list(
                conn.execute(
                    select(versions.c.id).where(
                        versions.c.runtime == "remote",
                        versions.c.state.in_((VersionState.ACTIVE, VersionState.PENDING)),
                    )
                ).scalars()
            )

    # -- the ranked queue ----------------------------------------------------------------

    def queued_ranked(self) -> int:
        with self.store.reading() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(matches.join(deal_groups))
                    .where(
                        matches.c.state == MatchState.SCHEDULED,
                        deal_groups.c.purpose == GroupPurpose.RANKED,
                    )
                ).scalar_one()
            )

    def candidates(self, online: Mapping[int, int]) -> list[Candidate]:
        """The active versions that can play now, with their loads."""
        with self.store.reading() as conn:
            rows = conn.execute(
                select(
                    versions.c.id,
                    versions.c.mu,
                    versions.c.sigma,
                    versions.c.runtime,
                    versions.c.matches,
                    versions.c.failed_matches,
                    bots.c.team_id,
                    teams.c.house,
                )
                .select_from(versions.join(bots).join(teams))
                .where(versions.c.state == VersionState.ACTIVE)
            ).all()
            waiting: dict[int, int] = dict(
                conn.execute(
                    select(match_seats.c.version_id, func.count(match_seats.c.match_id.distinct()))
                    .select_from(match_seats.join(matches))
                    .where(matches.c.state.in_((MatchState.SCHEDULED, MatchState.RUNNING)))
                    .group_by(match_seats.c.version_id)
                ).all()
            )
        out = []
        for r in rows:
            remote = r.runtime == "remote"
            if remote and online.get(r.id, 0) <= 0:
                continue
            load = r.matches + r.failed_matches + int(waiting.get(r.id, 0))
            team = None if r.house else int(r.team_id)
            out.append(Candidate(r.id, r.mu, r.sigma, load, remote, team))
        return out

    def _top_up(self, online: Mapping[int, int]) -> int:
        wanted = self.config.queue - self.queued_ranked()
        queued = tries = 0
        while wanted > 0 and queued < MAX_GROUPS_PER_TICK and tries < 2 * MAX_GROUPS_PER_TICK:
            tries += 1
            table = pick_table(self.candidates(online), self.rng)
            if table is None:
                break
            ids = [c.version_id for c in table]
            remote = any(c.remote for c in table)
            size = self.config.seatings_per_group(remote)
            seatings = list(ROTATIONS) if size == 4 else [ROTATIONS[self._groups % 4]]
            self._groups += 1
            try:
                self.store.schedule(ids, seatings)
            except LadderError as exc:  # a version retired meanwhile: choose again
                log.info("group not scheduled", why=str(exc))
                continue
            wanted -= len(seatings)
            queued += 1
        return queued

    # -- disk -----------------------------------------------------------------------------

    def prune(self) -> int:
        """Remove the files of versions past each team's ``versions_kept``."""
        with self.store.reading() as conn:
            names = list(conn.execute(select(teams.c.name).where(~teams.c.house)).scalars())
        removed = 0
        keep = self.config.team_limits.versions_kept
        for name in names:
            for version in self.store.versions_to_prune(name, keep):
                sha = version.archive_sha256
                if sha is None:
                    continue
                if not self._shared(sha, version.id):  # the same archive, uploaded again
                    remove_tree(self.config.versions_dir / sha)
                    (self.config.archives_dir / sha).unlink(missing_ok=True)
                self.store.files_removed(version.id)
                removed += 1
        return removed

    def _shared(self, sha: str, version_id: int) -> bool:
        """Another version whose files are kept has the same archive."""
        with self.store.reading() as conn:
            return (
                conn.execute(
                    select(versions.c.id).where(
                        versions.c.archive_sha256 == sha,
                        versions.c.id != version_id,
                        versions.c.files_removed_at.is_(None),
                    )
                ).first()
                is not None
            )


__all__ = ["Candidate", "Matchmaker", "pick_table"]
