"""Matchmaking on each engine: a pending version is validated against the house's bots
before anything ranked; ranked groups are the four rotations of four active versions, the
least certain first, never two of one team; every active version plays at a similar
rate; the queue stays at its length; a retired version leaves the queue and keeps its
history."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.ladder import views
from referee.ladder.config import load_ladder_config, parse_ladder_config
from referee.ladder.errors import Conflict
from referee.ladder.matchmaker import Candidate, Matchmaker, pick_table
from referee.ladder.schema import GroupPurpose, VersionState, deal_groups, match_seats, matches
from tests.support.referee_cli import ROOT

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


def test_a_table_never_seats_two_versions_of_a_team_and_needs_four_teams():
    rng = random.Random(4)
    # team 1 has the three versions nearest the focus; the house's two may sit together
    cands = [
        Candidate(0, 30.0, 8.0, 0, team=2),
        *(Candidate(i, 30.0 + i / 10, 1.0, 20, team=1) for i in (1, 2, 3)),
        Candidate(4, 20.0, 1.0, 20, team=None),
        Candidate(5, 21.0, 1.0, 20, team=None),
        Candidate(6, 5.0, 1.0, 20, team=3),
    ]
    for _ in range(50):
        table = pick_table(cands, rng)
        assert table is not None and table[0].version_id == 0
        assert [c.version_id for c in table][1] in (1, 2, 3)  # the nearest of team 1 only
        assert {c.version_id for c in table[2:]} == {4, 5}
    stacked = [Candidate(i, 25.0, 2.0, 0, team=1) for i in range(4)]
    assert pick_table(stacked, rng) is None  # one team's four versions are not a table
    three = [*stacked, Candidate(9, 25.0, 2.0, 0, team=None), Candidate(8, 1.0, 1.0, 0, team=2)]
    assert pick_table(three, rng) is None  # teams 1 and 2 and one house bot: three
    assert pick_table([*three, Candidate(7, 1.0, 1.0, 0, team=None)], rng) is not None


def test_a_team_of_many_bots_holds_one_seat_of_each_ranked_table(store, tmp_path):
    """A team with three active bots (the stacking of issue 30) and one other team: every
    ranked table seats one of the three, the other team and the house's two anchors, and
    each of the three bots is still ranked."""
    rng = random.Random(11)
    maker = Matchmaker(config(tmp_path, queue=8), store, rng)
    for team in ("stack", "solo"):
        store.create_team(team)
    stack = [active_version(store, "stack", f"bot{i}").id for i in range(3)]
    solo = active_version(store, "solo", "bot").id
    seats = play_queue(store, maker, 12, rng)
    with store.reading() as conn:
        rows = conn.execute(
            select(match_seats.c.match_id, match_seats.c.version_id)
            .select_from(match_seats.join(matches).join(deal_groups))
            .where(deal_groups.c.purpose == GroupPurpose.RANKED)
        ).all()
    tables: dict[str, set[int]] = {}
    for match_id, version_id in rows:
        tables.setdefault(match_id, set()).add(version_id)
    assert len(tables) >= 40
    for table in tables.values():
        assert len(table & set(stack)) == 1 and solo in table and set(maker.anchors) <= table
    assert all(seats[v] > 0 for v in stack)
    ranked = {r.version_id for r in views.leaderboard(store) if r.matches > 0}
    assert set(stack) <= ranked


def test_the_store_refuses_a_stacked_ranked_table_but_not_a_validation(store):
    store.create_team("stack")
    store.create_team("solo")
    two = [active_version(store, "stack", f"bot{i}").id for i in range(2)]
    solo = active_version(store, "solo", "bot").id
    greedy = store.builtin_version("greedy").id
    with pytest.raises(Conflict, match="stack would have two"):
        store.schedule([*two, solo, greedy], [(0, 1, 2, 3)])
    pending = upload_version(store, "stack", "new")
    assert store.schedule([pending.id, greedy, greedy, greedy], [(0, 1, 2, 3)], "validation")
    random_ = store.builtin_version("random").id
    assert store.schedule([two[0], solo, greedy, random_], [(0, 1, 2, 3)])


def test_the_example_ladder_ranks_its_entries(store, tmp_path):
    """examples/ladder.toml's entries, as ``referee ladder init`` enters them, with its
    anchors: every entry plays ranked matches, and no table seats a team twice."""
    example = load_ladder_config(ROOT / "examples" / "ladder.toml")
    example = dataclasses.replace(example, folder=tmp_path / "data")
    for team in sorted({e.team for e in example.entries}):
        store.create_team(team)
    entered = {active_version(store, e.team, e.bot).id: e.team for e in example.entries}
    rng = random.Random(2)
    maker = Matchmaker(example, store, rng)
    maker.tick()
    queue = views.queue(store)
    assert queue and all(e.purpose is GroupPurpose.RANKED for e in queue)
    for entry in queue:
        teams = [entered[v] for v in entry.version_ids if v in entered]
        assert len(teams) == len(set(teams)), entry
    seats = play_queue(store, maker, 4, rng)
    assert all(seats[v] > 0 for v in entered), seats


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
