"""The Gymnasium single-seat environment, ``pusoy/Seat-v0``: one learner seat, the
other three played inside ``step`` by built-in bots, policies, or a pool of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces

from pusoy_client.rl import NUM_ACTIONS
from referee.rl.aec import ILLEGAL_REWARD, Observation, observation_space
from referee.rl.game import Game
from referee.rl.opponents import Opponent, OpponentPool, OpponentSpec, as_opponent
from referee.rl.options import deal_seed, make_rules
from referee.rl.render import render_ansi
from referee.rules import SEATS

Opponents = OpponentSpec | OpponentPool | Sequence[OpponentSpec]


class SeatEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One seat of a match; an episode is the match.

    ``opponents``: a built-in's name (``"random"``, ``"greedy"``), a policy (a callable
    on an observation dict), an ``OpponentPool`` drawn from at every reset, or a list of
    three of these for the seats after the learner in turn order. ``seat``: the learner's
    seat (default: drawn at every reset). Every other keyword is as for ``raw_env``.

    The reward of a step is the learner's hand score (signed, more is better) of every
    hand that ended during it. An action outside the mask ends the episode with
    ``ILLEGAL_REWARD`` and ``info["illegal_action"]``, as PettingZoo's classic games do.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012  (Env declares it)

    def __init__(
        self,
        profile: str = "big-two",
        *,
        opponents: Opponents = "random",
        seat: int | None = None,
        hands_cap: int | None = None,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if seat is not None and not 0 <= seat < SEATS:
            raise ValueError(f"seat must be 0..3, not {seat}")
        self.rules = make_rules(profile, options)
        self.game = Game(self.rules, hands_cap)
        self.render_mode = render_mode
        if render_mode is not None:
            from referee.rl.render import TextRecord

            self.game.record = TextRecord(self.rules)
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.fixed_seat = seat
        self.seat = seat if seat is not None else 0
        self.set_opponents(opponents)
        self._seated: dict[int, tuple[str, Opponent]] = {}

    def set_opponents(self, opponents: Opponents) -> None:
        """Change who plays the other seats from the next reset on."""
        if isinstance(opponents, OpponentPool):
            self.pool: OpponentPool | None = opponents
            self.fixed: list[tuple[str, Opponent]] = []
            return
        self.pool = None
        specs = (
            list(opponents)
            if isinstance(opponents, Sequence) and not isinstance(opponents, str)
            else [opponents] * 3
        )
        if len(specs) != 3:
            raise ValueError(f"give one opponent or three, not {len(specs)}")
        self.fixed = [
            (s if isinstance(s, str) else f"policy-{i}", as_opponent(s))
            for i, s in enumerate(specs)
        ]

    @property
    def opponents(self) -> dict[int, str]:
        """The names of the opponents of this episode by seat."""
        return {seat: name for seat, (name, _) in self._seated.items()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        self.seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(SEATS))
        order = self.game.encoder.relative(self.seat)[1:]
        if self.pool is not None:
            self._seated = {s: self.pool.sample(rng) for s in order}
        else:
            self._seated = dict(zip(order, self.fixed, strict=True))
        self.game.reset(deal_seed(rng, options))
        self._play_others()  # no hand ends before the learner's first turn: no reward
        return self._observation(), self._info()

    def _play_others(self) -> float:
        """Let the opponents act until the learner is to act or the match is over; the
        learner's reward from hands that ended meanwhile."""
        game, rng, reward = self.game, self.np_random, 0.0
        seat = game.to_act
        while seat is not None and seat != self.seat:
            result = game.step(self._seated[seat][1].act(game, seat, rng))
            if result is not None:
                reward += game.rewards(result)[self.seat]
            seat = game.to_act
        return reward

    def step(
        self, action: np.int64 | int
    ) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        game = self.game
        if game.to_act != self.seat:
            raise RuntimeError("the episode is over: call reset()")
        a = int(action)
        if not 0 <= a < NUM_ACTIONS or a not in game.legal_actions():
            info = self._info()
            info["illegal_action"] = True
            return self._observation(), ILLEGAL_REWARD, True, False, info
        result = game.step(a)
        reward = game.rewards(result)[self.seat] if result is not None else 0.0
        reward += self._play_others()
        terminated = game.match.over
        truncated = game.truncated and not terminated
        return self._observation(), reward, terminated, truncated, self._info()

    def _observation(self) -> Observation:
        game = self.game
        mask = game.action_mask() if game.to_act == self.seat else np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": game.observe(self.seat), "action_mask": mask}

    def _info(self) -> dict[str, Any]:
        game = self.game
        return {
            "seat": self.seat,
            "hand_number": game.match.hand_number,
            "totals": tuple(game.match.totals),
            "opponents": self.opponents,
        }

    def render(self) -> str | None:
        return render_ansi(self.render_mode, self.game.record, self.seat)
