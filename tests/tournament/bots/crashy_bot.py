#!/usr/bin/env python3
"""A bot that plays greedily for a few prompts, then dies without a word (exit 1).

PUSOY_CRASH_AFTER (default 3) is how many prompts it answers first.
"""

import os
import sys

from pusoy_client import Choice, main
from pusoy_client.samples import GreedyBot
from referee.protocol import play_service


class CrashyBot(GreedyBot):
    name = "crashy"

    def __init__(self) -> None:
        self.left = int(os.environ.get("PUSOY_CRASH_AFTER", "3"))

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        self.left -= 1
        if self.left < 0:
            os._exit(1)
        return super().choose(prompt)


if __name__ == "__main__":
    sys.exit(main(CrashyBot()))
