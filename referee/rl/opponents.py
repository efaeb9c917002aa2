"""Who plays the other seats of the single-seat environment: the built-in bots, any
policy, or a weighted pool of them (self-play snapshots join the pool while training).

The built-in bots act on the engine's state directly: ``random`` and ``greedy`` on its
legal plays (greedy shares its rule, ``greedy_pick``), ``expert`` and ``search`` on the
seat's ``Position`` made from the engine (``referee.bots.position.from_hand``), the
``policy`` anchor on the seat's observation: the same choices as the referee's bots of
those names (``referee.bots``) in the same positions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import numpy.typing as npt

from pusoy_client.rl import PASS_ACTION
from referee.bots.expert import expert_pick
from referee.bots.position import Position, from_hand
from referee.bots.search import search_pick
from referee.bots.strategies import BUILTIN_BOTS, greedy_pick
from referee.rl.game import Game
from referee.rules import sorted_cards

Observation = dict[str, npt.NDArray[np.int8]]
Policy = Callable[[Observation], int]
"""A policy: ``{"observation", "action_mask"}`` of its seat in, an action index out."""


class Opponent:
    """A player that acts on the engine's state directly (no observation is encoded for
    it); subclass for a fast scripted opponent. A policy needs no subclass: any callable
    on an observation dict will do."""

    name = "opponent"

    def act(self, game: Game, seat: int, rng: np.random.Generator) -> int:
        raise NotImplementedError


class RandomOpponent(Opponent):
    """Uniformly at random among the legal actions, the pass included when allowed."""

    name = "random"

    def act(self, game: Game, seat: int, rng: np.random.Generator) -> int:
        actions = game.legal_actions()
        return actions[int(rng.integers(len(actions)))]


class GreedyOpponent(Opponent):
    """``referee.bots.GreedyBot``'s rule on the engine's plays."""

    name = "greedy"

    def act(self, game: Game, seat: int, rng: np.random.Generator) -> int:
        masks, _ = game.legal_plays()
        hand = game.hand
        assert hand is not None
        held = hand.hands[seat]
        lowest = 1 << sorted_cards(held, game.rules.suit_order)[0] if held else 0
        pick = greedy_pick(
            masks, hand.table is None, size=int.bit_count, has_lowest=lambda m: bool(m & lowest)
        )
        return PASS_ACTION if pick is None else game.dealt[seat].action_of(pick)


class PositionOpponent(Opponent):
    """An anchor that decides on the seat's ``Position``: the expert, the search."""

    def __init__(self, name: str, pick: Callable[[Position], int | None]) -> None:
        self.name = name
        self.pick = pick

    def act(self, game: Game, seat: int, rng: np.random.Generator) -> int:
        hand = game.hand
        assert hand is not None
        play = self.pick(from_hand(hand, game.played_all, game.match.hand_number))
        return PASS_ACTION if play is None else game.dealt[seat].action_of(play)


class PolicyOpponent(Opponent):
    """A policy on its seat's observation, as a learner sees its own."""

    def __init__(self, policy: Policy, name: str = "policy") -> None:
        self.policy = policy
        self.name = name

    def act(self, game: Game, seat: int, rng: np.random.Generator) -> int:
        return int(
            self.policy({"observation": game.observe(seat), "action_mask": game.action_mask()})
        )


def builtin(name: str) -> Opponent:
    if name == "random":
        return RandomOpponent()
    if name == "greedy":
        return GreedyOpponent()
    if name == "expert":
        return PositionOpponent("expert", expert_pick)
    if name == "search":
        return PositionOpponent("search", search_pick)
    if name == "policy":
        from referee.bots.policy import anchor_net

        net = anchor_net()
        return PolicyOpponent(lambda obs: net.best(obs["observation"], obs["action_mask"]), name)
    raise ValueError(f"no built-in opponent {name!r}: choose one of {', '.join(BUILTIN_BOTS)}")


OpponentSpec = str | Policy | Opponent


def as_opponent(spec: OpponentSpec, name: str = "policy") -> Opponent:
    if isinstance(spec, str):
        return builtin(spec)
    if isinstance(spec, Opponent):
        return spec
    if callable(spec):
        return PolicyOpponent(spec, name)
    raise TypeError(f"not an opponent: {spec!r} (a built-in's name, a policy or an Opponent)")


@dataclasses.dataclass
class _Entry:
    name: str
    opponent: Opponent
    weight: float


class OpponentPool:
    """Opponents drawn by weight, one per other seat at every reset.

    >>> pool = OpponentPool({"random": 1.0, "greedy": 3.0})
    >>> pool.add("snapshot-1", lambda obs: 1664, weight=2.0)
    >>> pool.names()
    ['random', 'greedy', 'snapshot-1']
    """

    def __init__(self, entries: Mapping[str, float] | Iterable[OpponentSpec] = ()) -> None:
        self._entries: list[_Entry] = []
        if isinstance(entries, Mapping):
            for name, weight in entries.items():
                self.add(name, name, weight)
        else:
            for i, spec in enumerate(entries):
                self.add(spec if isinstance(spec, str) else f"policy-{i}", spec)

    def add(self, name: str, opponent: OpponentSpec, weight: float = 1.0) -> None:
        """Add (or replace) an entry: the hook for self-play snapshots."""
        if not weight > 0:
            raise ValueError("an opponent's weight must be positive")
        self.remove(name)
        self._entries.append(_Entry(name, as_opponent(opponent, name), float(weight)))

    def remove(self, name: str) -> None:
        self._entries = [e for e in self._entries if e.name != name]

    def names(self) -> list[str]:
        return [e.name for e in self._entries]

    def sample(self, rng: np.random.Generator) -> tuple[str, Opponent]:
        if not self._entries:
            raise ValueError("the opponent pool is empty")
        weights = np.array([e.weight for e in self._entries])
        entry = self._entries[int(rng.choice(len(weights), p=weights / weights.sum()))]
        return entry.name, entry.opponent
