"""Parity: the environment and a real referee give a seat the same numbers.

The same matches are played both ways: first in the AEC environment with random legal
actions, then at a referee server in this process over real gRPC, each seat played by a
Python-kit bot (``pusoy_client.rl.PolicyBot``) that plays the environment's actions for
its seat. Every observation and mask the kit's encoder makes from what the seat received
must equal the environment's at the same turn, and every reward the log's scores.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.log.reader import read_log
from referee.log.verify import verify_log
from referee.rl import raw_env, reward_sign

from .conftest import ScriptedBot, play_at_referee, random_policy

CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("pusoy-dos", {"match_end": "hands 2"}, False),
    ("pusoy-dos-chips", {"match_end": "hands 2"}, True),
    ("big-two", {"match_end": "hands 2"}, False),
    # House-rule mixes: revolutions and bombs change what beats what; lone-2 passes and
    # lock-outs change the trick's shape; teams change the scores.
    ("big-two", {"match_end": "hands 2", "revolution": True, "bomb": True}, True),
    (
        "pusoy-dos",
        {"match_end": "hands 2", "no_finish_on_lone_two": True, "pass_locks_out": True},
        False,
    ),
    (
        "pusoy-dos-chips",
        {"match_end": "hands 2", "teams": True, "five_card_categories": "ranked"},
        False,
    ),
    (
        "big-two",
        {"match_end": "hands 2", "five_card_hands": False, "suit_order": "clubs-low"},
        True,
    ),
    (
        "pusoy-dos",
        {"match_end": "threshold 15", "straights": "wrap-low", "multiplier_from": 7},
        False,
    ),
]


def play_in_env(profile: str, options: dict[str, Any], seed: str, policy_seed: int) -> Any:
    env = raw_env(profile=profile, **options)
    env.reset(options={"deal_seed": seed})
    policy = random_policy(policy_seed)
    turns: dict[int, list[tuple[dict[str, np.ndarray], int]]] = {s: [] for s in range(4)}
    rewards: list[list[float]] = []
    while not all(env.terminations.values()):
        agent = env.agent_selection
        obs = env.observe(agent)
        action = policy(obs)
        turns[int(agent[5:])].append((obs, action))
        hands = len(env.game.match.results)
        env.step(action)
        if len(env.game.match.results) > hands:
            rewards.append([env.rewards[f"seat_{s}"] for s in range(4)])
    return env, turns, rewards


@pytest.mark.parametrize(("profile", "options", "batch"), CASES)
def test_the_environment_and_the_referee_give_the_same_numbers(
    tmp_path: Path, profile: str, options: dict[str, Any], batch: bool
) -> None:
    seed = f"parity-{profile}-{len(options)}-{batch}"
    env, turns, rewards = play_in_env(profile, options, seed, policy_seed=len(seed))
    assert sum(len(t) for t in turns.values()) > 40
    bots = [ScriptedBot([a for _, a in turns[s]]) for s in range(4)]
    log = asyncio.run(play_at_referee(tmp_path, env.rules, seed, bots, batch_events=batch))

    assert verify_log(log).ok
    for seat, bot in enumerate(bots):
        assert len(bot.seen) == len(turns[seat]), f"seat {seat} was prompted a different number"
        for i, (live, (sim, _)) in enumerate(zip(bot.seen, turns[seat], strict=True)):
            where = f"seat {seat}, its turn {i + 1}"
            np.testing.assert_array_equal(live["action_mask"], sim["action_mask"], err_msg=where)
            np.testing.assert_array_equal(live["observation"], sim["observation"], err_msg=where)

    # Rewards: every hand's scores in the log, signed, are the environment's rewards.
    logged = [
        line.entry.event.hand_ended.scores
        for line in read_log(log).lines
        if line.kind == "hand_ended"
    ]
    sign = reward_sign(env.rules)
    assert [[sign * s for s in scores] for scores in logged] == rewards
    assert len(logged) == len(env.game.match.results) >= 1


def test_a_policy_bot_plays_on_after_its_stream_is_cut(tmp_path: Path) -> None:
    """The referee closes each seat's stream once (a drill); the kit reconnects, the
    encoder goes on from the snapshot, and every action it takes is legal."""
    from pusoy_client.rl import PolicyBot
    from referee.rules import Rules

    bots = [PolicyBot(random_policy(s)) for s in range(4)]
    rules = Rules.for_profile("big-two", {"match_end": "hands 2"})
    log = asyncio.run(play_at_referee(tmp_path, rules, "drill", bots, drill_disconnect_after=3))
    assert verify_log(log).ok
    kinds = [line.kind for line in read_log(log).lines]
    assert kinds.count("seat_disconnected") >= 4 and kinds[-1] == "match_ended"
    assert "action_rejected" not in kinds
