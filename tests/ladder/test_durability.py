"""SIGKILL at any moment loses no recorded result and counts no match twice: real worker
processes on the same database, two at a time, killed at seeded random moments while
they claim and record, then one more that drains the queue."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import func, select

from referee.ladder.storage import queries
from referee.ladder.storage.records import LadderMatchState
from referee.ladder.storage.schema import matches, ratings, seat_results

from .helpers import active_version

WORKER = Path(__file__).with_name("ladder_worker.py")
LEASE_S = 1.0
ROUNDS = 2
GROUPS = 8


def start(url: str, name: str, folder: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), url, name, str(LEASE_S), str(folder / "journal")],
        stdout=subprocess.DEVNULL,
        stderr=(folder / f"{name}.err").open("wb"),
    )


def journal(folder: Path) -> list[str]:
    path = folder / "journal"
    return path.read_text().splitlines() if path.exists() else []


def go(folder: Path, name: str) -> None:
    (folder / f"journal.go-{name}").touch()


def records(folder: Path) -> int:
    return sum(line.startswith("recorded ") for line in journal(folder))


def wait_records(folder: Path, count: int, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + 120
    while records(folder) < count:
        for proc in procs:
            assert proc.poll() is None, proc.args
        assert time.monotonic() < deadline, "the workers recorded nothing"
        time.sleep(0.005)


def test_sigkill_at_random_moments_loses_nothing_and_doubles_nothing(store, migrated_url, tmp_path):
    rng = random.Random(24)
    teams = "abcdef"
    for team in teams:
        store.create_team(team)
    versions = [active_version(store, team, "bot").id for team in teams]
    rotations = [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
    groups = [rng.sample(versions, 4) for _ in range(GROUPS)]
    scheduled = [m for g in groups for m in store.queue.schedule(g, rotations)]

    names = [f"w{r}{x}" for r in range(ROUNDS) for x in "ab"]
    procs = {name: start(migrated_url, name, tmp_path) for name in [*names, "drain"]}
    deadline = time.monotonic() + 180
    while not all(f"started {name}" in journal(tmp_path) for name in procs):
        for name, proc in procs.items():
            assert proc.poll() is None, (tmp_path / f"{name}.err").read_text()
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.05)

    killed_after: list[int] = []
    for pair in zip(names[::2], names[1::2], strict=True):
        for name in pair:  # two workers at once on the same queue
            go(tmp_path, name)
        for name in pair:
            # After a few more records (so every kill interrupts work under way, and the
            # killed workers cannot play the whole queue however fast the machine is),
            # at a random moment of a claim-play-record cycle.
            alive = [procs[n] for n in pair if procs[n].returncode is None]
            wait_records(tmp_path, records(tmp_path) + rng.randint(1, 3), alive)
            time.sleep(rng.uniform(0, 0.05))
            procs[name].send_signal(signal.SIGKILL)
            assert procs[name].wait() == -signal.SIGKILL
        killed_after.append(records(tmp_path))
    go(tmp_path, "drain")
    assert procs["drain"].wait(timeout=300) == 0, (tmp_path / "drain.err").read_text()

    recorded = [line.split()[1] for line in journal(tmp_path) if line.startswith("recorded")]
    assert 0 < killed_after[-1] < len(scheduled), "the drain had nothing left: tested nothing"
    # Recorded once each; a worker killed between its commit and its journal line is the
    # only way a match can be missing from the journal (the database has it: below).
    assert len(recorded) == len(set(recorded)) and set(recorded) <= set(scheduled)
    assert len(scheduled) - len(recorded) <= len(names)
    with store.reading() as conn:
        states = dict(conn.execute(select(matches.c.id, matches.c.state)).all())
        per_match = dict(
            conn.execute(
                select(seat_results.c.match_id, func.count()).group_by(seat_results.c.match_id)
            ).all()
        )
        rated = conn.execute(select(func.count()).select_from(ratings)).scalar_one()
    assert set(states.values()) == {LadderMatchState.FINISHED}
    assert set(per_match.values()) == {4} and len(per_match) == len(scheduled)
    assert rated == 4 * len(groups)  # each group rated once, each of its versions once
    assert queries.check(store) == []
    played = sum(store.version(v).matches for v in versions)
    assert played == 4 * len(scheduled)
