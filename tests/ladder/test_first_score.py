"""A ladder under a benchmark pool: the pool's anchors are its house bots, and a new
version gets the quick benchmark's score (a real run: its own command, jailed, at a real
referee, signed logs) before it is rated."""

from __future__ import annotations

import random
import shutil
import time

from referee.ladder import api
from referee.ladder.config import parse_ladder_config
from referee.ladder.db import sqlite_url
from referee.ladder.first_score import first_score, folder_of
from referee.ladder.matchmaker import Matchmaker
from referee.ladder.schema import VersionState
from referee.ladder.store import LadderStore
from referee.tournament.config import ConfigError
from tests.support.referee_cli import ROOT, run_referee

from .helpers import finished, upload_version


def test_a_pool_gives_the_house_bots_and_a_bad_pool_is_refused(tmp_path):
    cfg = parse_ladder_config({"ladder": {"pool": "v1"}}, tmp_path / "l.toml")
    assert cfg.anchors == ("random", "greedy", "policy", "expert", "search")
    assert cfg.first_score
    mine = parse_ladder_config(
        {"ladder": {"pool": "v1", "anchors": ["greedy", "expert"], "first_score": False}},
        tmp_path / "l.toml",
    )
    assert mine.anchors == ("greedy", "expert") and not mine.first_score
    for bad, key in (
        ({"pool": "v0"}, "ladder.pool"),
        ({"first_score": True}, "ladder.first_score"),
    ):
        try:
            parse_ladder_config({"ladder": bad}, tmp_path / "l.toml")
        except ConfigError as exc:
            assert key in str(exc)
        else:
            raise AssertionError(f"{bad} was taken")


def test_a_new_version_is_scored_by_the_quick_benchmark_before_it_is_rated(
    sqlite_template, tmp_path
):
    """On SQLite only: the first score is the same code on either engine, and a minute of
    real matches."""
    db = tmp_path / "ladder.db"
    shutil.copyfile(sqlite_template, db)
    store = LadderStore.open(sqlite_url(db))
    cfg = parse_ladder_config({"ladder": {"folder": "data", "pool": "v1"}}, tmp_path / "l.toml")
    maker = Matchmaker(cfg, store, random.Random(2))
    assert maker.first_scores is not None
    maker.first_scores.deals = 1  # a slice of the quick run: 16 matches
    store.create_team("alpha")
    version = upload_version(store, "alpha", "kit")
    folder = cfg.versions_dir / (version.archive_sha256 or "")
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "greedy_bot.py", folder / "bot.py")
    maker.tick()
    claim = store.claim("w", 30)
    assert claim is not None and claim.version_ids[0] == version.id
    store.record(claim.match_id, claim.token, finished((1, 2, 3, 4), claim.match_id))
    maker.tick()  # validated: its first score starts; it stays pending meanwhile
    assert store.version(version.id).state is VersionState.PENDING
    deadline = time.monotonic() + 300
    while store.version(version.id).state is VersionState.PENDING:
        assert time.monotonic() < deadline, (
            folder_of(cfg.folder, version.id).parent / f"v{version.id}.out"
        ).read_text()
        time.sleep(0.5)
        maker.tick()
    assert store.version(version.id).state is VersionState.ACTIVE
    ended = first_score(cfg.folder, version.id)
    assert ended is not None and ended["exit_code"] == 0 and ended["complete"], ended
    score = ended["score"]
    assert score["deals"] == 1 and isinstance(score["rating"], float)
    assert score["ci95"] == [None, None]  # one deal: no interval (over deals) yet
    verified = run_referee("verify", "--tournament", str(folder_of(cfg.folder, version.id)))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    page = api.bot_json(store, "alpha", "kit", cfg.folder)
    assert page["versions"][0]["first_score"]["score"] == score
    store.close()
