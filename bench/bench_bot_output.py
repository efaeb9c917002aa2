"""What reading a bot's output costs the table's event loop, and a match, when it floods.

    .venv/bin/python bench/bench_bot_output.py                 # 5 s per case, then matches
    .venv/bin/python bench/bench_bot_output.py --seconds 10 --hands 6

Figures:

1. The event loop, for ``--seconds`` each, while one spawned process writes to its output
   (read by ``referee.table.output.BotOutput`` through its pipe): nothing (the reference),
   nothing but spinning on a CPU (a second reference: what any busy bot costs a loaded
   machine), chatty (a 60-byte line every millisecond), a flood (as fast as it can, far
   past the cap). For each: how late a 5 ms timer fires (median, 99th percentile, worst, in ms),
   this process's CPU seconds per second, and the bytes the bot wrote.
2. A match (``--hands`` hands, pusoy-dos, 1 s turns) of three built-in bots, which answer
   on the referee's own loop, and one spawned bot, once quiet (the reference) and once
   flooding its output from a thread for the whole match: the built-in seats' answer
   times as the log records them (median and worst ms), and the match's length.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.log.reader import read_log  # noqa: E402
from referee.match.settings import MatchSettings  # noqa: E402
from referee.rules import Rules  # noqa: E402
from referee.table.bots import BuiltinBot, CommandBot, Seat  # noqa: E402
from referee.table.procs import BotProcess  # noqa: E402
from referee.table.table import play_match  # noqa: E402

EVENTFUL = ROOT / "tests" / "view" / "bots" / "eventful_bot.py"
WRITERS = {
    "quiet": "import time\ntime.sleep({seconds})\n",
    "busy": "import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n",
    "chatty": (
        "import sys, time\nend = time.time() + {seconds}\nline = 'x' * 59 + '\\n'\n"
        "while time.time() < end:\n"
        "    sys.stdout.write(line); sys.stdout.flush(); time.sleep(0.001)\n"
    ),
    "flood": (
        "import os, time\nend = time.time() + {seconds}\nchunk = (b'flood ' * 1000 + b'\\n') * 10\n"
        "while time.time() < end:\n    os.write(1, chunk)\n"
    ),
}


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def loop_case(kind: str, seconds: float, folder: Path) -> dict[str, float]:
    script = WRITERS[kind].format(seconds=seconds)
    before = cpu()
    bot = await BotProcess.spawn(
        [sys.executable, "-c", script], env={}, cwd=None, stderr_path=folder / f"{kind}.out"
    )
    late: list[float] = []
    while bot.proc.returncode is None:
        t0 = time.perf_counter()
        await asyncio.sleep(0.005)
        late.append((time.perf_counter() - t0 - 0.005) * 1000)
    await bot.stop(1.0)
    used = cpu() - before
    late.sort()
    return {
        "median": statistics.median(late),
        "p99": late[int(len(late) * 0.99)],
        "worst": late[-1],
        "cpu": used / seconds,
        "bytes": bot.output.kept + bot.output.dropped,
    }


async def match_case(flood: bool, hands: int, folder: Path) -> dict[str, float]:
    mode = "flood" if flood else "chatty"
    env = (("PUSOY_FLOOD_REPORT", str(folder / "flooded.txt")),) if flood else ()
    seats = [
        Seat(mode, CommandBot(("{python}", str(EVENTFUL), mode), env=env)),
        Seat("greedy", BuiltinBot("greedy")),
        Seat("random", BuiltinBot("random")),
        Seat("greedy2", BuiltinBot("greedy")),
    ]
    rules = Rules.for_profile("pusoy-dos", {"match_end": f"hands {hands}"})
    settings = MatchSettings(rules=rules, turn_time_ms=1000, connect_timeout_ms=30_000)
    started = time.monotonic()
    report = await play_match(settings, seats, log_dir=folder / mode)
    took = time.monotonic() - started
    answers: list[int] = []
    for line in read_log(report.log_path).lines:
        event = line.entry.event
        kind = event.WhichOneof("kind")
        if kind in ("played", "passed"):
            body = getattr(event, kind)
            if body.seat != 0 and not body.default_cause:
                answers.append(body.elapsed_ms)
    return {
        "median": statistics.median(answers),
        "worst": max(answers),
        "seconds": took,
        "status": report.status == "finished",
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--hands", type=int, default=4)
    args = parser.parse_args()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("\n1. the event loop while a bot writes (5 ms timer lateness, ms)")
        print(f"{'case':<8} {'median':>7} {'p99':>7} {'worst':>7} {'cpu s/s':>8} {'bot wrote':>12}")
        for kind in ("quiet", "busy", "chatty", "flood"):
            r = await loop_case(kind, args.seconds, folder)
            note = "  (reference)" if kind in ("quiet", "busy") else ""
            print(
                f"{kind:<8} {r['median']:>7.2f} {r['p99']:>7.2f} {r['worst']:>7.2f} "
                f"{r['cpu']:>8.3f} {r['bytes'] / 2**20:>9.1f} MB{note}"
            )
        print(f"\n2. a {args.hands}-hand match: built-in seats' answer times (ms, from the log)")
        print(f"{'seat 0':<8} {'median':>7} {'worst':>7} {'match s':>8}")
        for flood in (False, True):
            r = await match_case(flood, args.hands, folder)
            name = "flood" if flood else "chatty"
            note = "" if flood else "  (reference)"
            print(f"{name:<8} {r['median']:>7.1f} {r['worst']:>7} {r['seconds']:>8.2f}{note}")
            if flood:
                wrote = int((folder / "flooded.txt").read_text())
                print(f"         (the flooding bot wrote {wrote / 2**20:.1f} MB; 1 MB kept)")


if __name__ == "__main__":
    asyncio.run(main())
