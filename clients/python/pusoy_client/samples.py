"""Sample bots: a random one and a greedy one. Copy one to start your own."""

from __future__ import annotations

import random
from collections.abc import Awaitable

from pusoy_client.bot import PASS, Bot, Choice
from referee.protocol import play_service


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


class Misbehaving(Bot):
    """Wraps a bot; its first answer in each hand is a card it does not hold.

    For checking the rejection path: the referee rejects that play (card_not_in_hand)
    and the runner answers again through ``on_rejected``.
    """

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.name = f"{inner.name}-misbehaving"
        self.want_legal_plays = inner.want_legal_plays
        self.hand_seen = 0

    def choose(self, prompt: play_service.TurnPrompt) -> Choice | Awaitable[Choice]:
        if prompt.state.hand_number != self.hand_seen:
            self.hand_seen = prompt.state.hand_number
            return [not_held(prompt)]
        return self.inner.choose(prompt)

    def on_rejected(
        self, prompt: play_service.TurnPrompt, result: play_service.ActionResult
    ) -> Choice:
        return self.inner.on_rejected(prompt, result)


def not_held(prompt: play_service.TurnPrompt) -> str:
    """The first card of the deck (in 3C, 3S, 3H, 3D, 4C … order) not in the hand."""
    held = set(prompt.hand)
    return next(r + s for r in "3456789TJQKA2" for s in "CSHD" if r + s not in held)


BUILTIN_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "greedy": GreedyBot}
