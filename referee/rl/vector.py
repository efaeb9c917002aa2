"""Many tables stepped in one call, for self-play: ``TableVector``.

Each table is a match; a step takes one action for the seat to act at every table and
returns, for every table, the observation and mask of the seat to act next. Encoding is
batched across the tables (one numpy pass for all of them), which is where a single
table spends most of an environment step. A table whose match ends is dealt a new match
in the same call (autoreset): the step reports the old match's last rewards and its end,
and the observation of the new match's first turn.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from pusoy_client.rl import NUM_ACTIONS, SeatFacts
from referee.rl.game import Game, IllegalAction
from referee.rl.options import deal_seed, make_rules
from referee.rules import SEATS


@dataclasses.dataclass(frozen=True, slots=True)
class TableStep:
    """What a reset or a step gives, one row per table."""

    observation: npt.NDArray[np.int8]
    """(tables, 658): the seat to act's observation."""
    action_mask: npt.NDArray[np.int8]
    """(tables, 1665)."""
    seat: npt.NDArray[np.int64]
    """(tables,): the seat to act."""
    rewards: npt.NDArray[np.float32]
    """(tables, 4): each seat's reward from hands that ended in this step (seats 0..3)."""
    terminated: npt.NDArray[np.bool_]
    """(tables,): the match ended in this step (and the table was dealt a new one)."""
    truncated: npt.NDArray[np.bool_]
    """(tables,): the match reached the hands cap in this step (and was dealt anew)."""
    legal: list[list[int]]
    """Each table's legal actions (the mask's ones), plays in the engine's order."""


class TableVector:
    """``tables`` matches of the same rules (keywords as for ``raw_env``).

    >>> tables = TableVector(3, profile="big-two")
    >>> first = tables.reset(seed=1)
    >>> first.observation.shape, first.action_mask.shape, first.seat.shape
    ((3, 658), (3, 1665), (3,))
    >>> nxt = tables.step(tables.sample(first))
    >>> nxt.rewards.shape
    (3, 4)
    """

    def __init__(
        self, tables: int, profile: str = "big-two", *, hands_cap: int | None = None, **options: Any
    ) -> None:
        if tables < 1:
            raise ValueError("a vector needs at least one table")
        self.rules = make_rules(profile, options)
        self.games = [Game(self.rules, hands_cap) for _ in range(tables)]
        self.encoder = self.games[0].encoder
        self.num_tables = tables
        self._rng: np.random.Generator | None = None
        self._pick = random.Random()
        self._legal: list[list[int]] = [[] for _ in range(tables)]

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng, _ = gymnasium.utils.seeding.np_random(None)
        return self._rng

    def reset(self, seed: int | None = None) -> TableStep:
        """New matches at every table (repeatable with ``seed``)."""
        if seed is not None or self._rng is None:
            self._rng, _ = gymnasium.utils.seeding.np_random(seed)
            self._pick.seed(int(self._rng.integers(2**63)))
        for game in self.games:
            game.reset(deal_seed(self.rng, None))
        n = self.num_tables
        return self._state(np.zeros((n, SEATS), np.float32), np.zeros(n, bool), np.zeros(n, bool))

    def step(self, actions: npt.ArrayLike) -> TableStep:
        """One action per table for its seat to act; ``IllegalAction`` names a table whose
        action is outside its mask (no table has moved then)."""
        acts = np.asarray(actions, dtype=np.int64).reshape(-1)
        if len(acts) != self.num_tables:
            raise ValueError(f"{len(acts)} actions for {self.num_tables} tables")
        legal = self._legal
        chosen: list[int] = []
        for i, a in enumerate(acts.tolist()):
            try:
                chosen.append(legal[i].index(a))
            except ValueError:
                seat = self.games[i].to_act
                raise IllegalAction(f"table {i}: action {a} is not legal for seat {seat}") from None
        n = self.num_tables
        rewards = np.zeros((n, SEATS), np.float32)
        terminated = np.zeros(n, bool)
        truncated = np.zeros(n, bool)
        for i, (game, k) in enumerate(zip(self.games, chosen, strict=True)):
            result = game.step_at(k)
            if result is not None:
                rewards[i] = game.rewards(result)
                if game.over:
                    terminated[i] = game.match.over
                    truncated[i] = not game.match.over
                    game.reset(deal_seed(self.rng, None))
        return self._state(rewards, terminated, truncated)

    def _state(
        self,
        rewards: npt.NDArray[np.float32],
        terminated: npt.NDArray[np.bool_],
        truncated: npt.NDArray[np.bool_],
    ) -> TableStep:
        n = self.num_tables
        games = self.games
        seats: list[int | None] = [game.to_act for game in games]
        facts: list[SeatFacts] = [game.facts(seat) for game, seat in zip(games, seats, strict=True)]  # type: ignore[arg-type]
        legal: list[list[int]] = [(game._legal or game._legal_now())[1] for game in games]
        obs = self.encoder.encode_batch(facts)
        mask = np.zeros((n, NUM_ACTIONS), np.int8)
        rows = np.repeat(np.arange(n), list(map(len, legal)))
        mask[rows, list(itertools.chain.from_iterable(legal))] = 1
        self._legal = legal
        return TableStep(
            obs, mask, np.array(seats, np.int64), rewards, terminated, truncated, legal
        )

    def sample(self, state: TableStep) -> list[int]:
        """A uniformly random legal action per table (for baselines and benchmarks)."""
        pick = self._pick
        return [legal[int(pick.random() * len(legal))] for legal in state.legal]
