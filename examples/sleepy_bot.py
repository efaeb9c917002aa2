#!/usr/bin/env python3
"""The greedy sample bot, except that now and then it falls asleep past the deadline.

With probability ``PUSOY_SLEEPY_P`` (default 0.1) per prompt it blocks for the turn's
time plus ``PUSOY_SLEEPY_EXTRA_MS`` (default 200 ms) before answering, so the referee
plays the default action for it and counts a timeout; its late answer is then rejected
as stale. Useful to check that a slow bot only hurts itself (examples/tournament.toml).

python examples/sleepy_bot.py --address 127.0.0.1:50051 --token SEAT_TOKEN
"""

import os
import random
import sys
import time

from pusoy_client import Choice, main
from pusoy_client.samples import GreedyBot
from referee.protocol import play_service


class SleepyBot(GreedyBot):
    name = "sleepy"

    def __init__(self) -> None:
        self.p = float(os.environ.get("PUSOY_SLEEPY_P", "0.1"))
        self.extra_ms = int(os.environ.get("PUSOY_SLEEPY_EXTRA_MS", "200"))
        self.rng = random.Random()

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        if self.rng.random() < self.p:
            # A blocking sleep: the SDK cannot cut a synchronous choice short.
            time.sleep((prompt.turn_time_ms + prompt.time_bank_ms + self.extra_ms) / 1000)
        return super().choose(prompt)


if __name__ == "__main__":
    sys.exit(main(SleepyBot()))
