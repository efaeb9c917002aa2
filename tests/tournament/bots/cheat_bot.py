#!/usr/bin/env python3
"""A bot that tries cards it does not hold before falling back on a legal play."""

import sys

from pusoy_client import Choice, main
from pusoy_client.samples import GreedyBot
from referee.protocol import play_service


class CheatBot(GreedyBot):
    name = "cheat"

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        held = set(prompt.hand)
        missing = next(c for c in ("2D", "2H", "2S", "2C", "AD") if c not in held)
        return [missing]


if __name__ == "__main__":
    sys.exit(main(CheatBot()))
