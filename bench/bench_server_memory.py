#!/usr/bin/env python3
"""How the referee's memory grows with the matches it has finished.

A long-running ``referee serve`` plays thousands of matches; what it keeps of each
finished one must stay small. This starts a referee in this process, plays batches of
matches of four built-in greedy bots (in the same process, over loopback gRPC), and
prints the resident set size after each batch and the growth per finished match after
the first batch (which pays for imports, caches and gRPC's own start-up). The reference
is the same process before its first match.

    python bench/bench_server_memory.py                     # 4 batches of 25 5-hand matches
    python bench/bench_server_memory.py --batches 8 --hands 20
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
import tempfile
from pathlib import Path

import structlog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "python"))

from referee.bots import GreedyBot, play_seat  # noqa: E402
from referee.protocol import match_service, match_service_grpc  # noqa: E402
from referee.server.app import RefereeServer  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


async def run(batches: int, per_batch: int, hands: int, log_dir: Path) -> None:
    server = RefereeServer("127.0.0.1:0", log_dir)
    await server.start()
    try:
        async with server.organiser_channel() as channel:
            organiser = match_service_grpc.MatchServiceStub(channel)
            gc.collect()
            base = rss_mb()
            print(f"reference: {base:.1f} MB before the first match")
            done = 0
            first: float | None = None  # after the first batch: start-up costs are paid
            for _ in range(batches):
                for _ in range(per_batch):
                    created = await organiser.CreateMatch(
                        match_service.CreateMatchRequest(
                            profile="big-two", hands=hands, seed=f"memory-{done}"
                        )
                    )
                    await asyncio.gather(
                        *(play_seat(GreedyBot(), server.address, t) for t in created.seat_tokens)
                    )
                    done += 1
                gc.collect()
                now = rss_mb()
                line = f"{done:5d} matches finished: {now:7.1f} MB (+{now - base:.1f} MB)"
                if first is None:
                    first = now
                else:
                    marginal = (now - first) * 1024 / (done - per_batch)
                    line += f", {marginal:.1f} KB per match after the first batch"
                print(f"{line}; {len(server.registry.matches)} in the registry")
    finally:
        await server.stop(grace=1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--per-batch", type=int, default=25)
    parser.add_argument("--hands", type=int, default=5)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args.batches, args.per_batch, args.hands, Path(tmp)))


if __name__ == "__main__":
    main()
