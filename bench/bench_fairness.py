#!/usr/bin/env python3
"""Fairness beside a hog: the other seats' turn times with and without a bot running 120
busy loops in sessions of their own, and what the jail's accounting costs.

1. Turn times (``--turns-ms 100 500``): ``referee match`` with three plain spawned bots
   (examples/random_bot.py) and a fourth seat that is, in turn, a plain bot (the
   reference) and the hog (tests/sandbox/bots/hog_bot.py, PUSOY_HOG_LOOPS=120), the
   defaults of every limit; on each host of ``--hosts``: ``root`` (the full jail, cgroup
   v1), ``root-no-cgroups`` (the light jail as root with /sys/fs/cgroup hidden in a
   private mount namespace: the referee's own accounting), ``root-cgroup2`` (cgroup v1
   hidden, the unified hierarchy mounted alone). From each log: the three plain seats'
   timeouts and the 95th percentile of their turns' wall times (prompt to answer), the
   ratio hog/reference, and why the hog was stopped. The two runs of a pair alternate,
   so that both see the same load.
2. The accounting's cost (``--cost``): one jail per mode (cgroup v1, a cgroup v2 group,
   the namespace alone) around a bot that sleeps; the microseconds of one measurement
   (every 50 ms while a bot runs) and of one stop-and-continue (once per turn), beside
   the same run's cost of a referee's decision (a turn of the rules engine, for scale).
3. Memory overshoot (``--memory``): a bot whose four processes touch memory as fast as
   they can, against a 1,024 MB limit, in the light jail (the referee's accounting):
   what the jail measured when it stopped the bot, over the limit.

    .venv/bin/python bench/bench_fairness.py --hosts root root-no-cgroups --turns-ms 100 500
    .venv/bin/python bench/bench_fairness.py --cost --memory --hosts
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.log.reader import read_log  # noqa: E402
from referee.log.summary import summarize_log  # noqa: E402
from referee.sandbox import Level, SandboxLimits, Support, probe, probe_light  # noqa: E402
from referee.sandbox.jailer import Jailer  # noqa: E402
from referee.sandbox.view import folder_view  # noqa: E402
from referee.table.procs import BotProcess  # noqa: E402

HOG = ROOT / "tests" / "sandbox" / "bots" / "hog_bot.py"
PLAIN = ROOT / "examples" / "random_bot.py"
HIDE = {
    "root": "",
    "root-no-cgroups": "mount -t tmpfs none /sys/fs/cgroup",
    "root-cgroup2": "mount -t tmpfs none /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup",
}


def referee(host: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if HIDE[host]:
        script = f'{HIDE[host]} && exec "$@"'
        prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"]
    return subprocess.run(
        [*prefix, sys.executable, "-m", "referee.cli", *args],
        capture_output=True, text=True, cwd=cwd, timeout=1800, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def turns_of(log: Path, seats: set[int]) -> list[int]:
    """The wall times (ms) of the seats' own answers."""
    out = []
    for line in read_log(log).lines:
        ev = line.entry.event
        kind = ev.WhichOneof("kind")
        if kind in ("played", "passed"):
            body = getattr(ev, kind)
            if body.seat in seats and not body.default_cause:
                out.append(body.elapsed_ms)
    return out


