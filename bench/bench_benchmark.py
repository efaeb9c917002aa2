#!/usr/bin/env python3
"""What a benchmark run costs and how precise it is, for a Python kit bot (the greedy
sample, spawned in its jail): ``referee benchmark`` run as a user runs it, timed.

    nice -n 10 .venv/bin/python bench/bench_benchmark.py --quick            # the quick run
    nice -n 10 .venv/bin/python bench/bench_benchmark.py --deals 2          # a slice of the default

Prints the wall time, the matches, the score's 95% half-width and standard error; for a
slice of the default run (``--deals`` below the pool's default) also the default run's
expected wall time and half-width (the cost is linear in deals; the standard error
narrows as 1/sqrt(deals)). The machine's load average is printed beside them: on a shared machine
wall times are noisy.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOT = "{python} examples/greedy_bot.py --address={address} --token={token}"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--deals", type=int)
    ap.add_argument("--bot", default=BOT)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from referee.benchmark.pool import load_pool

    pool = load_pool()
    deals = args.deals or (pool.quick_deals if args.quick else pool.default_deals)
    with tempfile.TemporaryDirectory(prefix="bench-benchmark-") as tmp:
        out = Path(tmp) / "run"
        cmd = [
            sys.executable,
            "-m",
            "referee.cli",
            "benchmark",
            "--no-page",
            "--deals",
            str(deals),
            "--out",
            str(out),
            "--name",
            "kit-greedy",
            args.bot,
        ]
        if args.quick:
            cmd.insert(4, "--quick")
        load = os.getloadavg()[0]
        started = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(proc.stderr)
        report = json.loads((out / "benchmark.json").read_text())
    score = report["score"]
    lo, hi = score["ci95"]
    half = (hi - lo) / 2 if lo is not None else math.inf
    kind = "quick" if args.quick else "default"
    print(
        f"{kind} run, {deals} deals, {report['matches']['total']} matches: {wall:.0f} s wall "
        f"(load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)"
    )
    print(
        f"score {score['rating']:.0f} [{lo}, {hi}]: 95% half-width {half:.0f}, se {score['se']:.1f}"
    )
    full = pool.quick_deals if args.quick else pool.default_deals
    if deals != full:
        scale = full / deals
        print(
            f"expected at {full} deals: {wall * scale / 60:.1f} min wall, half-width "
            f"{half / math.sqrt(scale):.0f} (from this slice)"
        )


if __name__ == "__main__":
    main()
