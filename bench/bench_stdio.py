#!/usr/bin/env python3
"""What the stdio bridge costs: stdio bots against a gRPC bot of the same strategy.

Three figures per bot, read from the match logs and the bridge's stderr (start-up is
left out), each the median over ``--rounds`` runs that interleave the bots, since a
shared machine's load changes from minute to minute:

1. **latency**: the bot alone at seat 0 against three built-in greedy bots (in the
   referee's process): the referee's own ``elapsed_ms`` from sending each prompt to
   receiving the answer, median and mean over the seat's turns (whole milliseconds);
2. **seat CPU**: in that match, the CPU time (user + system) of the seat's whole process
   tree, the bot and for a stdio bot its bridge, start-up included, measured by
   bench/cpu_of.py. CPU time depends far less than latency on what else the machine runs;
3. **moves/s**: four copies of the bot, one match: actions (played + passed) divided by
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
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.log import read_log  # noqa: E402

KIT = ROOT / "clients" / "stdio"
PY = sys.executable
BOTS = {
    "grpc-python": f"{PY} -m pusoy_client greedy",
    "stdio-python": f"stdio:{PY} {ROOT / 'examples' / 'stdio_bot.py'}",
    "stdio-c": f"stdio:{KIT / 'c' / 'bot'}",
    "stdio-perl": f"stdio:perl {KIT / 'perl' / 'bot.pl'}",
    "stdio-jq": f"stdio:sh {KIT / 'jq' / 'bot.sh'}",
}


def measured(bot: str) -> str:
    """The bot's command under bench/cpu_of.py (a stdio bot with its bridge spelled out)."""
    if bot.startswith("stdio:"):
        bot = f"{PY} -m referee.cli stdio-bot -- {bot.removeprefix('stdio:')}"
    return f"{PY} {ROOT / 'bench' / 'cpu_of.py'} {bot}"


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


def seat_cpu(log: Path, seat: int) -> float:
    """The CPU seconds bench/cpu_of.py reported for a seat (its bot and bridge)."""
    text = (log.parent / f"{log.stem}.seat{seat}.stderr").read_text(errors="replace")
    found = re.search(r"cpu_of: ([\d.]+) s CPU", text)
    if not found:
        raise SystemExit(f"no CPU figure for seat {seat} in {log.parent}")
    return float(found[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bots", nargs="+", default=list(BOTS), choices=list(BOTS))
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="runs of every bot, interleaved")
    ap.add_argument("--seed", default="bench-stdio")
    ap.add_argument("--no-build", action="store_true", help="assume clients/stdio is built")
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["bash", str(KIT / "build.sh")], check=True, stdout=subprocess.DEVNULL)
    medians: dict[str, list[float]] = {b: [] for b in args.bots}
    means: dict[str, list[float]] = {b: [] for b in args.bots}
    cpu: dict[str, list[float]] = {b: [] for b in args.bots}
    rates: dict[str, list[float]] = {b: [] for b in args.bots}
    defaults = dict.fromkeys(args.bots, 0)
    for r in range(args.rounds):
        for name in args.bots:
            log = play([measured(BOTS[name]), "greedy", "greedy", "greedy"], args.hands, args.seed)
            alone, _ = actions(log)
            mine = [ms for seat, ms, cause in alone if seat == 0 and not cause]
            medians[name].append(statistics.median(mine))
            means[name].append(statistics.fmean(mine))
            cpu[name].append(seat_cpu(log, 0))
            four, seconds = actions(play([BOTS[name]] * 4, args.hands, args.seed))
            rates[name].append(len(four) / seconds)
            defaults[name] += sum(1 for *_, cause in alone + four if cause)
            print(f"round {r + 1}: {name} done", file=sys.stderr, flush=True)
    print(
        f"{'bot':13} {'median ms':>9} {'mean ms':>7} {'seat CPU s':>10} "
        f"{'moves/s (4 bots)':>16}  defaults   (medians over {args.rounds} rounds)"
    )
    for name in args.bots:
        print(
            f"{name:13} {statistics.median(medians[name]):9.1f} "
            f"{statistics.median(means[name]):7.2f} {statistics.median(cpu[name]):10.2f} "
            f"{statistics.median(rates[name]):16.0f}  {defaults[name]}"
        )


if __name__ == "__main__":
    main()
