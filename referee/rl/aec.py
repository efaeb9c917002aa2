"""The PettingZoo AEC environment: four seats taking turns, one match an episode.

``env(**kwargs)`` behaves as PettingZoo's classic games do (an illegal action ends the
game, an action out of range is an error, calls in the wrong order are caught);
``raw_env`` is the bare one, which raises ``IllegalAction`` on an illegal action.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from pusoy_client.rl import NUM_ACTIONS, OBS_HIGH, OBS_LOW
from referee.rl.game import Game
from referee.rl.options import deal_seed, make_rules
from referee.rl.render import render_ansi
from referee.rules import SEATS

AGENTS = tuple(f"seat_{s}" for s in range(SEATS))
ILLEGAL_REWARD = -1.0
"""PettingZoo classic's reward for an illegal move (the game ends; the others get 0)."""

Observation = dict[str, npt.NDArray[np.int8]]


def observation_space() -> spaces.Dict:
    """``{"observation": int8[658], "action_mask": int8[1665]}`` (docs/rl.md)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(OBS_LOW, OBS_HIGH, dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )


class raw_env(AECEnv):  # type: ignore[misc]
    """Pusoy Dos / Big Two for four agents, ``seat_0`` .. ``seat_3``, on the referee's rules.

    Keyword arguments: ``profile`` (``pusoy-dos``, ``pusoy-dos-chips``, ``big-two``), any
    option of docs/rules.md by name (``revolution=True``, ``match_end="hands 3"``, ...),
    ``hands_cap`` (truncate the episode after this many hands), ``render_mode="ansi"``
    and ``render_seat`` (whose view ``render`` shows; default the seat to act).

    Rewards come at the end of each hand, to every seat: its score for the hand, signed
    so that more is better (``-penalty``, or the chips won or lost). ``reset(seed=...)``
    makes the episode repeatable; ``reset(options={"deal_seed": "..."})`` deals exactly
    what a referee match with that seed deals.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "pusoy_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        profile: str = "big-two",
        *,
        hands_cap: int | None = None,
        render_mode: str | None = None,
        render_seat: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.rules = make_rules(profile, options)
        self.game = Game(self.rules, hands_cap)
        self.render_mode = render_mode
        self.render_seat = render_seat
        if render_mode is not None:
            from referee.rl.render import TextRecord

            self.game.record = TextRecord(self.rules, AGENTS)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.observation_spaces = {a: observation_space() for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self._seat_of = {a: s for s, a in enumerate(AGENTS)}
        self._rng: np.random.Generator | None = None
        self._no_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self.rewards: dict[str, float] = {}
        self._rewarded = False
        self._cumulative_rewards: dict[str, float] = {}
        self.terminations: dict[str, bool] = {}
        self.truncations: dict[str, bool] = {}
        self.infos: dict[str, dict[str, Any]] = {}
        self.agent_selection = AGENTS[0]

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng, _ = gymnasium.utils.seeding.np_random(seed)
        self.game.reset(deal_seed(self._rng, options))
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._rewarded = False
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        seat = self.game.to_act
        self.agent_selection = AGENTS[seat if seat is not None else 0]

    def observe(self, agent: str) -> Observation:
        seat = self._seat_of[agent]
        game = self.game
        mask = game.action_mask() if seat == game.to_act else self._no_mask.copy()
        return {"observation": game.observe(seat), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: None is only for a finished agent")
        self._cumulative_rewards[agent] = 0.0
        game = self.game
        result = game.step(int(action))
        if result is None:
            if self._rewarded:
                self.rewards = dict.fromkeys(AGENTS, 0.0)
                self._rewarded = False
        else:
            self.rewards = dict(zip(AGENTS, game.rewards(result), strict=True))
            self._rewarded = True
            self._accumulate_rewards()
        if game.match.over:
            self.terminations = dict.fromkeys(self.agents, True)
        elif game.truncated:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            seat = game.to_act
            assert seat is not None
            self.agent_selection = AGENTS[seat]

    def render(self) -> str | None:
        seat = self.render_seat
        if seat is None:
            seat = self.game.to_act if self.game.to_act is not None else 0
        return render_ansi(self.render_mode, self.game.record, seat)

    def close(self) -> None:
        pass


class ClassicEnv(raw_env):
    """``raw_env`` with the behaviour PettingZoo's classic games get from their wrappers
    (``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``,
    ``OrderEnforcingWrapper``), built in: those wrappers look up every attribute through
    three layers and cost more than the game's own step. ``tests/rl/test_envs.py`` plays
    the same moves on this and on the wrapped ``raw_env`` and compares everything.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._has_reset = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = True
        super().reset(seed=seed, options=options)

    def observe(self, agent: str) -> Observation:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return super().observe(agent)

    def render(self) -> str | None:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return super().agent_iter(max_iter)

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        in_range = type(action) is int and 0 <= action < NUM_ACTIONS
        if not (action is None and dead) and not in_range:
            assert self.action_spaces[agent].contains(action), "action is not in action space"
        if dead or action is None or action in self.game.legal_actions():
            super().step(action)
            return
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0.0)
        self.rewards[agent] = ILLEGAL_REWARD
        self._rewarded = True
        self._accumulate_rewards()
        self._deads_step_first()


def env(**kwargs: Any) -> ClassicEnv:
    """The environment as PettingZoo's classic games give it: an action outside the mask
    ends the episode with ``ILLEGAL_REWARD`` (-1) for that seat and 0 for the others
    (with PettingZoo's warning); an action outside the action space is an assertion
    error; calls before ``reset`` are errors."""
    return ClassicEnv(**kwargs)
