#!/usr/bin/env python3
"""The referee's throughput at two versions of the code, side by side in one run.

Checks out each git revision into a temporary worktree and runs ``bench_server.py``'s
referee round against it (``python -m referee.cli serve`` with that tree first on
PYTHONPATH), alternating the versions round by round together with the bare gRPC
reference, so that a noisy machine affects both alike. Prints each round and the
medians with their spread (min-max) of moves/s, server CPU per move, p99 latency, and
the ratio to the bare reference of the same round.

    python bench/bench_versions.py 6db8411 HEAD --matches 1 50 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_server as bs  # noqa: E402


def checkout(rev: str, into: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return into


def remove(tree: Path) -> None:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def compare(revs: list[str], matches: int, hands: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        trees = {rev: checkout(rev, Path(d) / f"v{i}") for i, rev in enumerate(revs)}
        results: dict[str, list[dict]] = {rev: [] for rev in revs}
        bare_results: list[dict] = []
        try:
            print(f"== {matches} match(es) at once, {hands} hand(s), big-two; versions {revs}")
            for rnd in range(rounds):
                order = revs if rnd % 2 == 0 else list(reversed(revs))
                pattern = None
                for rev in order:
                    os.environ["PYTHONPATH"] = str(trees[rev])
                    with tempfile.TemporaryDirectory() as t:
                        ref, recs = await bs.referee_round(matches, hands, Path(t), record=True)
                        if pattern is None:
                            pattern = bs.pattern_from(recs[0], ref["moves"], matches)
                    results[rev].append(ref)
                    print(f"round {rnd + 1} {rev:>10}: " + bs.show("referee", ref), flush=True)
                os.environ.pop("PYTHONPATH", None)
                assert pattern is not None
                with tempfile.TemporaryDirectory() as t:
                    bare = await bs.bare_round(matches, pattern, Path(t))
                bare_results.append(bare)
                print(f"round {rnd + 1} {'bare':>10}: " + bs.show("bare", bare), flush=True)
        finally:
            os.environ.pop("PYTHONPATH", None)
            for tree in trees.values():
                remove(tree)
    print(f"\nmedians over {rounds} rounds (min-max):")
    bare_rate = [b["moves"] / b["wall"] for b in bare_results]
    for rev in revs:
        rs = results[rev]
        rate = [r["moves"] / r["wall"] for r in rs]
        cpu = [r["cpu"] / max(1, r["moves"]) * 1e6 for r in rs]
        p99 = [bs.pct(r["lat"], 0.99) for r in rs]
        ratio = [a / b for a, b in zip(rate, bare_rate, strict=True)]
        print(
            f"  {rev:>10}: moves/s {bs.spread(rate, '.0f')},"
            f" server CPU/move {bs.spread(cpu, '.0f')} µs,"
            f" p99 {bs.spread(p99, '.1f')} ms, ratio to bare {bs.spread(ratio, '.2f')}"
        )
    cpu_b = [b["cpu"] / max(1, b["moves"]) * 1e6 for b in bare_results]
    rates = bs.spread(bare_rate, ".0f")
    print(f"  {'bare':>10}: moves/s {rates}, server CPU/move {bs.spread(cpu_b, '.0f')} µs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("revs", nargs=2, help="two git revisions, e.g. 6db8411 HEAD")
    ap.add_argument("--matches", type=int, nargs="+", default=[1, 50])
    ap.add_argument("--hands", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    for m in args.matches:
        asyncio.run(compare(args.revs, m, args.hands, args.rounds))


if __name__ == "__main__":
    main()
