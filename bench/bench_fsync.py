#!/usr/bin/env python3
"""The cost of `referee serve --fsync`: a match's decisions appended to a real log file
under each policy, in alternating rounds, in microseconds per decision.

The decisions are those of a simulated 20-hand match (the match machine's own events and
commands, as the server appends them); ``never`` is the same run's reference (the line
reaches the OS, no fsync). The log folder is the one given (default: a temporary folder
on this repository's disk, since tmpfs makes fsync free).

    python bench/bench_fsync.py --rounds 5 --dir /var/lib/referee-bench
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "match"))

from sim import MS, T0, Sim, settings  # noqa: E402

from referee.log.writer import EventLogWriter, FsyncPolicy  # noqa: E402


def decisions(hands: int) -> list[tuple[object, list[object], int]]:
    sim = Sim(settings("pusoy-dos", hands=hands, turn_time_ms=1000))
    sim.connect_all(T0)
    t = T0
    while not sim.state.over:
        t += 5 * MS
        sim.play_lowest(t)
    groups: list[tuple[object, list[object], int]] = []
    for cmd, event, at in sim.log:
        if groups and groups[-1][0] is cmd:
            groups[-1][1].append(event)
        else:
            groups.append((cmd, [event], at))
    return groups


def one_round(folder: Path, policy: FsyncPolicy, groups: list) -> float:
    """Wall seconds per decision to append the whole match under ``policy``."""
    path = folder / f"20261201-000000-{policy.value[:8]:0>8}.jsonl"
    writer = EventLogWriter.create(path, "bench", policy)
    t0 = time.perf_counter()
    for cmd, events, at in groups:
        writer.append(events, at, cmd)
    elapsed = time.perf_counter() - t0
    writer.close()
    path.unlink()
    return elapsed / len(groups)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--dir", type=Path, default=ROOT / "build")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    groups = decisions(args.hands)
    print(f"{len(groups)} decisions of a {args.hands}-hand match, log folder {args.dir}")
    results: dict[FsyncPolicy, list[float]] = {p: [] for p in FsyncPolicy}
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        for rnd in range(args.rounds):
            order = list(FsyncPolicy) if rnd % 2 == 0 else list(reversed(FsyncPolicy))
            for policy in order:
                results[policy].append(one_round(Path(d), policy, groups))
    never = statistics.median(results[FsyncPolicy.NEVER])
    for policy in FsyncPolicy:
        xs = [x * 1e6 for x in results[policy]]
        med = statistics.median(xs)
        print(
            f"  --fsync {policy.value:<11} {med:8.1f} µs per decision "
            f"({min(xs):.1f}-{max(xs):.1f}), {med / (never * 1e6):5.1f}x never"
        )


if __name__ == "__main__":
    main()
