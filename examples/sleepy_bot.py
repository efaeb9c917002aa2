#!/usr/bin/env python3
"""A greedy bot whose whole process now and then stalls past its deadline.

With probability ``PUSOY_SLEEPY_P`` (default 0.1) per prompt it blocks for the turn's
time plus ``PUSOY_SLEEPY_EXTRA_MS`` (default 200 ms) before answering, so the referee
plays the default action for it and counts a timeout; its late answer is then rejected
as stale. Useful to check that a slow bot only hurts itself (examples/tournament.toml).

It is written on the referee's own small client (referee.bots), not on a starter kit:
a kit answers with a fallback before the deadline when ``choose`` runs late, so a kit's
bot never shows the referee's timeout policy. Here the stall blocks everything, as a
frozen process would.

PUSOY_TOKEN=SEAT_TOKEN python examples/sleepy_bot.py --address 127.0.0.1:50051
(or PUSOY_ADDRESS and PUSOY_TOKEN in the environment, as tournaments set them)
"""

import argparse
import asyncio
import os
import random
import sys
import time

from referee.bots import play_seat
from referee.bots.strategies import Choice, GreedyBot
from referee.protocol import play_service


class SleepyBot(GreedyBot):
    name = "sleepy"

    def __init__(self) -> None:
        self.p = float(os.environ.get("PUSOY_SLEEPY_P", "0.1"))
        self.extra_ms = int(os.environ.get("PUSOY_SLEEPY_EXTRA_MS", "200"))
        self.rng = random.Random()

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        if self.rng.random() < self.p:
            # Blocks the only thread: nothing answers until the deadline has passed.
            time.sleep((prompt.turn_time_ms + prompt.time_bank_ms + self.extra_ms) / 1000)
        return super().choose(prompt)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default=os.environ.get("PUSOY_ADDRESS", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("PUSOY_TOKEN", ""))
    args = parser.parse_args()
    if not args.token:
        parser.error("a seat token is required (--token or PUSOY_TOKEN)")
    outcome = asyncio.run(play_seat(SleepyBot(), args.address, args.token))
    print(f"sleepy: match {outcome.match_id} over, seat {outcome.seat}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
