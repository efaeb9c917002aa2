"""The built-in strategies: pure functions of a prompt, fast enough to run inline."""

from __future__ import annotations

import random
from collections.abc import Awaitable
from typing import Protocol

from referee.protocol import play_service

Choice = list[str] | None
"""Cards to play, or None to pass."""


class Strategy(Protocol):
    """Answers a prompt at once, or with an awaitable (a test's deliberately slow bot)."""

    name: str

    def choose(self, prompt: play_service.TurnPrompt) -> Choice | Awaitable[Choice]: ...


class RandomBot:
    """Plays uniformly at random among its legal plays, pass included when allowed."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        options: list[Choice] = [list(p.cards) for p in prompt.legal_plays]
        if prompt.can_pass:
            options.append(None)
        return self.rng.choice(options) if options else None


class GreedyBot:
    """The lowest play that beats the table; on a lead, the longest combination that
    sheds its lowest card (the weakest such on ties). Never passes when it can play."""

    name = "greedy"

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        plays = prompt.legal_plays  # the referee lists them weakest first
        if not plays:
            return None
        if not prompt.is_lead:
            return list(plays[0].cards)
        lowest = prompt.hand[0]  # the hand is in ascending card order
        with_lowest = [p for p in plays if lowest in p.cards] or list(plays)
        longest = max(len(p.cards) for p in with_lowest)
        return list(next(p for p in with_lowest if len(p.cards) == longest).cards)


BUILTIN_BOTS = ("random", "greedy")


def builtin_bot(name: str, seed: int | None = None) -> Strategy:
    """A fresh built-in bot by name; ``seed`` makes the random bot repeatable."""
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot()
    raise ValueError(f"no built-in bot {name!r}: choose one of {', '.join(BUILTIN_BOTS)}")
