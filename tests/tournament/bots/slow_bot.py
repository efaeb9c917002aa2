#!/usr/bin/env python3
"""The greedy bot, thinking ``PUSOY_SLOW_MS`` (default 150) before every play: well
inside the turn time, so it plays exactly as greedy does, only slower (a match of it
lasts long enough to be caught mid-run)."""

import argparse
import asyncio
import os
import sys
import time

from referee.bots import play_seat
from referee.bots.strategies import Choice, GreedyBot
from referee.protocol import play_service


class SlowBot(GreedyBot):
    name = "slow"

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        time.sleep(int(os.environ.get("PUSOY_SLOW_MS", "150")) / 1000)
        return super().choose(prompt)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", default=os.environ.get("PUSOY_ADDRESS", ""))
    parser.add_argument("--token", default=os.environ.get("PUSOY_TOKEN", ""))
    args = parser.parse_args()
    asyncio.run(play_seat(SlowBot(), args.address, args.token))
    sys.exit(0)
