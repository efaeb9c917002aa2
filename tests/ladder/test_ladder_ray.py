"""A ladder on Ray: ``[workers] backend = "ray"`` checked, and a real Ray of its own.

``referee ladder run`` with a Ray started on this machine (no address): its one worker
process is Ray's driver and every match a Ray task with its own referee. Two uploaded
copies of the examples' weak bot (jailed on the node) are validated against the house's
bots, then ranked with them; every finished match's log is at the path the database
names, signed with the ladder's key (not the task's referee's), and verifies. The user's
Ray settings and home folder are kept out of it, as tests/tournament/test_ray.py does.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from referee.ladder.config import ConfigError, load_ladder_config
from referee.ladder.storage.records import GroupPurpose, LadderMatchState
from referee.ladder.storage.schema import deal_groups, matches
from referee.ladder.storage.store import LadderStore
from referee.log.verify import verify_log
from referee.sandbox import Level
from referee.table.referees import state_signer
from tests.support.jailing import require_level
from tests.support.referee_cli import ROOT, run_referee

RAY_SETTINGS = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
RANKED = 2
"""Ranked matches to see finished (after the two validations)."""


def write_config(folder: Path, workers: str) -> Path:
    shutil.copy(ROOT / "examples" / "weak_bot.py", folder / "weak_bot.py")
    path = folder / "ladder.toml"
    path.write_text(
        f"""
[ladder]
name = "on ray"
folder = "data"

[rules]
hands = 1

[time]
turn_time_ms = 2000
connect_timeout_ms = 20000
match_timeout_s = 60

[workers]
{workers}
lease_s = 20

[[entry]]
team = "alpha"
bot = "weak"
files = ["weak_bot.py"]
command = ["weak_bot.py"]

[[entry]]
team = "beta"
bot = "weak"
files = ["weak_bot.py"]
command = ["weak_bot.py"]
""",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("workers", "where", "what"),
    [
        ('backend = "cluster"', "workers.backend", "is not one of"),
        ('address = "auto"', "workers.address", "only with backend"),
        ("backend = 3", "workers.backend", "should be a string"),
    ],
)
def test_the_ray_settings_are_checked(tmp_path: Path, workers: str, where: str, what: str) -> None:
    with pytest.raises(ConfigError, match=what) as err:
        load_ladder_config(write_config(tmp_path, workers))
    assert err.value.where == where


def test_ray_settings_read(tmp_path: Path) -> None:
    config = load_ladder_config(
        write_config(tmp_path, 'backend = "ray"\naddress = "10.0.0.5:6379"\ncount = 3')
    )
    assert (config.backend, config.ray_address, config.workers) == ("ray", "10.0.0.5:6379", 3)
    assert load_ladder_config(write_config(tmp_path, "")).backend == "local"


def finished(store: LadderStore) -> list[tuple[str, str, str, GroupPurpose]]:
    with store.reading() as conn:
        rows = conn.execute(
            select(matches.c.id, matches.c.log_path, matches.c.log_hash, deal_groups.c.purpose)
            .join(deal_groups, deal_groups.c.id == matches.c.group_id)
            .where(matches.c.state == LadderMatchState.FINISHED)
        ).all()
    return [(r.id, r.log_path, r.log_hash, GroupPurpose(r.purpose)) for r in rows]


def test_a_ladder_on_a_ray_of_its_own_plays_and_records_its_matches(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    require_level(Level.LIGHT)
    path = write_config(tmp_path, 'backend = "ray"\ncount = 2')
    init = run_referee("ladder", "init", str(path))
    assert init.returncode == 0, init.stderr
    config = load_ladder_config(path)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in RAY_SETTINGS}
    out = (tmp_path / "run.out").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "ladder", "run", str(path), "--seed", "7"],
        stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
        env={**env, "HOME": str(home), "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    store = LadderStore.open(config.database, migrate=False)
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            done = finished(store)
            if sum(p is GroupPurpose.RANKED for *_, p in done) >= RANKED:
                break
            assert proc.poll() is None, (tmp_path / "run.out").read_text(errors="replace")
            time.sleep(0.5)
        else:
            pytest.fail("no ranked match on Ray in time:\n" + _output(tmp_path))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, _output(tmp_path)
        assert "matches on Ray (a Ray of its own), 2 at once" in _output(tmp_path)
        with store.reading() as conn:  # a SIGTERM gives the matches being played back
            running = conn.execute(
                select(matches.c.id).where(matches.c.state == LadderMatchState.RUNNING)
            ).all()
        assert running == []

        key = base64.b64decode(state_signer(config.state_dir).public_key_text)
        done = finished(store)
        assert {p for *_, p in done} == {GroupPurpose.VALIDATION, GroupPurpose.RANKED}
        for _, log_path, log_hash, _ in done:
            report = verify_log(config.folder / log_path, key)  # the ladder's key
            assert report.ok, report
            assert report.final_hash == log_hash
        outputs = list(config.stderr_dir.rglob("seat*-alpha_weak_1.txt"))
        assert outputs, "the spawned bots' output came back from the node"
        assert not (home / ".ray").exists()  # a Ray of its own leaves no token behind
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        store.close()


def _output(folder: Path) -> str:
    return (folder / "run.out").read_text(errors="replace")[-4000:]
