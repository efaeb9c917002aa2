"""Matchmaking on each engine: a pending version is validated against the house's bots
before anything ranked; ranked groups are the four rotations of four active versions, the
least certain first; every active version plays at a similar rate; the queue stays at its
length; a retired version leaves the queue and keeps its history."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from referee.ladder import views
from referee.ladder.config import parse_ladder_config
from referee.ladder.matchmaker import Candidate, Matchmaker, pick_table
from referee.ladder.schema import GroupPurpose, VersionState

from .helpers import active_version, finished, upload_version


def config(tmp_path: Path, queue: int = 8):  # type: ignore[no-untyped-def]
    data = {"ladder": {"folder": "data"}, "matchmaking": {"queue": queue}}
    return parse_ladder_config(data, tmp_path / "ladder.toml")


def play_queue(store, maker: Matchmaker, rounds: int, rng: random.Random) -> Counter[int]:  # type: ignore[no-untyped-def]
    """Claim and record what the queue holds, ``rounds`` times; seats played per version."""
    seats: Counter[int] = Counter()
    for _ in range(rounds):
        maker.tick()
        while (claim := store.claim("w", 30)) is not None:
            places = [1, 2, 3, 4]
            rng.shuffle(places)
            store.record(claim.match_id, claim.token, finished(tuple(places), claim.match_id))
            if claim.purpose is GroupPurpose.RANKED:
                seats.update(claim.version_ids)
    return seats


def test_a_pending_version_plays_its_validation_first(store, tmp_path):
    maker = Matchmaker(config(tmp_path), store, random.Random(1))
    store.create_team("alpha")
    pending = upload_version(store, "alpha", "bot")
    maker.tick()
    queue = views.queue(store)
    assert queue[0].purpose is GroupPurpose.VALIDATION
    assert queue[0].version_ids[0] == pending.id
    assert set(queue[0].version_ids[1:]) <= set(maker.anchors)
    assert all(e.purpose is GroupPurpose.VALIDATION for e in queue)  # fewer than four active


def test_ranked_groups_rotate_seats_and_share_play_evenly(store, tmp_path):
    rng = random.Random(7)
    cfg = config(tmp_path, queue=8)
    maker = Matchmaker(cfg, store, rng)
    for team in ("a", "b", "c", "d"):
        store.create_team(team)
        active_version(store, team, "bot")
    maker.tick()
    queue = views.queue(store)
    assert len(queue) == 8 and all(e.purpose is GroupPurpose.RANKED for e in queue)
    by_group: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for e in queue:
        by_group.setdefault(tuple(sorted(e.version_ids)), []).append(e.version_ids)
    for seatings in by_group.values():  # each group: four rotations of the same four
        assert len(seatings) % 4 == 0
        assert {s[0] for s in seatings[:4]} == set(seatings[0])
    maker.tick()
    assert len(views.queue(store)) == 8  # topped up to its length, not beyond
    seats = play_queue(store, maker, 10, rng)
    counts = list(seats.values())
    assert len(counts) == 6  # the two anchors and the four teams' versions
    assert max(counts) <= 1.6 * min(counts), seats


def test_the_least_certain_version_is_the_focus_and_meets_its_neighbours():
    rng = random.Random(3)
    cands = [Candidate(i, mu, 1.0, 20) for i, mu in enumerate([5, 10, 15, 20, 25, 30, 35])]
    cands.append(Candidate(99, 31.0, 8.0, 0))  # new: wide interval, nothing played
    table = pick_table(cands, rng)
    assert table is not None and table[0].version_id == 99
    assert {c.version_id for c in table[1:]} == {4, 5, 6}  # nearest to 31
    assert pick_table(cands[:3], rng) is None


def test_a_retired_version_leaves_the_queue_and_keeps_its_history(store, tmp_path):
    rng = random.Random(5)
    maker = Matchmaker(config(tmp_path, queue=4), store, rng)
    versions = []
    for team in ("a", "b", "c"):
        store.create_team(team)
        versions.append(active_version(store, team, "bot"))
    play_queue(store, maker, 3, rng)
    gone = versions[0]
    played = store.version(gone.id).matches
    assert played > 0
    maker.tick()
    store.retire(gone.id, "its team asked")
    assert all(gone.id not in e.version_ids for e in views.queue(store) if e.state == "scheduled")
    play_queue(store, maker, 2, rng)
    after = store.version(gone.id)
    assert after.state is VersionState.RETIRED and after.matches == played
    assert views.rating_history(store, gone.id)
    assert gone.id not in {r.version_id for r in views.leaderboard(store)}
    assert views.check(store) == []
