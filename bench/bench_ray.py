#!/usr/bin/env python3
"""Tournaments on Ray: matches per minute on the local backend and on a Ray cluster of
one and of two nodes on this machine, and Ray's overhead per match.

Each run is a real tournament in a fresh folder with four built-in bots (greedy, random,
greedy, random), one hand a match, logs verified on arrival and recorded with fsync.
The local backend runs first, as the reference; then a real cluster is started
(``ray start --head`` and, for the second series, a second ``ray start --address``, one
CPU each, as in tests/tournament/test_ray.py) and the same schedule is played on it.
Ray's first matches include starting its worker processes: one warm-up tournament is
played on each cluster first and not counted.

    .venv/bin/python bench/bench_ray.py --matches 24

On one machine Ray cannot be faster than the local backend (same cores, plus the task's
own process, its referee start and the log's trip back); the figure of interest is the
overhead per match, which scales the paper estimate in docs/tournaments.md. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tournament"))

from ray_cluster import LocalCluster  # noqa: E402

from referee.service.logging import configure_logging  # noqa: E402
from referee.tournament.director import Tournament  # noqa: E402
from referee.tournament.progress import Progress  # noqa: E402
from referee.tournament.toml_reader import load_config  # noqa: E402


def write_config(folder: Path, matches: int, concurrency: int, address: str | None) -> Path:
    lines = [
        "[tournament]",
        'seed = "bench"',
        'format = "fixed"',
        f"matches = {matches}",
        f"concurrency = {concurrency}",
        'output = "out"',
        "[rules]",
        "hands = 1",
        "[time]",
        "turn_time_ms = 5000",
    ]
    if address is not None:
        lines += ["[execution]", 'backend = "ray"', f'address = "{address}"']
    for i, builtin in enumerate(("greedy", "random", "greedy", "random")):
        lines += ["[[bot]]", f'name = "{builtin}-{i}"', f'builtin = "{builtin}"']
    path = folder / "t.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def play(matches: int, concurrency: int, address: str | None) -> float:
    """Seconds to play the tournament (every match recorded, none failed)."""
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        cfg = load_config(write_config(Path(tmp), matches, concurrency, address))
        tournament = Tournament(cfg, progress=Progress(io.StringIO(), tty=False))
        t0 = time.perf_counter()
        summary = asyncio.run(tournament.run())
        seconds = time.perf_counter() - t0
        if summary.failed or summary.done != summary.total:
            raise SystemExit(f"the tournament did not complete: {summary}")
        return seconds


def line(label: str, matches: int, seconds: float, reference: float | None) -> str:
    rate = matches / seconds * 60
    per = seconds / matches * 1000
    text = f"{label:<34} {matches:>4} matches {seconds:7.1f} s {rate:7.1f}/min {per:7.0f} ms/match"
    if reference is not None:
        text += f"  (+{per - reference / matches * 1000:.0f} ms/match over local)"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=24, help="matches per tournament")
    args = parser.parse_args()
    configure_logging(level="warning")
    n = 4 * math.ceil(args.matches / 4)
    print(f"{platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")

    local1 = play(n, 1, None)
    print(line("local, concurrency 1", n, local1, None))
    local2 = play(n, 2, None)
    print(line("local, concurrency 2", n, local2, None))

    with LocalCluster() as cluster:
        t0 = time.perf_counter()
        cluster.start_head()
        print(f"ray start --head: {time.perf_counter() - t0:.1f} s")
        play(4, 1, cluster.address)  # warm-up: the worker process starts
        ray1 = play(n, 1, cluster.address)
        print(line("ray, 1 node (1 CPU), concurrency 1", n, ray1, local1))
        t0 = time.perf_counter()
        cluster.add_node()
        print(f"ray start --address (second node): {time.perf_counter() - t0:.1f} s")
        play(4, 2, cluster.address)  # warm-up: the second node's worker starts
        ray2 = play(n, 2, cluster.address)
        print(line("ray, 2 nodes (1 CPU each), conc. 2", n, ray2, local2))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
