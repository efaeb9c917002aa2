"""Sample bots: a random one and a greedy one. Copy one to start your own."""

from __future__ import annotations

import random

from pusoy_client.bot import PASS, Bot, Choice
from referee.pb import play_service


class RandomBot(Bot):
    """Plays uniformly at random among its legal plays, pass included when allowed."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        options: list[Choice] = [list(p.cards) for p in prompt.legal_plays]
        if prompt.can_pass:
            options.append(PASS)
        return self.rng.choice(options) if options else PASS


class GreedyBot(Bot):
    """The lowest play that beats the table; on a lead, the longest combination that
    sheds its lowest card (the weakest such on ties). Never passes when it can play."""

    name = "greedy"

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        plays = prompt.legal_plays  # the referee lists them weakest first
        if not plays:
            return PASS
        if not prompt.is_lead:
            return list(plays[0].cards)
        lowest = prompt.hand[0]  # the hand is in ascending card order
        with_lowest = [p for p in plays if lowest in p.cards] or list(plays)
        longest = max(len(p.cards) for p in with_lowest)
        return list(next(p for p in with_lowest if len(p.cards) == longest).cards)


BUILTIN_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "greedy": GreedyBot}
