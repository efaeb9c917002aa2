#!/usr/bin/env python3
"""OpenSpiel's MCTS playing at a referee through the Python kit (docs/benchmark.md,
"The game in OpenSpiel").

At each prompt the bot builds the hand so far as a ``python_pusoy`` state (the game
``referee.openspiel`` registers): the cards the others cannot be seen to hold are dealt
at random to them in their numbers, each seat's own plays of this hand being its own,
and the hand's actions so far are replayed on it. OpenSpiel's ``MCTSBot`` (UCT with
random rollouts) searches that state, and its action (an index of the environments'
action index, docs/rl.md) is sent as cards. Needs the ``openspiel`` extra.

    referee match --profile big-two --hands 2 \\
        --bot "{python} examples/openspiel/mcts_bot.py --address={address}" \\
        --bot greedy --bot random --bot expert
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts

import referee.openspiel  # noqa: F401  (registers python_pusoy)
from pusoy_client import main
from pusoy_client.bot import Bot
from pusoy_client.prompt import Choice, Prompt, fallback
from pusoy_client.protocol import common, play_service
from pusoy_client.rl import PASS_ACTION, cards_mask
from pusoy_client.rl.seat import rule_options
from referee.rules import HAND_SIZE
from referee.rules.cards import iter_cards


class OpenSpielMCTSBot(Bot):
    name = "openspiel-mcts"

    def __init__(self, simulations: int, seed: int) -> None:
        self.simulations = simulations
        self.rng = np.random.RandomState(seed)
        self.game: pyspiel.Game | None = None
        self.bot: mcts.MCTSBot | None = None
        self.seat = -1
        self.dealt = 0
        self.moves: list[tuple[int, int]] = []
        """This hand's actions: (seat, cards mask; 0 for a pass)."""

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.seat = welcome.seat
        rules = welcome.config.rules
        params = {"profile": rules.profile}
        for name, value in rule_options(rules).items():
            if name in ("match_end", "tie_break"):
                continue
            params[name] = str(value).lower() if isinstance(value, bool) else str(value)
        params["match_end"] = "hands 1"  # one hand at a time: the search's horizon
        self.game = pyspiel.load_game("python_pusoy", params)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=self.rng)
        self.bot = mcts.MCTSBot(self.game, 2.0, self.simulations, evaluator, random_state=self.rng)

    def on_event(self, event: common.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "hand_dealt":
            self.moves = []
            for h in event.hand_dealt.hands:
                if h.seat == self.seat:
                    self.dealt = cards_mask(list(h.cards))
        elif kind == "played":
            self.moves.append((event.played.seat, cards_mask(list(event.played.play.cards))))
        elif kind == "passed":
            self.moves.append((event.passed.seat, 0))

    def choose(self, prompt: Prompt) -> Choice:
        if (
            self.game is None
            or self.bot is None
            or len(prompt.message.legal_plays) + prompt.can_pass < 2
        ):
            return fallback(prompt)
        state = self.determinised(prompt)
        if state is None or state.current_player() != self.seat:
            return fallback(prompt)  # a hand whose start this bot did not see
        action = self.bot.step(state)
        if action == PASS_ACTION:
            return None
        return list(state.action_to_struct(action).to_dict()["cards"])

    def determinised(self, prompt: Prompt) -> pyspiel.State | None:
        counts = list(prompt.state.card_counts)
        mine = cards_mask(list(prompt.hand))
        played = [0, 0, 0, 0]
        for seat, cards in self.moves:
            played[seat] |= cards
        seen = mine | sum(played)
        unseen = [c for c in range(52) if not seen >> c & 1]
        self.rng.shuffle(unseen)
        hands = [0, 0, 0, 0]
        for s in range(4):
            if s == self.seat:
                hands[s] = self.dealt
                continue
            take, unseen = unseen[: counts[s]], unseen[counts[s] :]
            hands[s] = played[s] | sum(1 << c for c in take)
        if any(h.bit_count() != HAND_SIZE for h in hands):
            return None
        state = self.game.new_initial_state()
        for h in hands:
            for c in iter_cards(h):
                state.apply_action(c)
        for seat, cards in self.moves:
            if state.current_player() != seat:
                return None
            state.apply_action(state.action_of(_texts(cards)))
        return state


def _texts(mask: int) -> list[str]:
    from referee.rules import card_text

    return [card_text(c) for c in iter_cards(mask)]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--simulations", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args, rest = ap.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    sys.exit(main(OpenSpielMCTSBot(args.simulations, args.seed)))
