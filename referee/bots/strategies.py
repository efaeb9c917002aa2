"""The built-in strategies, by name: every place that seats a built-in bot (``referee
match``, ``referee bot``, a tournament's ``builtin``, a ladder's house bots, the
environments' opponents, the benchmark's pool) finds them here.

``random`` and ``greedy`` are pure functions of a prompt. The benchmark's anchors
(docs/benchmark.md) think over more: ``expert`` and ``search`` over the seat's
``Position`` (the match's rules come with the welcome, which they hear through
``observe``), ``policy`` over the environments' observation, which the kit's encoder
keeps from every message. ``search`` decides in a worker process (``decide_apart``), so
that a table's other seats and its referee are not held up while it thinks.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

from referee.bots.expert import expert_pick
from referee.bots.position import Position, from_prompt
from referee.bots.search import SIMULATIONS, search_pick
from referee.protocol import play_service
from referee.protocol.convert import rules_from_pb
from referee.rules import Rules

Choice = list[str] | None
"""Cards to play, or None to pass."""


class Strategy(Protocol):
    """Answers a prompt at once, or with an awaitable (the search; a test's deliberately
    slow bot). A strategy with an ``observe(message)`` method hears every message of
    its seat first (the welcome, snapshots, events, prompts)."""

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


class PositionBot:
    """A strategy on the seat's ``Position`` (its rules from the welcome): the expert and
    the search. ``pick`` returns a play (a card mask) or None to pass."""

    name = "position"

    def __init__(self) -> None:
        self.rules = Rules.for_profile("big-two")

    def observe(self, message: play_service.PlayResponse) -> None:
        if message.WhichOneof("kind") == "welcome":
            self.rules = rules_from_pb(message.welcome.config.rules)

    def pick(self, pos: Position) -> int | None:
        raise NotImplementedError

    def choice(self, prompt: play_service.TurnPrompt, pos: Position, play: int | None) -> Choice:
        if play is None:
            return None
        return list(prompt.legal_plays[pos.plays.index(play)].cards)

    def choose(self, prompt: play_service.TurnPrompt) -> Choice | Awaitable[Choice]:
        pos = from_prompt(prompt, self.rules)
        return self.choice(prompt, pos, self.pick(pos))


class ExpertBot(PositionBot):
    """The rule-based expert (``referee.bots.expert``)."""

    name = "expert"

    def pick(self, pos: Position) -> int | None:
        return expert_pick(pos)


class SearchBot(PositionBot):
    """Determinised Monte Carlo over the engine (``referee.bots.search``), its budget in
    simulations; each decision in a worker process when one can be had."""

    name = "search"

    def __init__(self, simulations: int = SIMULATIONS) -> None:
        super().__init__()
        self.simulations = simulations
        _worker().submit(int)  # started now, not on the first turn's clock

    def pick(self, pos: Position) -> int | None:
        return search_pick(pos, self.simulations)

    async def _choose(self, prompt: play_service.TurnPrompt) -> Choice:
        pos = from_prompt(prompt, self.rules)
        if len(pos.plays) + pos.can_pass <= 1:
            return self.choice(prompt, pos, self.pick(pos))  # nothing to think about
        play = await decide_apart(search_pick, pos, self.simulations)
        return self.choice(prompt, pos, play)

    def choose(self, prompt: play_service.TurnPrompt) -> Awaitable[Choice]:
        return self._choose(prompt)


class PolicyBot:
    """The trained policy (``referee.bots.policy``) on the environments' observation,
    which the Python kit's ``SeatEncoder`` keeps from the seat's messages."""

    name = "policy"

    def __init__(self) -> None:
        from pusoy_client.rl import SeatEncoder
        from referee.bots.policy import anchor_net

        # The kit's encoder reads the messages by their fields: the referee's own
        # generated classes (not the kit's) serve as well, hence Any.
        self.encoder: Any = SeatEncoder()
        self.net = anchor_net()

    def observe(self, message: play_service.PlayResponse) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.encoder.on_welcome(message.welcome)
        elif kind == "snapshot":
            self.encoder.on_snapshot(message.snapshot)
        elif kind == "event":
            self.encoder.on_event(message.event)
        elif kind == "batch":
            for event in message.batch.events:
                self.encoder.on_event(event)

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        for event in prompt.events:  # batch_events: the events since the last prompt
            self.encoder.on_event(event)
        obs = self.encoder.observe(prompt)
        cards: Choice = self.encoder.cards(self.net.best(obs["observation"], obs["action_mask"]))
        return cards


_apart: ProcessPoolExecutor | None = None


def _worker() -> ProcessPoolExecutor:
    """The built-in bots' worker processes (two at most: two searches of two tables at
    once), one pool per process that seats them, started on first use, ending with that
    process (``referee.pools``)."""
    global _apart
    if _apart is None:
        from referee.pools import process_pool

        _apart = process_pool(min(2, os.cpu_count() or 1))
    return _apart


async def decide_apart(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in the built-in bots' worker process, so the event loop goes on."""
    return await asyncio.get_running_loop().run_in_executor(_worker(), fn, *args)


BUILTIN_BOTS = ("random", "greedy", "expert", "search", "policy")
"""Every built-in bot; the last three are the benchmark's anchors (pool v1)."""


def builtin_bot(name: str, seed: int | None = None) -> Strategy:
    """A fresh built-in bot by name; ``seed`` makes the random bot repeatable (the others
    decide from the position alone)."""
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot()
    if name == "expert":
        return ExpertBot()
    if name == "search":
        return SearchBot()
    if name == "policy":
        return PolicyBot()
    raise ValueError(f"no built-in bot {name!r}: choose one of {', '.join(BUILTIN_BOTS)}")
