#!/usr/bin/env python3
"""What the stdio bridge costs: stdio bots against a gRPC bot of the same strategy.

Two figures per bot, both read from the match logs (start-up is left out):

1. **latency**: the bot alone at seat 0 against three built-in greedy bots (in the
   referee's process): the referee's own ``elapsed_ms`` from sending each prompt to
   receiving the answer, median and 90th percentile over the seat's turns;
2. **moves/s**: four copies of the bot, one match: actions (played + passed) divided by
   the time from the first deal to the end. Each stdio copy adds a bridge process, so on
   a small machine this shows the CPU the bridges take from the referee.

The reference is the Python starter kit's greedy bot as a spawned gRPC process
(``python -m pusoy_client greedy``); ``stdio-python`` is the same strategy in
examples/stdio_bot.py, so the difference between the two is the bridge's.

    python bench/bench_stdio.py                      # 20 hands of big-two per match
    python bench/bench_stdio.py --bots grpc-python stdio-c --hands 50
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.log import read_log  # noqa: E402

KIT = ROOT / "clients" / "stdio"
BOTS = {
    "grpc-python": f"{sys.executable} -m pusoy_client greedy",
    "stdio-python": f"stdio:{sys.executable} {ROOT / 'examples' / 'stdio_bot.py'}",
    "stdio-c": f"stdio:{KIT / 'c' / 'bot'}",
    "stdio-perl": f"stdio:perl {KIT / 'perl' / 'bot.pl'}",
    "stdio-jq": f"stdio:sh {KIT / 'jq' / 'bot.sh'}",
}


def play(bots: list[str], hands: int, seed: str) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="bench-stdio-"))
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
            str(tmp),
            "--turn-time-ms",
            "5000",
            "--connect-timeout-ms",
            "60000",
            *[a for b in bots for a in ("--bot", b)],
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"referee match failed:\n{done.stdout}\n{done.stderr}")
    return next(tmp.glob("*.jsonl"))


def actions(log: Path) -> tuple[list[tuple[int, int, int]], float]:
    """(seat, elapsed_ms, default cause) of every action, and the seconds of play."""
    lines = read_log(log).lines
    start = next(ln for ln in lines if ln.entry.event.HasField("hand_dealt")).entry.time
    out = []
    for ln in lines:
        ev = ln.entry.event
        body = ev.played if ev.HasField("played") else ev.passed if ev.HasField("passed") else None
        if body is not None:
            out.append((body.seat, body.elapsed_ms, body.default_cause))
    seconds = (lines[-1].entry.time.ToNanoseconds() - start.ToNanoseconds()) / 1e9
    return out, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bots", nargs="+", default=list(BOTS), choices=list(BOTS))
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--seed", default="bench-stdio")
    ap.add_argument("--no-build", action="store_true", help="assume clients/stdio is built")
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["bash", str(KIT / "build.sh")], check=True, stdout=subprocess.DEVNULL)
    print(
        f"{'bot':13} {'turns':>5} {'median ms':>9} {'p90 ms':>6} | "
        f"{'moves':>5} {'seconds':>7} {'moves/s':>7}  defaults"
    )
    for name in args.bots:
        alone, _ = actions(play([BOTS[name], "greedy", "greedy", "greedy"], args.hands, args.seed))
        mine = sorted(ms for seat, ms, cause in alone if seat == 0 and not cause)
        p90 = mine[int(0.9 * (len(mine) - 1))]
        four, seconds = actions(play([BOTS[name]] * 4, args.hands, args.seed))
        defaults = sum(1 for *_, cause in alone + four if cause)
        print(
            f"{name:13} {len(mine):5d} {statistics.median(mine):9.1f} {p90:6d} | "
            f"{len(four):5d} {seconds:7.2f} {len(four) / seconds:7.0f}  {defaults}",
            flush=True,
        )


if __name__ == "__main__":
    main()
