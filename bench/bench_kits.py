#!/usr/bin/env python3
"""Moves per second of each starter kit against the referee: one match, four bots of
that language (separate processes), the same seed for every kit.

The figure is taken from the match's own log: actions (played + passed events) divided
by the time from the first deal to the match's end, so process start-up is left out.

    python bench/bench_kits.py                    # every kit, 20 hands of big-two
    python bench/bench_kits.py --kits python go --hands 50
    python bench/bench_kits.py --fresh-clone      # build times in a fresh clone of HEAD
    python bench/bench_kits.py --kits go --batch --rounds 3 --no-build
                                                  # live vs batched events, alternating

Build times are wall and CPU seconds of each kit's build.sh (CPU: the build's own
processes, so the figure holds on a shared, busy machine). With --fresh-clone the kits
are built and played in a new clone of this repository's HEAD, so nothing built before
is reused; the package managers' download caches outside the repository (~/.m2,
~/.cargo/registry, pip's and npm's caches) still are.

With --batch each kit plays the match twice per round, with live events and with
--batch-events (Hello.batch_events: events in the prompts, no result for an accepted
action), alternating for --rounds rounds, and the batched/live ratio of each round is
printed beside the figures; the log confirms every seat batched (or did not).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.log import read_log  # noqa: E402

KITS = ["python", "typescript", "go", "rust", "java", "cpp"]


def build(root: Path, kit: str) -> tuple[float, float]:
    """(wall, CPU) seconds of the kit's build.sh in ``root``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(
        ["bash", str(root / "clients" / kit / "build.sh")],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHON": sys.executable},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.monotonic() - start, cpu


def measure(
    kit: str, hands: int, seed: str, root: Path = ROOT, batch: bool = False
) -> tuple[int, float, int]:
    """(moves, seconds, default actions) of one match of four bots of ``kit`` (``greedy``:
    the referee's built-in bots, in its own process: the same run's reference), with
    batched events when ``batch``."""
    bot = "greedy" if kit == "greedy" else str(root / "clients" / kit / "bot")
    if batch:
        bot += " --batch-events"
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
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
                seed,
                "--log-dir",
                tmp,
                "--turn-time-ms",
                "5000",
                "--connect-timeout-ms",
                "60000",
                *[a for _ in range(4) for a in ("--bot", bot)],
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{kit}: referee match failed:\n{done.stdout}\n{done.stderr}")
        log = next(Path(tmp).glob("*.jsonl"))
        lines = read_log(log).lines
    batching = {
        ln.entry.event.seat_connected.batch_events
        for ln in lines
        if ln.entry.event.HasField("seat_connected")
    }
    if batching != {batch}:
        raise SystemExit(f"{kit}: seats batching {batching}, expected {batch}")
    start = next(ln for ln in lines if ln.entry.event.HasField("hand_dealt")).entry.time
    end = lines[-1].entry.time
    moves = defaults = 0
    for ln in lines:
        ev = ln.entry.event
        body = ev.played if ev.HasField("played") else ev.passed if ev.HasField("passed") else None
        if body is not None:
            moves += 1
            defaults += body.default_cause != 0
    seconds = (end.ToNanoseconds() - start.ToNanoseconds()) / 1e9
    return moves, seconds, defaults


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kits", nargs="+", default=KITS, choices=KITS)
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--seed", default="bench-kits")
    ap.add_argument("--no-build", action="store_true", help="assume every kit is built")
    ap.add_argument("--fresh-clone", action="store_true", help="build in a new clone of HEAD")
    ap.add_argument("--batch", action="store_true", help="live vs batched events, per kit")
    ap.add_argument("--rounds", type=int, default=1, help="with --batch: alternating rounds")
    args = ap.parse_args()
    if args.batch:
        batch_vs_live(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = ROOT
        if args.fresh_clone:
            root = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(root)], check=True)
            # The matches are refereed by this checkout's referee; the Python kit's
            # build makes the clone's own .venv for its bot.
        head = f"{'kit':12} {'build s':>8} {'build CPU s':>11} {'moves':>7} {'seconds':>8}"
        print(f"{head} {'moves/s':>8}  defaults")
        moves, seconds, defaults = measure("greedy", args.hands, args.seed, root)
        ref = moves / seconds
        print(f"{'(reference: built-in greedy bots)':50} {ref:8.0f}  {defaults}", flush=True)
        for kit in args.kits:
            wall = cpu = float("nan")
            if not args.no_build:
                wall, cpu = build(root, kit)
            moves, seconds, defaults = measure(kit, args.hands, args.seed, root)
            print(
                f"{kit:12} {wall:8.0f} {cpu:11.0f} {moves:7d} {seconds:8.2f} "
                f"{moves / seconds:8.0f}  {defaults}   {moves / seconds / ref:.2f} x reference",
                flush=True,
            )


def batch_vs_live(args: argparse.Namespace) -> None:
    """Each kit live and batched, alternating, with the greedy reference each round."""
    for kit in args.kits:
        if not args.no_build:
            build(ROOT, kit)
    print(f"{'round':>5} {'kit':12} {'live moves/s':>12} {'batched moves/s':>15} {'ratio':>6}")
    ratios: dict[str, list[float]] = {kit: [] for kit in args.kits}
    for r in range(1, args.rounds + 1):
        moves, seconds, _ = measure("greedy", args.hands, args.seed)
        print(f"{r:5d} {'(reference)':12} {moves / seconds:12.0f}", flush=True)
        for kit in args.kits:
            order = (False, True) if r % 2 else (True, False)
            rates = {}
            for batch in order:
                moves, seconds, defaults = measure(kit, args.hands, args.seed, batch=batch)
                if defaults:
                    print(f"      {kit}: {defaults} default actions (batch={batch})")
                rates[batch] = moves / seconds
            ratio = rates[True] / rates[False]
            ratios[kit].append(ratio)
            line = f"{r:5d} {kit:12} {rates[False]:12.0f} {rates[True]:15.0f} {ratio:6.2f}"
            print(line, flush=True)
    for kit, rs in ratios.items():
        rs.sort()
        print(f"{kit}: batched/live median {rs[len(rs) // 2]:.2f} (range {rs[0]:.2f}-{rs[-1]:.2f})")


if __name__ == "__main__":
    main()
