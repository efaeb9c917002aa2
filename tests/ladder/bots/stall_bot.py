"""A ladder entrant that connects and then never answers in time: every prompt blocks its
only thread past the deadline (a frozen process), so the referee plays its turns by
default. Written on the referee's own client: a kit would answer with a fallback."""

import asyncio
import os
import time

from referee.bots.player import play_seat
from referee.bots.strategies import Choice, GreedyBot
from referee.protocol import play_service


class StallBot(GreedyBot):
    name = "stall"

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        time.sleep((prompt.turn_time_ms + prompt.time_bank_ms) / 1000 + 0.3)
        return super().choose(prompt)


if __name__ == "__main__":
    asyncio.run(play_seat(StallBot(), os.environ["PUSOY_ADDRESS"], os.environ["PUSOY_TOKEN"]))
