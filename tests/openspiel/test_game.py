"""The game in OpenSpiel (``referee.openspiel``): OpenSpiel's own checks, its
playthrough, the environments' encoder, the struct hooks, and OpenSpiel's MCTS playing a
match through a referee with the Python kit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from referee_cli import ROOT, run_referee

import referee.openspiel as spiel
from referee.log.reader import read_log
from referee.rl.game import Game
from referee.rules import Rules, deal

PLAYTHROUGH = ROOT / "docs" / "openspiel" / "python_pusoy.txt"


@pytest.mark.parametrize(
    "params",
    [
        {"profile": "big-two", "match_end": "hands 2"},
        {"profile": "pusoy-dos", "match_end": "threshold 12", "pass_locks_out": "true"},
        {
            "profile": "pusoy-dos-chips",
            "match_end": "hands 2",
            "revolution": "true",
            "bomb": "true",
        },
        {
            "profile": "big-two",
            "match_end": "hands 1",
            "no_finish_on_lone_two": "true",
            "teams": "true",
        },
    ],
)
def test_openspiel_checks_every_profile_and_option(params):
    """OpenSpiel's own random-simulation test (legal actions, chance outcomes, clones,
    returns, observations) on games of every profile and several house rules."""
    game = pyspiel.load_game(spiel.SHORT_NAME, params)
    assert game.num_players() == 4 and game.num_distinct_actions() == 1665
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


def test_a_bad_parameter_is_refused_naming_it():
    with pytest.raises(Exception, match="unknown profile"):
        pyspiel.load_game(spiel.SHORT_NAME, {"profile": "whist"})
    with pytest.raises(Exception, match="suit_order"):
        pyspiel.load_game(spiel.SHORT_NAME, {"suit_order": "hearts-low"})


def test_the_committed_playthrough_is_what_openspiels_tool_makes_now():
    """docs/openspiel/python_pusoy.txt, made by OpenSpiel's generate_playthrough, replayed
    by the same tool: any change to the game's behaviour shows as a difference."""
    original, new = spiel.replay_playthrough(str(PLAYTHROUGH))
    assert original == new


def test_tensors_come_from_the_environments_encoder():
    """After the same deal and the same actions, each player's observation tensor is the
    environments' observation of that seat."""
    rules = Rules.for_profile("big-two", {"match_end": "hands 1"})
    game = pyspiel.load_game(spiel.SHORT_NAME, {"match_end": "hands 1"})
    state = game.new_initial_state()
    hands = list(deal("spiel", 1))
    for card in spiel.dealt_cards(hands):
        state.apply_action(card)
    env = Game(rules, auto_deal=False)
    env.reset("spiel")
    env.start_hand(hands)
    rng = np.random.default_rng(4)
    while not state.is_terminal():
        for p in range(4):
            assert np.array_equal(
                np.array(state.observation_tensor(p)), env.observe(p).astype(np.float32)
            )
            assert state.information_state_tensor(p) == state.observation_tensor(p)
        actions = state.legal_actions()
        assert actions == sorted(env.legal_actions())
        a = actions[int(rng.integers(len(actions)))]
        state.apply_action(a)
        env.step(a)
    assert state.returns() == [-float(t) for t in env.match.totals]


def test_the_struct_hooks_give_json():
    game = pyspiel.load_game(spiel.SHORT_NAME, {"match_end": "hands 1"})
    state = game.new_initial_state()
    for card in spiel.dealt_cards(list(deal("structs", 1))):
        state.apply_action(card)
    seat = state.current_player()
    doc = json.loads(state.to_json())
    assert doc["current_player"] == seat and len(doc["hands"][seat]) == 13
    view = state.to_observation_struct(seat).to_dict()
    assert view["cards"] == doc["hands"][seat] and "hands" not in view
    other = (seat + 1) % 4
    assert state.to_observation_struct(other).to_dict()["cards"] == doc["hands"][other]
    for action in state.legal_actions():
        struct = state.action_to_struct(action)
        assert state.struct_to_actions(struct) == [action]
        assert state.action_of(struct.to_dict()["cards"]) == action
    # perfect recall: the seat's dealt cards and every action so far
    state.apply_action(state.legal_actions()[0])
    assert "dealt [" in state.information_state_string(seat)
    assert f"1:{seat}:" in state.information_state_string(other)


def test_openspiels_mcts_plays_a_match_through_the_referee(tmp_path: Path):
    """OpenSpiel's MCTSBot, seated with the Python kit (examples/openspiel/mcts_bot.py),
    spawned in its jail, plays a hand at a real referee: every turn its own, legal."""
    bot = (
        "{python} examples/openspiel/mcts_bot.py --simulations 12 --address={address}"
    )
    proc = run_referee(
        "match",
        "--profile",
        "big-two",
        "--hands",
        "1",
        "--seed",
        "openspiel",
        "--turn-time-ms",
        "20000",
        "--bot",
        bot,
        "--bot",
        "greedy",
        "--bot",
        "expert",
        "--bot",
        "random",
        "--log-dir",
        str(tmp_path / "logs"),
        "--state-dir",
        str(tmp_path / "s"),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    turns = []
    for line in read_log(log).lines:
        if line.kind in ("played", "passed"):
            body = getattr(line.entry.event, line.kind)
            if body.seat == 0:
                turns.append(body.default_cause)
        assert line.kind != "action_rejected" or line.entry.event.action_rejected.seat != 0
    assert turns and not any(turns), "the MCTS seat was played by default"
    stderr = next((tmp_path / "logs").glob("*.seat0.stderr")).read_text()
    assert "failed" not in stderr, stderr