def p95(values: list[int]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else float("nan")


def one_match(host: str, turn_ms: int, hog: bool, hands: int, folder: Path) -> dict:
    first = "env PUSOY_HOG_LOOPS=120 {python} hog_bot.py" if hog else "{python} random_bot.py"
    runs = folder / ("hog" if hog else "plain")
    args = ["match", "--hands", str(hands), "--turn-time-ms", str(turn_ms),
            "--log-dir", str(runs), "--bot", first]  # fmt: skip
    args += [a for _ in range(3) for a in ("--bot", "{python} random_bot.py")]
    t0 = time.monotonic()
    done = referee(host, args, folder)
    wall = time.monotonic() - t0
    logs = sorted(runs.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    if not logs:
        raise SystemExit(f"no log: {done.stdout}{done.stderr}")
    summary = summarize_log(logs[-1])
    others = {1, 2, 3}
    return {
        "timeouts": sum(summary.seats[s].timeouts for s in others),
        "p95": p95(turns_of(logs[-1], others)),
        "turns": len(turns_of(logs[-1], others)),
        "cause": summary.seats[0].gone_cause,
        "wall": wall,
    }


def turn_times(hosts: list[str], turns_ms: list[int], hands: int, rounds: int) -> None:
    print("1. the plain seats beside the hog (120 loops), against the same run without it")
    for host in hosts:
        for turn_ms in turns_ms:
            rows = []
            for _ in range(rounds):
                folder = Path(tempfile.mkdtemp(prefix="pusoy-fair-", dir="/var/tmp"))
                try:
                    shutil.copy(HOG, folder / "hog_bot.py")
                    shutil.copy(PLAIN, folder / "random_bot.py")
                    plain = one_match(host, turn_ms, False, hands, folder)
                    hog = one_match(host, turn_ms, True, hands, folder)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                rows.append((plain, hog))
            for plain, hog in rows:
                print(
                    f"  {host:16} {turn_ms:4} ms turns: plain seats' timeouts "
                    f"{hog['timeouts']} beside the hog ({plain['timeouts']} without), p95 "
                    f"{hog['p95']:.0f} ms vs {plain['p95']:.0f} ms: ratio "
                    f"{hog['p95'] / plain['p95']:.2f} ({hog['turns']} and {plain['turns']} "
                    f"turns); the hog: {hog['cause'] or 'not stopped'}",
                    flush=True,
                )


MODES = ("cgroup v1", "cgroup v2", "namespace")


def support_of(mode: str) -> Support | None:
    if mode == "cgroup v1":
        support = probe()
        return support if support.level is Level.FULL else None
    light = probe_light()
    if not light.ok or (mode == "cgroup v2" and light.cgroups2 is None):
        return None
    if mode == "namespace":
        return Support(Level.LIGHT, light.missing, light.bwrap, light.version)
    return light


async def cost(samples: int) -> None:
    from referee.rules import HandState, Rules, deal  # the scale: one turn of the engine

    print("2. the accounting's cost, per measurement (every 50 ms while a bot runs) and per turn")
    rules = Rules.for_profile("big-two")
    t0 = time.perf_counter()
    for i in range(samples):  # a new deal each time: nothing cached but the rules' tables
        hands = deal(f"bench-{i}", 1)
        opening = 1 << rules.opening_card
        leader = next(s for s in range(4) if hands[s] & opening)
        HandState(rules, hands, leader, opening).legal_plays()
    engine_us = (time.perf_counter() - t0) / samples * 1e6
    for mode in MODES:
        support = support_of(mode)
        if support is None:
            print(f"  {mode}: not available here")
            continue
        folder = Path(tempfile.mkdtemp(prefix="pusoy-cost-"))
        jailer = Jailer(support, lambda _, f=folder: folder_view(f), SandboxLimits())
        jailer.listen_addresses()
        assert jailer.socket is not None
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(jailer.socket.path))
        listener.listen()
        jailer.opened("127.0.0.1:40125")
        jail = jailer.jail("sleeper", ["/bin/sh", "-c", "sleep 600"], {})
        proc = await BotProcess.spawn([], env={}, cwd=None, stderr_path=folder / "out", jail=jail)
        try:
            for _ in range(500):  # until bubblewrap has said which namespace
                if jail.cpu_ns() is not None:
                    break
                await asyncio.sleep(0.01)
            t0 = time.perf_counter()
            for _ in range(samples):
                jail.check_breach()  # one measurement
            measure_us = (time.perf_counter() - t0) / samples * 1e6
            t0 = time.perf_counter()
            for _ in range(samples // 10):
                jail.turn(False)
                jail.turn(True)
            turn_us = (time.perf_counter() - t0) / (samples // 10) * 1e6
        finally:
            await proc.stop(0)
            listener.close()
            jailer.close()
            shutil.rmtree(folder, ignore_errors=True)
        print(
            f"  {mode:10}: one measurement {measure_us:.0f} us, one stop and continue "
            f"{turn_us:.0f} us; a turn of 100 ms costs {turn_us + 2 * measure_us:.0f} us "
            f"(beside a deal and its leader's legal plays: {engine_us:.0f} us)"
        )


def memory(hosts: list[str]) -> None:
    print("3. memory: four processes touching memory as fast as they can, limit 1,024 MB")
    code = (
        "import os\n"
        "for _ in range(4):\n"
        "    if os.fork() == 0:\n"
        "        b = bytearray(600 << 20)\n"
        "        for i in range(0, len(b), 4096): b[i] = 1\n"
        "        os.pause()\n"
        "os.wait()\n"
    )
    for host in hosts:
        folder = Path(tempfile.mkdtemp(prefix="pusoy-mem-", dir="/var/tmp"))
        try:
            (folder / "eat.py").write_text(code)
            args = [
                "match",
                "--hands",
                "1",
                "--log-dir",
                "runs",
                "--bot",
                "/usr/bin/python3 eat.py",
            ]
            args += ["--bot", "greedy", "--bot", "greedy", "--bot", "greedy"]
            done = referee(host, args, folder)
            found = re.search(
                r"memory: ([\d,]+) MB across (\d+) processes, limit ([\d,]+)", done.stderr
            )
            kernel = "the kernel's limit" in done.stderr
            if found:
                got, limit = int(found[1].replace(",", "")), int(found[3].replace(",", ""))
                over = got - limit
                print(f"  {host:16}: stopped at {got:,} MB measured, {over:+,} MB over the limit")
            elif kernel:
                print(f"  {host:16}: the kernel stopped it at its limit (cgroup)")
            else:
                print(f"  {host:16}: not stopped? {done.stderr[-400:]}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--hosts", nargs="*", default=["root", "root-no-cgroups"], choices=list(HIDE)
    )
    parser.add_argument("--turns-ms", nargs="*", type=int, default=[100, 500])
    parser.add_argument("--hands", type=int, default=2)
    parser.add_argument(
        "--rounds", type=int, default=1, help="pairs of matches per host and turn time"
    )
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.node()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    if args.hosts and args.turns_ms:
        turn_times(args.hosts, args.turns_ms, args.hands, args.rounds)
    if args.cost:
        asyncio.run(cost(args.samples))
    if args.memory:
        memory(args.hosts or ["root-no-cgroups"])


if __name__ == "__main__":
    main()
