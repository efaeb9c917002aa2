"""The built-in strategies: pure functions of a prompt, fast enough to run inline."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

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
        lowest = prompt.hand[0] if prompt.hand else ""  # the hand is in ascending order
        play = greedy_pick(
            prompt.legal_plays,  # the referee lists them weakest first
            prompt.is_lead,
            size=lambda p: len(p.cards),
            has_lowest=lambda p: lowest in p.cards,
        )
        return list(play.cards) if play is not None else None


_P = TypeVar("_P")


def greedy_pick(
    plays: Sequence[_P], is_lead: bool, size: Callable[[_P], int], has_lowest: Callable[[_P], bool]
) -> _P | None:
    """The greedy bot's choice among legal plays listed weakest first (None: pass); one
    rule for the gRPC bot and the environments' built-in opponent (``referee.rl``)."""
    if not plays:
        return None
    if not is_lead:
        return plays[0]
    with_lowest = [p for p in plays if has_lowest(p)] or list(plays)
    longest = max(size(p) for p in with_lowest)
    return next(p for p in with_lowest if size(p) == longest)


BUILTIN_BOTS = ("random", "greedy")


def builtin_bot(name: str, seed: int | None = None) -> Strategy:
    """A fresh built-in bot by name; ``seed`` makes the random bot repeatable."""
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot()
    raise ValueError(f"no built-in bot {name!r}: choose one of {', '.join(BUILTIN_BOTS)}")
