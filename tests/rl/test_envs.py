"""The environments as their libraries define them (PettingZoo's ``api_test`` and
``seed_test``, Gymnasium's ``check_env``), and as docs/rl.md describes them: rewards,
episode ends, the illegal-action convention, opponents, the vectorised form, rendering.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils import wrappers

from pusoy_client.rl import NUM_ACTIONS, PASS_ACTION, PolicyBot
from referee.bots.strategies import GreedyBot
from referee.protocol import common, play_service
from referee.protocol.convert import KIND_TO_PB, card_list, play_cards
from referee.rl import SEAT_ENV_ID, Game, IllegalAction, OpponentPool, TableVector, env, raw_env
from referee.rl.aec import ILLEGAL_REWARD
from referee.rl.opponents import GreedyOpponent
from referee.rules import OptionsError, Rules, parse_cards

from .conftest import PROFILES, random_policy


@pytest.mark.parametrize("profile", PROFILES)
def test_pettingzoo_api_and_seed_tests(profile: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Dict observation's advice, as for chess
        api_test(env(profile=profile, match_end="hands 3"), num_cycles=300)
        seed_test(lambda: env(profile=profile, match_end="hands 3"), num_cycles=300)


@pytest.mark.parametrize("profile", PROFILES)
def test_gymnasium_check_env_and_make(profile: str) -> None:
    e = gymnasium.make(SEAT_ENV_ID, profile=profile, opponents="greedy", match_end="hands 2")
    check_env(e.unwrapped, skip_render_check=True)
    vec = gymnasium.make_vec(SEAT_ENV_ID, num_envs=2, profile=profile, match_end="hands 2")
    obs, _ = vec.reset(seed=1)
    assert obs["observation"].shape == (2, 658) and obs["action_mask"].shape == (2, NUM_ACTIONS)


def play_out(e: Any, seed: int) -> dict[str, float]:
    """Random legal play to the end of an AEC episode; each agent's summed rewards."""
    e.reset(seed=seed)
    policy = random_policy(seed)
    total = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        total[agent] += reward
        e.step(None if terminated or truncated else policy(obs))
    return total


@pytest.mark.parametrize(
    ("profile", "options"),
    [
        ("pusoy-dos", {}),
        ("pusoy-dos-chips", {"teams": True}),
        ("big-two", {"match_end": "hands 3"}),
    ],
)
def test_rewards_are_the_signed_scores_and_the_episode_is_the_match(
    profile: str, options: dict[str, Any]
) -> None:
    e = raw_env(profile=profile, **options)
    total = play_out(e, seed=5)
    match = e.game.match
    assert match.over
    sign = -1 if e.rules.scoring.value == "penalty" else 1
    assert [total[f"seat_{s}"] for s in range(4)] == [sign * t for t in match.totals]
    if e.rules.scoring.value == "chips":
        assert sum(total.values()) == 0  # chips are zero-sum, teams too


def test_a_hands_cap_truncates() -> None:
    e = raw_env(profile="pusoy-dos", hands_cap=1)  # first to 30 points: not after one hand
    e.reset(seed=3)
    policy = random_policy(3)
    while not any(e.truncations.values()):
        assert not any(e.terminations.values())
        e.step(policy(e.observe(e.agent_selection)))
    assert e.game.match.hand_number == 1 and not e.game.match.over
    assert all(e.truncations.values())


def test_an_illegal_action_ends_the_episode_as_pettingzoos_wrappers_do() -> None:
    """``env()`` builds PettingZoo's classic wrappers in; the same moves on the wrapped
    ``raw_env`` give the same rewards, ends and agents at every step."""

    def wrapped() -> Any:
        w = wrappers.TerminateIllegalWrapper(raw_env(profile="big-two"), illegal_reward=-1)
        return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(w))

    ours, theirs = env(profile="big-two"), wrapped()
    trace = []
    for e in (ours, theirs):
        e.reset(seed=11)
        policy = random_policy(11)
        steps: list[Any] = []
        for i, agent in enumerate(e.agent_iter()):
            obs, reward, terminated, truncated, _ = e.last()
            steps.append((agent, reward, terminated, truncated, dict(e.rewards), list(e.agents)))
            if terminated or truncated:
                e.step(None)
            elif i == 17:
                illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    e.step(illegal)
            else:
                e.step(policy(obs))
        trace.append(steps)
    assert trace[0] == trace[1]
    assert ILLEGAL_REWARD in [r for _, r, *_ in trace[0]]
    with pytest.raises(IllegalAction):
        r = raw_env(profile="big-two")
        r.reset(seed=1)
        r.step(int(np.flatnonzero(r.observe(r.agent_selection)["action_mask"] == 0)[0]))
    with pytest.raises(AssertionError):
        ours.reset(seed=1)
        ours.step(NUM_ACTIONS)


def test_options_are_keyword_arguments_and_bad_ones_are_named() -> None:
    e = raw_env(profile="pusoy-dos-chips", revolution=True, match_end="hands 4", bomb="true")
    assert e.rules == Rules.for_profile(
        "pusoy-dos-chips", {"revolution": True, "match_end": "hands 4", "bomb": True}
    )
    with pytest.raises(OptionsError, match="unknown option 'revolutoin'"):
        raw_env(profile="big-two", revolutoin=True)
    with pytest.raises(OptionsError, match="unknown profile"):
        gymnasium.make(SEAT_ENV_ID, profile="bridge")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="human")


