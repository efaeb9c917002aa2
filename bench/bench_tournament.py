#!/usr/bin/env python3
"""Tournament throughput: matches per minute through the whole runner.

Each configuration is a real tournament in a fresh temporary folder (in-process referee
over loopback gRPC, bots as real clients, every log moved, summarized, verified and
recorded with fsync, standings rewritten after every match). Three series:

1. concurrency: four built-in bots (in-process) at each ``--concurrency`` value;
2. spawned: the same with every bot a spawned ``examples/*_bot.py`` process (sandboxed
   where the machine can; ``--sandbox on|off`` to compare);
3. bots: round robin over N built-in bots for each ``--bots`` value, one round of
   rotations (4 x C(N, 4) matches), at the highest concurrency.

Not a test; nothing depends on its figures. See bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import math
import os
import platform
import tempfile
import time
from pathlib import Path

from referee.service.logging import configure_logging
from referee.tournament.director import Tournament
from referee.tournament.progress import Progress
from referee.tournament.toml_reader import load_config

ROOT = Path(__file__).resolve().parents[1]


def write_config(
    folder: Path,
    bots: list[tuple[str, str]],
    *,
    rounds: int,
    hands: int,
    concurrency: int,
    verify: bool,
    fmt: str = "round-robin",
    sandbox: str = "auto",
) -> Path:
    lines = [
        "[tournament]",
        'seed = "bench"',
        f'format = "{fmt}"',
        f"rounds = {rounds}",
        f"concurrency = {concurrency}",
        'output = "out"',
        "[rules]",
        'profile = "pusoy-dos"',
        f"hands = {hands}",
        "[time]",
        "turn_time_ms = 5000",
        "[referee]",
        f"verify_logs = {'true' if verify else 'false'}",
        "[sandbox]",
        f"enabled = {json.dumps({'on': True, 'off': False}.get(sandbox, sandbox))}",
    ]
    for name, how in bots:
        lines += ["[[bot]]", f'name = "{name}"', how]
    path = folder / "bench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def builtin(i: int) -> tuple[str, str]:
    kind = ("greedy", "random")[i % 2]
    return (f"{kind}{i}", f'builtin = "{kind}"')


def spawned(i: int) -> tuple[str, str]:
    kind = ("greedy", "random")[i % 2]
    script = ROOT / "examples" / f"{kind}_bot.py"
    return (f"{kind}{i}", f'command = "{{python}} {script}"')


def run_one(
    bots: list[tuple[str, str]],
    *,
    rounds: int,
    hands: int,
    concurrency: int,
    verify: bool,
    sandbox: str = "auto",
) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_config(
            Path(tmp),
            bots,
            rounds=rounds,
            hands=hands,
            concurrency=concurrency,
            verify=verify,
            sandbox=sandbox,
        )
        config = load_config(path)
        tournament = Tournament(config, progress=Progress(io.StringIO(), tty=False))
        t0 = time.perf_counter()
        summary = asyncio.run(tournament.run())
        seconds = time.perf_counter() - t0
        if summary.failed or summary.done != summary.total:
            raise SystemExit(f"bench tournament failed: {summary}")
        return summary.done, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=4, help="hands per match (default 4)")
    parser.add_argument(
        "--rounds", type=int, default=10, help="deal groups for the 4-bot series (default 10)"
    )
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--bots", type=int, nargs="+", default=[4, 5, 6, 7])
    parser.add_argument(
        "--spawned-rounds", type=int, default=3, help="deal groups for the spawned series"
    )
    parser.add_argument("--no-verify", action="store_true", help="skip log verification")
    parser.add_argument(
        "--sandbox",
        choices=["auto", "on", "off"],
        default="auto",
        help="[sandbox] enabled for the spawned series (default auto: on where it works)",
    )
    parser.add_argument("--skip", nargs="*", default=[], choices=["concurrency", "spawned", "bots"])
    args = parser.parse_args()
    verify = not args.no_verify
    configure_logging("json", "warning")
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, nproc {os.cpu_count()}"
    )
    print(f"# hands per match {args.hands}, log verification {'on' if verify else 'off'}")
    print("| series | bots | concurrency | matches | seconds | matches/min | ms/match |")
    print("|---|---|---|---|---|---|---|")

    def row(series: str, n: int, conc: int, done: int, secs: float) -> None:
        print(
            f"| {series} | {n} | {conc} | {done} | {secs:.1f} | {done / secs * 60:.0f} "
            f"| {secs / done * 1000:.0f} |",
            flush=True,
        )

    if "concurrency" not in args.skip:
        for conc in args.concurrency:
            done, secs = run_one(
                [builtin(i) for i in range(4)],
                rounds=args.rounds,
                hands=args.hands,
                concurrency=conc,
                verify=verify,
            )
            row("built-in, in-process", 4, conc, done, secs)
    if "spawned" not in args.skip:
        for conc in args.concurrency:
            done, secs = run_one(
                [spawned(i) for i in range(4)],
                rounds=args.spawned_rounds,
                hands=args.hands,
                concurrency=conc,
                verify=verify,
                sandbox=args.sandbox,
            )
            row(f"spawned processes (sandbox {args.sandbox})", 4, conc, done, secs)
    if "bots" not in args.skip:
        conc = max(args.concurrency)
        for n in args.bots:
            done, secs = run_one(
                [builtin(i) for i in range(n)],
                rounds=1,
                hands=args.hands,
                concurrency=conc,
                verify=verify,
            )
            assert done == 4 * math.comb(n, 4)
            row("round robin, built-in", n, conc, done, secs)


if __name__ == "__main__":
    main()
