#!/usr/bin/env python3
"""What the stdio bridge costs: stdio bots against a gRPC bot of the same strategy.

Three figures per bot, read from the match logs and the bridge's stderr (start-up is
left out), each the median over ``--rounds`` runs that interleave the bots, since a
shared machine's load changes from minute to minute:

1. **latency**: the bot alone at seat 0 against three built-in greedy bots (in the
   referee's process): the referee's own ``elapsed_ms`` from sending each prompt to
   receiving the answer, median and mean over the seat's turns (whole milliseconds);
2. **bridge CPU per line**: in that match, the bridge's CPU time (user + system, from its
   last stderr line) less what it spends starting and stopping, per line relayed either
   way. CPU time hardly depends on what else the machine runs;
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
UNREACHABLE = ["--address", "127.0.0.1:1", "--token", "t"]
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


def bridge_cpu(log: Path, seat: int) -> tuple[float, int] | None:
    """The bridge's CPU seconds and the lines it relayed, from its last stderr line."""
    path = log.parent / f"{log.stem}.seat{seat}.stderr"
    text = path.read_text(errors="replace") if path.exists() else ""
    found = re.search(r"(\d+) lines to the bot, (\d+) from it.*bridge CPU ([\d.]+) s", text)
    if not found:
        return None
    return float(found[3]), int(found[1]) + int(found[2])


def startup_cpu() -> float:
    """The bridge's CPU for starting alone (Python, gRPC, the bot) and stopping at once."""
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "stdio-bot", *UNREACHABLE, "--", "true"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    found = re.search(r"bridge CPU ([\d.]+) s", done.stderr)
    if not found:
        raise SystemExit(f"no CPU figure from the bridge:\n{done.stderr}")
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
    rates: dict[str, list[float]] = {b: [] for b in args.bots}
    cpu: dict[str, list[float]] = {b: [] for b in args.bots}
    defaults = dict.fromkeys(args.bots, 0)
    start = statistics.median(startup_cpu() for _ in range(3))
    for r in range(args.rounds):
        for name in args.bots:
            log = play([BOTS[name], "greedy", "greedy", "greedy"], args.hands, args.seed)
            alone, _ = actions(log)
            mine = [ms for seat, ms, cause in alone if seat == 0 and not cause]
            medians[name].append(statistics.median(mine))
            means[name].append(statistics.fmean(mine))
            used = bridge_cpu(log, 0)
            if used is not None:
                cpu[name].append((used[0] - start) / used[1] * 1e6)
            four, seconds = actions(play([BOTS[name]] * 4, args.hands, args.seed))
            rates[name].append(len(four) / seconds)
            defaults[name] += sum(1 for *_, cause in alone + four if cause)
            print(f"round {r + 1}: {name} done", file=sys.stderr, flush=True)
    print(f"bridge start-up and stop, CPU: {start:.2f} s (median of 3)")
    print(
        f"{'bot':13} {'median ms':>9} {'mean ms':>7} {'bridge µs/line':>14} "
        f"{'moves/s (4 bots)':>16}  defaults   (medians over {args.rounds} rounds)"
    )
    for name in args.bots:
        per_line = f"{statistics.median(cpu[name]):14.0f}" if cpu[name] else f"{'-':>14}"
        print(
            f"{name:13} {statistics.median(medians[name]):9.1f} "
            f"{statistics.median(means[name]):7.2f} {per_line} "
            f"{statistics.median(rates[name]):16.0f}  {defaults[name]}"
        )


if __name__ == "__main__":
    main()