def test_the_seat_environment_plays_the_others_and_ends_illegal_actions() -> None:
    e = gymnasium.make(SEAT_ENV_ID, profile="big-two", opponents="greedy", seat=2)
    obs, info = e.reset(seed=4)
    assert info["seat"] == 2 and obs["action_mask"].any()
    assert e.unwrapped.game.to_act == 2  # the others have played up to the learner's turn
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = e.step(bad)
    assert (reward, terminated, truncated, info["illegal_action"]) == (
        ILLEGAL_REWARD,
        True,
        False,
        True,
    )
    obs, info = e.reset(seed=4)
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, info = e.step(int(legal[0]))
        total += float(reward)
        done = terminated or truncated
    assert total == -e.unwrapped.game.match.totals[2]


def test_the_built_in_greedy_opponent_chooses_as_the_referees_greedy_bot() -> None:
    rules = Rules.for_profile("big-two", {"revolution": True})
    rng = random.Random(1)
    compared = 0
    for trial in range(30):
        game = Game(rules)
        game.reset(f"greedy-{trial}")
        for _ in range(rng.randrange(0, 30)):
            game.step(rng.choice(game.legal_actions()))
            if game.to_act is None:
                break
        seat = game.to_act
        if seat is None or game.hand is None:
            continue
        masks, can_pass = game.legal_plays()
        order = rules.suit_order
        prompt = play_service.TurnPrompt(
            hand=card_list(game.hand.hands[seat], order),
            can_pass=can_pass,
            is_lead=game.hand.table is None,
        )
        for m in masks:
            combo = game.hand.ctx.classify(m)
            assert combo is not None
            prompt.legal_plays.add(cards=play_cards(m, order), combination=KIND_TO_PB[combo.kind])
        want = GreedyBot().choose(prompt)
        got = GreedyOpponent().act(game, seat, np.random.default_rng(0))
        assert game.dealt[seat].mask_of_action(got) == (parse_cards(want) if want else 0)
        compared += 1
    assert compared > 20


def test_an_opponent_pool_takes_self_play_snapshots() -> None:
    pool = OpponentPool({"random": 1.0})
    e = gymnasium.make(SEAT_ENV_ID, profile="big-two", opponents=pool, match_end="hands 1")
    e.reset(seed=0)
    assert set(e.unwrapped.opponents.values()) == {"random"}
    calls = []

    def snapshot(obs: dict[str, np.ndarray]) -> int:
        calls.append(obs["observation"].shape)
        return int(np.flatnonzero(obs["action_mask"])[-1])

    class Snapshot:  # a policy object with an act method of its own, as the example's
        def act(self, obs: dict[str, np.ndarray]) -> int:
            return snapshot(obs)

        __call__ = act

    pool.add("snapshot-1", Snapshot(), weight=1e9)
    e.reset(seed=1)
    assert set(e.unwrapped.opponents.values()) == {"snapshot-1"}
    done = False
    obs = e.reset(seed=2)[0]
    while not done:
        obs, _, terminated, truncated, _ = e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        done = terminated or truncated
    assert calls and calls[0] == (658,)


def test_the_vector_steps_many_tables_and_resets_them() -> None:
    tables = TableVector(5, profile="pusoy-dos-chips", match_end="hands 1")
    state = tables.reset(seed=9)
    ends = 0
    for _ in range(400):
        for i, game in enumerate(tables.games):  # each row is that table's own encoding
            seat = game.to_act
            assert seat == state.seat[i]
            np.testing.assert_array_equal(state.observation[i], game.observe(seat))
            np.testing.assert_array_equal(state.action_mask[i], game.action_mask())
        state = tables.step(tables.sample(state))
        for i in np.flatnonzero(state.terminated):
            ends += 1
            assert state.rewards[i].sum() == 0  # chips: zero-sum
            assert tables.games[i].match.hand_number == 1  # dealt anew at once
    assert ends >= 5
    with pytest.raises(IllegalAction, match="table 0"):
        bad = [int(np.flatnonzero(row == 0)[0]) for row in state.action_mask]
        tables.step(bad)


@pytest.mark.parametrize("kind", ["aec", "seat"])
def test_ansi_rendering_is_the_seats_text_replay(kind: str) -> None:
    if kind == "aec":
        e: Any = raw_env(profile="big-two", render_mode="ansi", render_seat=1)
        e.reset(seed=2)
        for _ in range(12):
            e.step(random_policy(0)(e.observe(e.agent_selection)))
    else:
        e = gymnasium.make(SEAT_ENV_ID, profile="big-two", render_mode="ansi", seat=1)
        obs, _ = e.reset(seed=2)
        for _ in range(3):
            obs = e.step(int(np.flatnonzero(obs["action_mask"])[0]))[0]
    text = e.render()
    assert "Hand 1" in text and "your cards:" in text and "Your turn" in text
    assert "the view of seat 1" in text


def test_a_policy_bot_decodes_actions_into_the_cards_of_its_hand() -> None:
    bot = PolicyBot(lambda obs: PASS_ACTION)
    welcome = play_service.Welcome(seat=0)
    welcome.config.rules.CopyFrom(common.Rules(suit_order="diamonds-low"))
    bot.on_welcome(welcome)
    dealt = common.Event()
    dealt.hand_dealt.hand_number = 1
    dealt.hand_dealt.hands.add(seat=0, cards=["2S", "3D", "9S", "9D"], count=4)
    bot.on_event(dealt)
    assert bot.encoder.cards(0) == ["3D"] and bot.encoder.cards(25) == ["9D", "9S"]
    assert bot.encoder.cards(PASS_ACTION) is None
