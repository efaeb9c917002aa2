#!/usr/bin/env python3
"""How long ``referee serve`` takes to exit after SIGTERM with a crowd of spectators that
never read (tests/server/test_resources.py's memory test, which once timed out here).

    python bench/bench_server_stop.py                  # 200 spectators, 3 rounds
    python bench/bench_server_stop.py --spectators 200 --hands 100 --rounds 3

Each round starts a real ``referee serve``, creates a match, opens the spectators'
WatchMatch streams in a process of their own (tests/server/crowd.py), freezes that
process (SIGSTOP: readers that never read), plays the match with four greedy bots, then
sends SIGTERM and times the exit, in three cases, alternating:

- ``none``: no spectators (the same run's reference);
- ``killed``: the frozen crowd SIGKILLed before the SIGTERM (what the test does);
- ``frozen``: the crowd still frozen at the SIGTERM, its streams open;
- ``mid-match``: SIGTERM while the match is still being played, the crowd frozen.

Prints the seconds from SIGTERM to exit, and the server's CPU seconds meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, cpu_seconds

from referee.bots import GreedyBot, play_seat
from referee.client.channels import organiser_channel
from referee.protocol import common, match_service, match_service_grpc

CROWD = ROOT / "tests" / "server" / "crowd.py"
CASES = ("none", "killed", "frozen", "mid-match")


async def one(case: str, spectators: int, hands: int) -> tuple[float, float]:
    """(seconds from SIGTERM to exit, the server's CPU seconds meanwhile)."""
    with tempfile.TemporaryDirectory() as tmp:
        serve = subprocess.Popen(  # noqa: ASYNC220 (a process that outlives the calls)
            [
                *(sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0"),
                *("--log-dir", f"{tmp}/logs", "--state-dir", f"{tmp}/state"),
                *("--log-level", "error", "--max-spectators-per-match", str(spectators)),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        crowd = None
        try:
            assert serve.stdout is not None
            address = (await asyncio.to_thread(serve.stdout.readline)).split()[3].rstrip(";")
            token = Path(tmp, "state", "organiser-token").read_text().strip()  # noqa: ASYNC240
            async with organiser_channel(address, token) as channel:
                created = await match_service_grpc.MatchServiceStub(channel).CreateMatch(
                    match_service.CreateMatchRequest(
                        profile="pusoy-dos",
                        hands=hands,
                        seed="stop",
                        time_control=common.TimeControl(connect_timeout_ms=30_000),
                    )
                )
            if case != "none":
                crowd = subprocess.Popen(  # noqa: ASYNC220
                    [sys.executable, str(CROWD), address, created.match_id, str(spectators)],
                    stdout=subprocess.PIPE,
                    text=True,
                    cwd=ROOT,
                )
                assert crowd.stdout is not None
                assert (await asyncio.to_thread(crowd.stdout.readline)).startswith("watching")
                os.kill(crowd.pid, signal.SIGSTOP)
            seats = [
                asyncio.create_task(play_seat(GreedyBot(), address, t)) for t in created.seat_tokens
            ]
            if case == "mid-match":
                await asyncio.sleep(2)
            else:
                await asyncio.wait_for(asyncio.gather(*seats), 300)
            if case == "killed" and crowd is not None:
                crowd.kill()
                crowd.wait()
            cpu = cpu_seconds(serve.pid)
            cpu_now = cpu
            start = time.monotonic()
            serve.terminate()
            while serve.poll() is None:
                cpu_now = cpu_seconds(serve.pid)  # a zombie's /proc entry stays until reaped
                await asyncio.sleep(0.01)
            took = time.monotonic() - start
            for s in seats:
                s.cancel()
            await asyncio.gather(*seats, return_exceptions=True)
            return took, cpu_now - cpu
        finally:
            if crowd is not None:
                with contextlib.suppress(ProcessLookupError):
                    crowd.kill()
                crowd.wait()
            if serve.poll() is None:
                serve.kill()
                serve.wait()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spectators", type=int, default=200)
    ap.add_argument("--hands", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    args = ap.parse_args()
    print(
        f"load average {os.getloadavg()[0]:.1f}; {args.spectators} spectators, "
        f"{args.hands} hands of pusoy-dos"
    )
    print(f"{'round':>5} {'case':10} {'exit s':>7} {'CPU s':>6}")
    for r in range(1, args.rounds + 1):
        order = args.cases if r % 2 else list(reversed(args.cases))
        for case in order:
            took, cpu = await one(case, args.spectators, args.hands)
            print(f"{r:5d} {case:10} {took:7.2f} {cpu:6.2f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
