#!/usr/bin/env python3
"""Benchmark of the reinforcement-learning environments (not a test; figures go to
bench/RESULTS.md), each beside the rules engine's own random play in the same run.

1. The reference: ``bench_rules.py``'s random big-two hands, in turns per second (a
   turn lists the seat's legal plays, chooses one at random and applies it).
2. AEC steps per second, big-two, one process: ``last()`` (the observation and the
   mask of the seat to act), a uniformly random action among the mask's, ``step``; for
   ``raw_env`` and for ``env()`` (PettingZoo's wrappers). Target: a step costs at most
   four engine turns.
3. ``TableVector`` table-steps per second (one table's turn: its step, and the next
   seat's observation and mask), random masked actions, for several numbers of tables.
   Target: a table-step costs at most two engine turns.
4. ``referee dataset`` rows per second on real logs of random bots (verification with
   the signature included), to Parquet.

The workloads run in turns, a slice of each at a time (a few milliseconds to a few tens),
for ``--seconds`` in all, and each is timed in CPU time of its thread: a machine busy
with other work then slows the reference and the environments alike, and the time
another process holds the core counts for neither.

    .venv/bin/python bench/bench_rl.py
    .venv/bin/python bench/bench_rl.py --seconds 120 --tables 64
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rules import play_random_hand

from referee.rl import TableVector, env, raw_env
from referee.rules import Rules

clock = time.thread_time
"""CPU time of this thread: on a machine shared with other work, wall time would count
the moments another process had the core."""

AEC_TARGET = 4.0
VECTOR_TARGET = 2.0


Chunk = Callable[[], tuple[float, int]]
"""One slice of a workload: (seconds, units of work)."""


def engine_chunks(seed: int, hands: int = 20) -> Chunk:
    rules = Rules.for_profile("big-two")
    rng = random.Random(seed)
    counter = iter(range(10**9))

    def chunk() -> tuple[float, int]:
        start = clock()
        turns = sum(
            play_random_hand(rules, f"bench/{seed}/{next(counter)}", rng) for _ in range(hands)
        )
        return clock() - start, turns

    return chunk


def aec_chunks(make: Callable[..., object], seed: int, steps: int = 1000) -> Chunk:
    e = make(profile="big-two")
    e.reset(seed=seed)  # type: ignore[attr-defined]
    rng = random.Random(seed)
    last, step, reset = e.last, e.step, e.reset  # type: ignore[attr-defined]
    flatnonzero = np.flatnonzero

    def chunk() -> tuple[float, int]:
        done = 0
        start = clock()
        while done < steps:
            obs, _, terminated, truncated, _ = last()
            if terminated or truncated:
                reset()
                continue
            legal = flatnonzero(obs["action_mask"])
            step(int(legal[int(rng.random() * len(legal))]))
            done += 1
        return clock() - start, steps

    return chunk


def vector_chunks(tables: int, seed: int, steps: int = 1000) -> Chunk:
    vec = TableVector(tables, profile="big-two")
    state = vec.reset(seed=seed)
    calls = max(1, steps // tables)

    def chunk() -> tuple[float, int]:
        nonlocal state
        start = clock()
        for _ in range(calls):
            state = vec.step(vec.sample(state))
        return clock() - start, calls * tables

    return chunk


def interleaved(workloads: dict[str, Chunk], seconds: float) -> dict[str, float]:
    """Rates (units per second) of workloads run in turns, a slice of each at a time, so
    that a machine busy with other work slows all of them alike."""
    spent = dict.fromkeys(workloads, 0.0)
    done = dict.fromkeys(workloads, 0)
    for chunk in workloads.values():  # warm caches and tables
        chunk()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name, chunk in workloads.items():
            elapsed, units = chunk()
            spent[name] += elapsed
            done[name] += units
    return {name: done[name] / spent[name] for name in workloads}


def dataset_rows_per_s(matches: int, hands: int) -> tuple[float, int]:
    from referee.rl.dataset import export

    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs"
        for i in range(matches):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "referee.cli",
                    "match",
                    "--profile",
                    "big-two",
                    "--hands",
                    str(hands),
                    "--seed",
                    f"bench-rl-{i}",
                    "--log-dir",
                    str(logs),
                    "--state-dir",
                    str(Path(tmp) / "state"),
                    "--bot",
                    "random",
                    "--bot",
                    "random",
                    "--bot",
                    "random",
                    "--bot",
                    "random",
                ],
                check=True,
                capture_output=True,
            )
        key = (Path(tmp) / "state" / "signing-key.pub").read_text().strip()
        start = clock()
        summary = export([logs], Path(tmp) / "out.parquet", public_key=key, progress=None)
        elapsed = clock() - start
        return summary.rows / elapsed, summary.rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the RL environments.")
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="how long the workloads run, in turns"
    )
    parser.add_argument("--tables", type=int, nargs="*", default=[16, 64, 256])
    parser.add_argument("--matches", type=int, default=6, help="logs for the dataset figure")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    print(f"python {platform.python_version()} ({platform.python_implementation()})")

    workloads: dict[str, Chunk] = {"engine": engine_chunks(args.seed)}
    workloads["raw_env"] = aec_chunks(raw_env, args.seed)
    workloads["env"] = aec_chunks(env, args.seed)
    for n in args.tables:
        workloads[f"vector {n}"] = vector_chunks(n, args.seed)
    rates = interleaved(workloads, args.seconds)
    turns = rates["engine"]
    print(
        f"(1) reference, random big-two play: {turns:,.0f} engine turns/s "
        f"({1e6 / turns:.1f} us a turn)"
    )
    for name in ("raw_env", "env"):
        rate = rates[name]
        ratio = turns / rate
        ok = "met" if ratio <= AEC_TARGET else "NOT MET"
        print(
            f"(2) AEC {name}: {rate:,.0f} steps/s ({1e6 / rate:.1f} us), "
            f"{ratio:.2f} engine turns a step  [target <= {AEC_TARGET:g}: {ok}]"
        )
    for n in args.tables:
        rate = rates[f"vector {n}"]
        ratio = turns / rate
        ok = "met" if ratio <= VECTOR_TARGET else "NOT MET"
        print(
            f"(3) TableVector({n}): {rate:,.0f} table-steps/s ({1e6 / rate:.1f} us), "
            f"{ratio:.2f} engine turns a table-step  [target <= {VECTOR_TARGET:g}: {ok}]"
        )
    if args.matches:
        rows_s, rows = dataset_rows_per_s(args.matches, 10)
        print(
            f"(4) referee dataset: {rows_s:,.0f} rows/s over {rows} rows from "
            f"{args.matches} logs (verified, signature checked), Parquet"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
