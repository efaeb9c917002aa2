"""Sample bots: a random one and a greedy one. Copy one to start your own."""

from __future__ import annotations

import random
from collections.abc import Awaitable

from pusoy_client.bot import PASS, Bot, Choice
from pusoy_client.prompt import Prompt, Rejection
from pusoy_client.protocol import common, play_service
from pusoy_client.rules import Rules, classify
from pusoy_client.tracker import TrackingBot


class RandomBot(Bot):
    """Plays uniformly at random among its legal plays, pass included when allowed."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, prompt: Prompt) -> Choice:
        options: list[Choice] = [list(p.cards) for p in prompt.legal_plays]
        if prompt.can_pass:
            options.append(PASS)
        return self.rng.choice(options) if options else PASS


class SampleBot(TrackingBot):
    """The kit's sample (``clients/python/bot``): random, but it uses the helpers.

    The tracker knows how many cards each seat holds; when a player is about to go out,
    the bot stops passing and plays its strongest legal play (by the comparator's key).
    """

    name = "python-sample"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def choose(self, prompt: Prompt) -> Choice:
        plays = [list(p.cards) for p in prompt.legal_plays]
        if not plays:  # a pass is the only legal action
            return PASS
        t = self.tracker
        danger = any(t.cards_left(s) == 1 for s in range(4) if s != prompt.seat)
        if danger:
            strongest = max(plays, key=lambda c: (len(c), _strength(t.rules, c, t.revolution)))
            return strongest
        options: list[Choice] = [*plays, PASS] if prompt.can_pass else list(plays)
        return self.rng.choice(options)


def _strength(rules: Rules, cards: list[str], revolution: bool) -> int:
    combo = classify(rules, cards, revolution)
    return combo.key if combo is not None else -1


class GreedyBot(Bot):
    """The lowest play that beats the table; on a lead, the longest combination that
    sheds its lowest card (the weakest such on ties). Never passes when it can play."""

    name = "greedy"

    def choose(self, prompt: Prompt) -> Choice:
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
        self.use_time_bank = inner.use_time_bank
        self.hand_seen = 0

    def choose(self, prompt: Prompt) -> Choice | Awaitable[Choice]:
        if prompt.state.hand_number != self.hand_seen:
            self.hand_seen = prompt.state.hand_number
            return [not_held(prompt)]
        return self.inner.choose(prompt)

    def on_rejected(self, prompt: Prompt, rejection: Rejection) -> Choice | Awaitable[Choice]:
        return self.inner.on_rejected(prompt, rejection)

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.inner.on_welcome(welcome)

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        self.inner.on_snapshot(snapshot)

    def on_event(self, event: common.Event) -> None:
        self.inner.on_event(event)


def not_held(prompt: Prompt | play_service.TurnPrompt) -> str:
    """The first card of the deck (in 3C, 3S, 3H, 3D, 4C … order) not in the hand."""
    held = set(prompt.hand)
    return next(r + s for r in "3456789TJQKA2" for s in "CSHD" if r + s not in held)


BUILTIN_BOTS: dict[str, type[Bot]] = {"random": RandomBot, "greedy": GreedyBot}
