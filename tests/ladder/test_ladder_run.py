"""``referee ladder`` end to end, as an organiser runs it, on SQLite and on PostgreSQL.

A ladder of seven versions: the house's random and greedy bots, an uploaded weak bot, an
uploaded bot that tries to read what its jail hides, one that crashes at start, one that
never answers in time, and a remote bot that joins through the lobby with its team's
key. ``referee ladder run`` (a real process, its worker processes, jailed bots) is killed
with SIGKILL at seeded random moments, started again each time, then stopped. Checked:
every result recorded before a kill is still there, unchanged, and counted once; every
finished match's log is on disk, verifies, and has the final hash the database indexed;
the crashing and the stalling versions are rejected with their reasons and their
output's last lines; the snooping bot read nothing; the greedy bot ranks above the random
one. The longer version is ``bench/bench_ladder.py``.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url

from referee.ladder import views
from referee.ladder.config import load_ladder_config
from referee.ladder.db import sqlite_url
from referee.ladder.schema import (
    GroupPurpose,
    MatchState,
    VersionState,
    bots,
    deal_groups,
    matches,
    teams,
    versions,
)
from referee.ladder.store import LadderStore
from referee.ladder.types import Version
from referee.log.verify import verify_log
from referee.sandbox import Level
from tests.support.jailing import require_level
from tests.support.referee_cli import ROOT, run_referee

BOTS = Path(__file__).with_name("bots")
EXAMPLES = ROOT / "examples"
KILLS = 3
SEED = 24


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(folder: Path, database: str, lobby: str) -> Path:
    for bot in (BOTS / "crash_bot.py", BOTS / "stall_bot.py", BOTS / "snoop_bot.py"):
        shutil.copy(bot, folder / bot.name)
    shutil.copy(EXAMPLES / "weak_bot.py", folder / "weak_bot.py")
    data = folder / "data"
    hidden = [
        str(data / "ladder.db"),
        str(data),
        str(data / "state"),
        str(data / "versions"),
        str(data / "logs"),
    ]
    snoop = ", ".join(f'"{p}"' for p in ["snoop_bot.py", *hidden, "--"])
    path = folder / "ladder.toml"
    path.write_text(
        f"""
[ladder]
name = "e2e"
folder = "data"
{f'database = "{database}"' if database else ""}

[rules]
hands = 1

[time]
turn_time_ms = 400
connect_timeout_ms = 8000
match_timeout_s = 60

[matchmaking]
queue = 8

[workers]
count = 2
lease_s = 4

[lobby]
address = "{lobby}"
wait_s = 20

[[entry]]
team = "alpha"
bot = "weak"
files = ["weak_bot.py"]
command = ["weak_bot.py"]

[[entry]]
team = "delta"
bot = "snoop"
files = ["snoop_bot.py"]
command = [{snoop}]

[[entry]]
team = "beta"
bot = "crash"
files = ["crash_bot.py"]
command = ["crash_bot.py"]

[[entry]]
team = "beta"
bot = "stall"
files = ["stall_bot.py"]
command = ["stall_bot.py"]
""",
        encoding="utf-8",
    )
    return path


class Ladder:
    """``referee ladder run CONFIG`` as a process of its own, started again at will."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = 0

    def start(self) -> None:
        self.runs += 1
        out = (self.config.parent / f"run{self.runs}.out").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "ladder", "run", str(self.config),
             "--seed", str(SEED + self.runs), "--log-level", "info"],
            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip

    def kill(self) -> None:
        assert self.proc is not None
        assert self.proc.poll() is None, self.output()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def output(self) -> str:
        return "".join(
            p.read_text(errors="replace")[-3000:]
            for p in sorted(self.config.parent.glob("run*.out"))
        )


@pytest.fixture
def remote_bot() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:
        p.kill()
        p.wait(10)


def finished(store: LadderStore) -> dict[str, str]:
    """Finished matches -> the final hash of their log."""
    with store.reading() as conn:
        rows = conn.execute(
            select(matches.c.id, matches.c.log_hash).where(matches.c.state == MatchState.FINISHED)
        ).all()
    return {r.id: r.log_hash for r in rows}


def ranked_groups_done(store: LadderStore) -> int:
    with store.reading() as conn:
        return len(
            conn.execute(
                select(deal_groups.c.id).where(
                    deal_groups.c.purpose == GroupPurpose.RANKED,
                    deal_groups.c.closed_at.is_not(None),
                )
            ).all()
        )


