#!/usr/bin/env python3
"""``referee verify --tournament`` at two versions of the code, on the same folder, in one
run: the figure that says whether a change made an organiser's check of a whole
tournament faster or slower.

    python bench/bench_verify_tournament.py 1748dc0 HEAD --rounds 3
    python bench/bench_verify_tournament.py 1748dc0 HEAD --deal-groups 30 --jobs 1

Plays one round-robin tournament of four built-in bots (``--deal-groups`` groups of four
rotations, 8 hands each) into a temporary folder, then checks it with each version in
turn (``referee.cli`` with that version's worktree first on PYTHONPATH), alternating the
order round by round so that a noisy machine weighs on both alike. Prints each run's wall
and CPU seconds, and the medians' ratio to the first version (the reference).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_versions import checkout, remove

TOURNAMENT = """
[tournament]
name = "verify-bench"
seed = "verify-bench-2026"
format = "round-robin"
rounds = {groups}
seatings = "rotations"
concurrency = 4
output = "out"

[rules]
profile = "pusoy-dos"
hands = 8

[[bot]]
name = "greedy"
builtin = "greedy"

[[bot]]
name = "random"
builtin = "random"

[[bot]]
name = "greedy2"
builtin = "greedy"

[[bot]]
name = "random2"
builtin = "random"
"""

RUN = (
    "import sys, referee; from pathlib import Path; "
    "assert Path(referee.__file__).is_relative_to(sys.argv[1]), referee.__file__; "
    "from referee.cli import main; sys.exit(main(sys.argv[2:]))"
)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verify(tree: Path, folder: Path, jobs: int | None) -> tuple[float, float]:
    """Wall and CPU seconds of one ``referee verify --tournament`` by ``tree``'s code."""
    argv = ["verify", "--tournament", str(folder / "out")]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    cpu, started = children_cpu(), time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(tree), *argv],
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        cwd=folder,  # not this checkout: python -c puts the working folder first
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.monotonic() - started
    if done.returncode != 0 or not done.stdout.startswith("OK"):
        raise SystemExit(f"verify at {tree} failed: {done.stdout}{done.stderr}")
    return wall, children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revs", nargs=2, metavar="REV", help="the reference, then the change")
    parser.add_argument("--deal-groups", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="verify's --jobs (default: its own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        folder = Path(tmp)
        (folder / "t.toml").write_text(TOURNAMENT.format(groups=args.deal_groups))
        referee = Path(sys.executable).parent / "referee"
        played = subprocess.run(
            [str(referee), "tournament", str(folder / "t.toml")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if played.returncode != 0:
            raise SystemExit(f"the tournament failed: {played.stderr}")
        logs = len(list((folder / "out" / "logs").glob("*.jsonl")))
        trees = {rev: checkout(rev, folder / f"v{i}") for i, rev in enumerate(args.revs)}
        times: dict[str, list[tuple[float, float]]] = {rev: [] for rev in args.revs}
        try:
            print(f"== {logs} logs; versions {args.revs}; jobs {args.jobs or 'default'}")
            for rnd in range(args.rounds):
                order = args.revs if rnd % 2 == 0 else list(reversed(args.revs))
                for rev in order:
                    wall, cpu = verify(trees[rev], folder, args.jobs)
                    times[rev].append((wall, cpu))
                    print(f"round {rnd + 1} {rev}: {wall:.2f} s wall, {cpu:.2f} s CPU")
        finally:
            for tree in trees.values():
                remove(tree)
        ref = args.revs[0]
        base_wall = statistics.median(w for w, _ in times[ref])
        base_cpu = statistics.median(c for _, c in times[ref])
        for rev in args.revs:
            wall = statistics.median(w for w, _ in times[rev])
            cpu = statistics.median(c for _, c in times[rev])
            print(
                f"{rev}: median {wall:.2f} s wall ({wall / base_wall:.2f} of {ref}), "
                f"{cpu:.2f} s CPU ({cpu / base_cpu:.2f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
