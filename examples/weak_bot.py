#!/usr/bin/env python3
"""A deliberately weak bot: passes whenever it may, else plays its weakest legal play.

It only ever plays when it must lead, so it keeps most of its cards. Useful as the
bottom of a tournament field (examples/tournament.toml).

PUSOY_TOKEN=SEAT_TOKEN python examples/weak_bot.py --address 127.0.0.1:50051
"""

import sys

from pusoy_client import PASS, Bot, Choice, main
from referee.protocol import play_service


class WeakBot(Bot):
    name = "weak"

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        if prompt.can_pass or not prompt.legal_plays:
            return PASS
        return list(prompt.legal_plays[0].cards)  # the referee lists them weakest first


if __name__ == "__main__":
    sys.exit(main(WeakBot()))
