#!/usr/bin/env python3
"""The ladder's own overhead: matches per minute of ``referee ladder run`` beside
``referee tournament`` on the same schedule, in the same run, with 1 and 2 workers.

The same four bots both ways: the built-in random and greedy bots, and the examples'
greedy and random bots as spawned, jailed processes (a ladder's uploaded versions always
are). The same schedule: deal groups of the four rotations of one table of four, ``--hands``
hands a match. The tournament runs ``--groups`` groups at ``concurrency`` = workers
(wall time of the whole run, start-up included). The ladder (SQLite) is initialised
first (its two uploads validated), then timed from its first ranked match's start to the
finish of its ``4 x --groups``-th, read from its database: every match claimed, played
by a worker process's own referee, its log moved and indexed, recorded in one
transaction, rated per group, and the matchmaker's queue kept topped up.

Also a longer version of the end-to-end test: ``--kill N`` SIGKILLs the ladder N times at
random moments during its run (seeded) and checks nothing recorded was lost or doubled.

Not a test; nothing depends on its figures. See bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT  # first: puts the checkout on sys.path
from bench_tournament import run_one, spawned
from sqlalchemy import select

from referee.ladder import views
from referee.ladder.config import load_ladder_config
from referee.ladder.schema import GroupPurpose, MatchState, deal_groups, matches
from referee.ladder.store import LadderStore
from referee.server.logging import configure_logging

LADDER = """
[ladder]
name = "bench"
folder = "data"

[rules]
hands = {hands}

[time]
turn_time_ms = 5000

[matchmaking]
queue = 8

[workers]
count = {workers}
lease_s = 30

[[entry]]
team = "bench-greedy"
bot = "greedy"
files = ["{examples}/greedy_bot.py"]
command = ["greedy_bot.py"]

[[entry]]
team = "bench-random"
bot = "random"
files = ["{examples}/random_bot.py"]
command = ["random_bot.py"]
"""


def ranked_times(store: LadderStore) -> list[tuple[float, float]]:
    with store.reading() as conn:
        rows = conn.execute(
            select(matches.c.started_at, matches.c.finished_at)
            .select_from(matches.join(deal_groups))
            .where(
                deal_groups.c.purpose == GroupPurpose.RANKED,
                matches.c.state == MatchState.FINISHED,
            )
        ).all()
    return [(float(a), float(b)) for a, b in rows]


def run_ladder(workers: int, groups: int, hands: int, kills: int, seed: int) -> float:
    """Matches per minute of the ladder over ``4 * groups`` ranked matches."""
    with tempfile.TemporaryDirectory(prefix="bench-ladder-") as tmp:
        folder = Path(tmp)
        config_path = folder / "ladder.toml"
        config_path.write_text(
            LADDER.format(hands=hands, workers=workers, examples=ROOT / "examples")
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cli = [sys.executable, "-m", "referee.cli", "ladder"]
        subprocess.run([*cli, "init", str(config_path)], check=True, env=env,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        config = load_ladder_config(config_path)
        store = LadderStore.open(config.database, migrate=False)
        rng = random.Random(seed)
        want = 4 * groups
        kill_at = sorted(rng.uniform(0.1, 0.9) * want for _ in range(kills))
        run = [*cli, "run", str(config_path), "--log-level", "warning"]
        proc = None
        seen: dict[str, str] = {}
        try:
            proc = subprocess.Popen(run, env=env, stdout=subprocess.DEVNULL)
            while len(times := ranked_times(store)) < want:
                if kill_at and len(times) >= kill_at[0]:
                    kill_at.pop(0)
                    with store.reading() as conn:
                        done = dict(
                            conn.execute(
                                select(matches.c.id, matches.c.log_hash).where(
                                    matches.c.state == MatchState.FINISHED
                                )
                            ).all()
                        )
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    seen |= done
                    proc = subprocess.Popen(run, env=env, stdout=subprocess.DEVNULL)
                if proc.poll() is not None:
                    raise SystemExit("referee ladder run ended early")
                time.sleep(0.2)
        finally:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(60)
        if kills:
            with store.reading() as conn:
                after = dict(conn.execute(select(matches.c.id, matches.c.log_hash)).all())
            lost = [m for m, h in seen.items() if after.get(m) != h]
            problems = views.check(store)
            print(f"# {kills} kills: {len(lost)} results lost or changed, problems: {problems}")
        store.close()
        times.sort(key=lambda t: t[1])
        start = min(a for a, _ in times)
        end = times[want - 1][1]
        return want / (end - start) * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=6, help="deal groups (default 6)")
    parser.add_argument("--hands", type=int, default=2, help="hands per match (default 2)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--kill", type=int, default=0, help="SIGKILL the ladder N times")
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    configure_logging("json", "warning")
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, nproc "
        f"{os.cpu_count()}; {args.groups} groups x 4 rotations, {args.hands} hands a match"
    )
    print("| workers | tournament matches/min | ladder matches/min | ladder / tournament |")
    print("|---|---|---|---|")
    bots = [("greedy", 'builtin = "greedy"'), ("random", 'builtin = "random"')]
    bots += [spawned(0), spawned(1)]
    for workers in args.workers:
        done, secs = run_one(
            bots, rounds=args.groups, hands=args.hands, concurrency=workers, verify=True,
            sandbox="on",
        )  # fmt: skip
        tournament = done / secs * 60
        ladder = run_ladder(workers, args.groups, args.hands, args.kill, args.seed)
        print(f"| {workers} | {tournament:.0f} | {ladder:.0f} | {ladder / tournament:.2f} |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