def version(store: LadderStore, team: str, bot: str) -> Version:
    """The bot's latest version."""
    with store.reading() as conn:
        found = conn.execute(
            select(versions.c.id)
            .select_from(versions.join(bots).join(teams))
            .where(teams.c.name == team, bots.c.name == bot)
            .order_by(versions.c.number.desc())
        ).first()
    assert found is not None, (team, bot)
    return store.version(found.id)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_ladder_killed_at_random_moments_loses_nothing_and_ranks_its_bots(
    engine: str, request: pytest.FixtureRequest, tmp_path: Path, remote_bot: list
) -> None:
    require_level(Level.LIGHT)
    database = "" if engine == "sqlite" else request.getfixturevalue("postgres").new_database()
    lobby = f"127.0.0.1:{free_port()}"
    config_path = write_config(tmp_path, database, lobby)
    init = run_referee("ladder", "init", str(config_path))
    assert init.returncode == 0, init.stderr
    team = run_referee("ladder", "team", "create", str(config_path), "gamma")
    assert team.returncode == 0, team.stderr
    key = team.stdout.split("\n")[1].strip()
    assert key.startswith("pdl_")
    config = load_ladder_config(config_path)
    store = LadderStore.open(config.database, migrate=False)
    ladder = Ladder(config_path)
    rng = random.Random(SEED)
    seen: dict[str, str] = {}
    try:
        ladder.start()
        remote_bot.append(
            subprocess.Popen(
                [sys.executable, str(EXAMPLES / "remote_bot.py"), "--address", lobby,
                 "--key", key, "--max-matches", "2"],
                stdout=subprocess.DEVNULL, stderr=(tmp_path / "remote.err").open("wb"),
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
        )  # fmt: skip
        for _ in range(KILLS):
            time.sleep(rng.uniform(2.0, 6.0))
            now = finished(store)
            ladder.kill()
            assert all(now[m] == h for m, h in seen.items())
            seen |= now
            ladder.start()
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            board = {(r.team, r.bot): r for r in views.leaderboard(store)}
            greedy, rand = board.get(("house", "greedy")), board.get(("house", "random"))
            if (
                ranked_groups_done(store) >= 6
                and ("gamma", "greedy") in board
                and greedy is not None
                and rand is not None
                and board[("gamma", "greedy")].matches > 0
                and version(store, "beta", "stall").state is not VersionState.PENDING
            ):
                break
            assert ladder.proc is not None and ladder.proc.poll() is None, ladder.output()
            time.sleep(1)
        else:
            pytest.fail(f"the ladder did not settle in time:\n{ladder.output()}")
        ladder.stop()
        assert ladder.proc is not None and ladder.proc.returncode == 0, ladder.output()

        after = finished(store)
        assert {m: after.get(m) for m in seen} == seen  # nothing recorded was lost or changed
        assert views.check(store) == []  # each result counted once, counters agree
        for match_id, log_hash in after.items():
            with store.reading() as conn:
                path = conn.execute(
                    select(matches.c.log_path).where(matches.c.id == match_id)
                ).scalar_one()
            report = verify_log(config.folder / path)
            assert report.ok, report
            assert report.final_hash == log_hash

        crash = version(store, "beta", "crash")
        assert crash.state is VersionState.REJECTED
        assert "before the match ended" in crash.reason
        assert "model.bin is not in the archive" in crash.stderr_tail
        stall = version(store, "beta", "stall")
        assert stall.state is VersionState.REJECTED
        assert "timed out" in stall.reason

        snoop = version(store, "delta", "snoop")
        assert snoop.state is VersionState.ACTIVE
        outputs = [p.read_text(errors="replace") for p in config.stderr_dir.rglob("seat*.txt")]
        snooped = [line for text in outputs for line in text.splitlines() if "SNOOP" in line]
        assert snooped, "the snooping bot's output is missing"
        own = f"listed {snoop.archive_sha256}"
        for line in snooped:  # only its own folder, at its path: nothing else of the ladder
            assert "denied" in line or line.endswith((own, "/data: listed versions")), line

        board = {(r.team, r.bot): r for r in views.leaderboard(store)}
        # The ranking means something: greedy above the bot that passes whenever it may
        # (greedy against random is too close a call for six one-hand deal groups).
        assert board[("house", "greedy")].mu > board[("alpha", "weak")].mu
        assert board[("gamma", "greedy")].matches > 0  # the remote bot played ranked matches
        status = run_referee("ladder", "status", str(config_path))
        assert status.returncode == 0, status.stderr
        assert "house/greedy#1" in status.stdout

        # the organiser's backup, restored elsewhere, holds every result
        backup = tmp_path / "backup"
        done = run_referee("ladder", "backup", str(config_path), str(backup))
        assert done.returncode == 0, done.stderr
        if engine == "sqlite":
            restored_url = sqlite_url(backup)
        else:
            cluster = request.getfixturevalue("postgres")
            restored_url = cluster.new_database()
            cluster.run(
                "pg_restore", "--no-owner", "--exit-on-error",
                "--dbname", str(make_url(restored_url).database), str(backup),
            )  # fmt: skip
        restored = LadderStore.open(restored_url, migrate=False)
        try:
            assert finished(restored) == after
            assert views.check(restored) == []
        finally:
            restored.close()
    finally:
        ladder.stop()
        store.close()
