#!/usr/bin/env python3
"""How much of the referee server's CPU per move is the match step, and what the ratio to
the bare reference would be if the step cost nothing.

Runs bench_server's rounds (the referee, then the bare reference with the same message
pattern) with py-spy sampling the referee server's threads. The step's CPU per move is
its share of the main thread's samples times the main thread's CPU (from /proc); the
rest of the server's CPU (the stream handlers, gRPC's per-message work, its poller
thread, asyncio) is what a referee pays whatever its step costs. So

    ratio with a free step = (referee CPU - step CPU) / bare CPU

is the lowest CPU-per-move ratio any faster step could reach on this service layer.

Needs py-spy (``pip install py-spy``; on PATH, beside this Python, or --py-spy) and the
right to trace a child process (root, or kernel.yama.ptrace_scope 0 or 1).

    python bench/bench_step_share.py                     # 1 and 50 matches, 3 rounds
    python bench/bench_step_share.py --matches 50 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_server as bs
from _common import cpu_seconds

STEP_FRAME = "MatchHost.step (referee/server/host.py"
SAMPLES_PER_S = 100


def step_share(raw: Path, main_tid: int) -> float:
    """The share of the main thread's samples (py-spy ``--threads`` raw) inside the step."""
    total = step = 0
    head = f"thread ({main_tid}):"
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack.startswith(head):
            continue
        total += int(count)
        if STEP_FRAME in stack:
            step += int(count)
    if total == 0:
        raise RuntimeError(f"py-spy recorded no sample of the server's main thread in {raw}")
    if step == 0:
        raise RuntimeError(f"no sample inside {STEP_FRAME!r}: was the step renamed?")
    return step / total


class Spied:
    """bench_server's hooks: py-spy on the next server started, the main thread's CPU at
    each of the round's two CPU readings."""

    def __init__(self, py_spy: str) -> None:
        self.py_spy = py_spy
        self.raw: Path | None = None
        self.spy: asyncio.subprocess.Process | None = None
        self.pid = 0
        self.main_cpu: list[float] = []
        self._start, self._cpu = bs.start_server, bs.cpu_seconds
        bs.start_server, bs.cpu_seconds = self.start_server, self.cpu_seconds

    def arm(self, raw: Path) -> None:
        self.raw, self.main_cpu = raw, []

    async def start_server(self, argv: list[str]) -> tuple[asyncio.subprocess.Process, str]:
        proc, address = await self._start(argv)
        if self.raw is not None:
            self.pid = proc.pid
            self.spy = await asyncio.create_subprocess_exec(
                *(self.py_spy, "record", "--threads", "-r", str(SAMPLES_PER_S), "-f", "raw"),
                *("-o", str(self.raw), "--pid", str(proc.pid)),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await asyncio.sleep(1.0)  # py-spy attached before the first move
        return proc, address

    def cpu_seconds(self, pid: int) -> float:
        if self.raw is not None and pid == self.pid:
            self.main_cpu.append(cpu_seconds(pid, tid=pid))
        return self._cpu(pid)

    async def finish(self) -> tuple[Path, float]:
        """The samples file and the main thread's CPU seconds over the round."""
        assert self.spy is not None and self.raw is not None
        await asyncio.wait_for(self.spy.wait(), 60)  # py-spy writes its file as the server exits
        raw, (before, after) = self.raw, self.main_cpu[:2]
        self.raw = self.spy = None
        return raw, after - before


async def measure(spied: Spied, matches: int, hands: int, rounds: int) -> None:
    print(f"== {matches} match(es) at once, {hands} hand(s) each")
    rows: dict[str, list[float]] = {}
    for rnd in range(rounds):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            spied.arm(tmp / "spy.raw")
            ref, recs = await bs.referee_round(matches, hands, tmp, record=True)
            raw, main_cpu = await spied.finish()
            share = step_share(raw, spied.pid)
            bare = await bs.bare_round(
                matches, bs.pattern_from(recs[0], ref["moves"], matches), tmp
            )
        moves = ref["moves"]
        ref_us = ref["cpu"] / moves * 1e6
        bare_us = bare["cpu"] / bare["moves"] * 1e6
        step_us = share * main_cpu / moves * 1e6
        row = {
            "referee CPU us/move": ref_us,
            "bare CPU us/move": bare_us,
            "referee main thread us/move": main_cpu / moves * 1e6,
            "step share of the main thread": share,
            "step CPU us/move": step_us,
            "CPU ratio referee/bare": ref_us / bare_us,
            "CPU ratio with a free step": (ref_us - step_us) / bare_us,
        }
        print(f"round {rnd + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()))
        for k, v in row.items():
            rows.setdefault(k, []).append(v)
    print(f"-- {matches} match(es): median (min-max) over {rounds} rounds")
    for name, values in rows.items():
        fmt = ".0f" if "us/move" in name else ".2f"
        print(f"  {name:32} {bs.spread(values, fmt)}")


def find_py_spy(given: str | None) -> str:
    for candidate in (given, shutil.which("py-spy"), str(Path(sys.executable).parent / "py-spy")):
        if candidate and Path(candidate).is_file():
            return candidate
    sys.exit("bench_step_share: py-spy not found: pip install py-spy, or give --py-spy PATH")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, nargs="+", default=[1, 50])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--py-spy", help="the py-spy program (default: on PATH or beside Python)")
    args = ap.parse_args()
    spied = Spied(find_py_spy(args.py_spy))
    for matches in args.matches:
        hands = 20 if matches == 1 else 2  # as bench_server: ~the same moves either way
        asyncio.run(measure(spied, matches, hands, args.rounds))


if __name__ == "__main__":
    main()
