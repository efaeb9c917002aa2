"""The schedule is a pure function of the configuration and the master seed."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from referee.tournament.config import ConfigError
from referee.tournament.schedule import build_schedule, group_seed
from referee.tournament.toml_reader import load_config

from .conftest import bot_entry, write_config

FIVE = [bot_entry(n, builtin="greedy") for n in "abcde"]


def test_round_robin_with_rotations(tmp_path):
    cfg = load_config(write_config(tmp_path, FIVE, tournament={"rounds": 2}))
    specs = build_schedule(cfg, "master")
    assert len(specs) == cfg.total_matches == 5 * 2 * 4
    assert [s.index for s in specs] == list(range(40))
    assert len({s.match_id for s in specs}) == 40
    assert all(s.match_id.startswith(cfg.identity_hash()[:8]) for s in specs)
    for group in range(10):
        members = [s for s in specs if s.group == group]
        assert len(members) == 4 and len({s.seed for s in members}) == 1
        assert members[0].seed == hashlib.sha256(f"master:{group}".encode()).hexdigest()
        # Every bot of the table sits in every seat once over the group.
        for seat in range(4):
            assert len({m.bots[seat] for m in members}) == 4
        assert len({frozenset(m.bots) for m in members}) == 1
    # Every bot plays the same number of matches.
    plays = Counter(b for s in specs for b in s.bots)
    assert set(plays.values()) == {32}
    # Distinct groups get distinct seeds.
    assert len({s.seed for s in specs}) == 10


def test_same_inputs_same_schedule_other_seed_other_deals(tmp_path):
    cfg = load_config(write_config(tmp_path, FIVE))
    assert build_schedule(cfg, "m") == build_schedule(cfg, "m")
    assert [s.seed for s in build_schedule(cfg, "m")] != [s.seed for s in build_schedule(cfg, "n")]
    assert group_seed("m", 3) == hashlib.sha256(b"m:3").hexdigest()


def test_permutations_seat_every_order(tmp_path):
    cfg = load_config(
        write_config(tmp_path, FIVE[:4], tournament={"seatings": "permutations", "format": "fixed"})
    )
    specs = build_schedule(cfg, "x")
    assert len(specs) == 24 and len({s.bots for s in specs}) == 24


def test_no_duplicate_rotates_seats_between_groups(tmp_path):
    cfg = load_config(
        write_config(tmp_path, FIVE[:4], tournament={"seatings": "none", "rounds": 4})
    )
    specs = build_schedule(cfg, "x")
    assert len(specs) == 4 and len({s.seed for s in specs}) == 4
    assert [s.bots[0] for s in specs] == ["a", "b", "c", "d"]


def test_gauntlet_hero_is_in_every_match(tmp_path):
    cfg = load_config(write_config(tmp_path, FIVE, tournament={"format": "gauntlet", "hero": "c"}))
    specs = build_schedule(cfg, "x")
    assert len(specs) == 4 * 4 and all("c" in s.bots for s in specs)


def test_per_round_deals_give_every_table_of_a_round_the_same_deal(tmp_path):
    """``deals = "per-round"`` (the benchmark's): round ``r`` is dealt ``SHA-256(master:r)``
    at every table, whatever the number of tables; the identity says so (the default's
    identity, and so every older tournament's hash, is unchanged)."""
    cfg = load_config(write_config(tmp_path, FIVE, tournament={"rounds": 3, "deals": "per-round"}))
    specs = build_schedule(cfg, "master")
    for rnd in range(3):
        seeds = {s.seed for s in specs if s.round == rnd}
        assert seeds == {hashlib.sha256(f"master:{rnd}".encode()).hexdigest()}
    assert len({s.group for s in specs}) == 5 * 3  # still one group per table and round
    assert cfg.identity()["deals"] == "per-round"
    default = load_config(write_config(tmp_path, FIVE, tournament={"rounds": 3}))
    assert "deals" not in default.identity()
    with pytest.raises(ConfigError, match=r"tournament\.deals"):
        load_config(write_config(tmp_path, FIVE, tournament={"deals": "per-hand"}))
