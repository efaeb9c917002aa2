"""The game in OpenSpiel: ``python_pusoy``, registered with ``pyspiel.register_game`` on
import (the ``openspiel`` extra: ``pip install "pusoy-referee[openspiel]"``).

One OpenSpiel game is one match of the referee's exact rules (``referee.rules``, through
the environments' ``referee.rl.game.Game``): every profile and option is a game
parameter (``python_pusoy(profile=pusoy-dos,revolution=true,match_end=hands 2)``; an
empty value keeps the profile's). Each hand starts with 52 chance nodes, one card each,
uniformly among the cards not dealt yet: cards 0-12 to seat 0, 13-25 to seat 1, and so
on. Actions are the environments' action index (docs/rl.md: 1,665 actions, card
positions in the seat's sorted hand, 1664 the pass), so a policy trained in the
environments acts here unchanged; returns are the environments' rewards summed (the
match totals, signed so that more is better).

What a player sees, from the same encoder the environments use (the kit's
``pusoy_client.rl.Encoder``): the observation tensor is its 658 entries; the
information-state tensor is the same vector (a summary, not perfect recall); the
information-state string is perfect recall (the seat's dealt cards and every action of
the match in order, hidden cards left out); the observation string is the seat's view
in words. OpenSpiel 2.0's struct hooks give the state, a player's observation and the
actions as JSON-ready dicts: an action is ``{"cards": ["3D", "3S"]}`` or
``{"pass": true}``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pyspiel

from pusoy_client.rl import NUM_ACTIONS, OBS_SIZE, PASS_ACTION, cards_mask
from referee.rl.game import Game
from referee.rules import HAND_SIZE, OPTION_NAMES, MatchEnd, Rules, card_text, sorted_cards
from referee.rules.cards import iter_cards

SHORT_NAME = "python_pusoy"
DEFAULT_PROFILE = "big-two"
DEFAULT_HANDS_CAP = 100
"""Hands at most when the match ends at a threshold and no ``max_hands`` is given:
OpenSpiel needs a bound on a game's length."""
PARAMETERS: dict[str, str] = {"profile": DEFAULT_PROFILE, **dict.fromkeys(OPTION_NAMES, "")}
"""Every option as text (docs/rules.md); empty: the profile's value."""
_TURNS_PER_HAND = 4 * 52 + 8
"""A bound on a hand's turns: a play removes a card and at most three passes follow it
(and a few forced passes on a lead under the lone-2 rule)."""

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Pusoy Dos and Big Two (pusoy-referee's rules)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=4,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def rules_of(params: dict[str, Any]) -> Rules:
    """The Rules value of the game's parameters (OptionsError names a bad one)."""
    options = {k: v for k, v in params.items() if k != "profile" and str(v) != ""}
    return Rules.for_profile(str(params.get("profile") or DEFAULT_PROFILE), options)


class PusoyGame(pyspiel.Game):  # type: ignore[misc]
    """``python_pusoy``: one match of four seats."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        self.rules = rules_of(params)
        hands = self.rules.max_hands or (
            self.rules.match_end_value
            if self.rules.match_end is MatchEnd.HANDS
            else DEFAULT_HANDS_CAP
        )
        self.hands_cap = hands
        worst = 3 * HAND_SIZE * (3 if self.rules.scoring.value == "chips" else 1) + 5
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=52,
            num_players=4,
            min_utility=-float(worst * hands),
            max_utility=float(worst * hands),
            max_game_length=hands * (52 + _TURNS_PER_HAND),
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> PusoyState:
        return PusoyState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> PusoyObserver:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return PusoyObserver(perfect_recall=recall)


class _Match(Game):
    """The environments' ``Game``, copied cheaply: OpenSpiel clones a Python state with
    ``copy.deepcopy``, which would also copy what never changes once made (the rules,
    the encoder, each hand's position index), ten times the cost of the rest."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Match:
        other = copy.copy(self)
        other.match = self.match.clone()
        other.hand = other.match.hand
        other.played = list(self.played)
        other.held = list(self.held)
        other.dealt = list(self.dealt)
        other._legal = None
        return other


class PusoyState(pyspiel.State):  # type: ignore[misc]
    """A match: chance nodes while a hand is dealt, then the seats' turns."""

    def __init__(self, game: PusoyGame) -> None:
        super().__init__(game)
        self.rules = game.rules
        self.game = _Match(game.rules, hands_cap=game.hands_cap, auto_deal=False)
        self.game.reset("")
        self.dealing: list[int] = []
        """Cards dealt so far in the hand being dealt (in deal order)."""
        self.moves: list[tuple[int, int, str]] = []
        """Every seat action of the match: (hand, seat, its cards as text or "pass")."""
        self.dealt_text: list[list[list[str]]] = []
        """Each hand's dealt cards as text, by seat."""

    # -- the OpenSpiel API --------------------------------------------------------

    def current_player(self) -> int:
        g = self.game
        if g.over:
            return int(pyspiel.PlayerId.TERMINAL)
        if g.hand is None or g.hand.is_over:
            return int(pyspiel.PlayerId.CHANCE)
        assert g.to_act is not None
        return g.to_act

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self.game.legal_actions()) if player == self.game.to_act else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = sorted(set(range(52)) - set(self.dealing))
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self.dealing.append(int(action))
            if len(self.dealing) == 52:
                hands = [0, 0, 0, 0]
                for i, c in enumerate(self.dealing):
                    hands[i // HAND_SIZE] |= 1 << c
                self.dealing = []
                self.game.start_hand(hands)
                order = self.rules.suit_order
                self.dealt_text.append(
                    [[card_text(c) for c in sorted_cards(h, order)] for h in hands]
                )
            return
        seat = self.game.to_act
        assert seat is not None
        text = self._text(seat, int(action))
        self.moves.append((self.game.match.hand_number, seat, text))
        self.game.step(int(action))

    def _text(self, seat: int, action: int) -> str:
        if action == PASS_ACTION:
            return "pass"
        return " ".join(self.game.dealt[seat].text_of(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {card_text(int(action))} to seat {len(self.dealing) // HAND_SIZE}"
        return f"seat {player}: {self._text(player, int(action))}"

    def is_terminal(self) -> bool:
        return bool(self.game.over)

    def returns(self) -> list[float]:
        """The match totals, signed so that more is better, once the match is over
        (terminal rewards: what OpenSpiel's MCTS needs); zeros before."""
        if not self.game.over:
            return [0.0] * 4
        sign = self.game.sign
        return [float(sign * t) for t in self.game.match.totals]

    def __str__(self) -> str:
        g = self.game
        lines = [f"hand {g.match.hand_number}, totals {list(g.match.totals)}"]
        if g.hand is not None:
            order = self.rules.suit_order
            for s in range(4):
                cards = " ".join(card_text(c) for c in sorted_cards(g.hand.hands[s], order))
                lines.append(f"seat {s}: {cards}")
            lines.append(g.hand.describe())
        if self.dealing:
            lines.append(f"dealing: {len(self.dealing)} of 52 cards dealt")
        return "\n".join(lines)

    # -- OpenSpiel 2.0's struct hooks ------------------------------------------------

    def _to_struct(self) -> dict[str, Any]:
        g = self.game
        hand = g.hand
        order = self.rules.suit_order
        return {
            "hand_number": g.match.hand_number,
            "current_player": self.current_player(),
            "hands": [
                [card_text(c) for c in sorted_cards(hand.hands[s], order)] if hand else []
                for s in range(4)
            ],
            "table": sorted_text(hand.table.mask if hand and hand.table else 0, self.rules),
            "table_seat": hand.table_seat if hand and hand.table else None,
            "totals": list(g.match.totals),
            "history": [{"hand": h, "seat": s, "action": a} for h, s, a in self.moves],
        }

    def _to_observation_struct(self, player: int) -> dict[str, Any]:
        g = self.game
        hand = g.hand
        return {
            "seat": player,
            "hand_number": g.match.hand_number,
            "cards": sorted_text(hand.hands[player], self.rules) if hand else [],
            "card_counts": list(hand.card_counts()) if hand else [0, 0, 0, 0],
            "table": sorted_text(hand.table.mask if hand and hand.table else 0, self.rules),
            "played": sorted_text(g.played_all, self.rules) if hand else [],
            "totals": list(g.match.totals),
        }

    def _action_to_struct(self, player: int, action: int) -> dict[str, Any]:
        if player == pyspiel.PlayerId.CHANCE:
            return {"deal": card_text(int(action))}
        if int(action) == PASS_ACTION:
            return {"pass": True}
        return {"cards": self.game.dealt[player].text_of(int(action))}

    def _struct_to_actions(self, action: dict[str, Any]) -> list[int]:
        if action.get("pass"):
            return [PASS_ACTION]
        return [self.action_of(list(action["cards"]))]

    def action_of(self, cards: list[str]) -> int:
        """The action index of the seat to act playing ``cards`` (empty: the pass); from
        Python, where OpenSpiel makes no ActionStruct of a dict for a Python game."""
        seat = self.game.to_act
        if seat is None:
            raise ValueError("nobody is to play")
        if not cards:
            return PASS_ACTION
        return int(self.game.dealt[seat].action_of(cards_mask(cards)))


def sorted_text(mask: int, rules: Rules) -> list[str]:
    return [card_text(c) for c in sorted_cards(mask, rules.suit_order)]


class PusoyObserver:
    """OpenSpiel's PyObserver: the environments' encoder for the tensors; the view in
    words, or with ``perfect_recall`` the seat's whole history, for the strings."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: PusoyState, player: int) -> None:
        g = state.game
        if g.hand is None or not 0 <= player < 4:
            self.tensor.fill(0)
            return
        self.tensor[:] = g.observe(player)

    def string_from(self, state: PusoyState, player: int) -> str:
        g = state.game
        if self.perfect_recall:  # every card dealt to the seat, every action, in order
            hands = [" ".join(seats[player]) for seats in state.dealt_text]
            span = range(player * HAND_SIZE, (player + 1) * HAND_SIZE)
            dealing = " ".join(card_text(c) for i, c in enumerate(state.dealing) if i in span)
            if state.dealing:
                hands.append(dealing)
            dealt = " / ".join(f"[{h}]" for h in hands)
            moves = "; ".join(f"{h}:{s}:{a}" for h, s, a in state.moves)
            return f"seat {player} | dealt {dealt} | {moves}"
        if g.hand is None:
            return f"seat {player} | dealing"
        hand = g.hand
        mine = " ".join(sorted_text(hand.hands[player], state.rules))
        table = " ".join(sorted_text(hand.table.mask, state.rules)) if hand.table else "-"
        return (
            f"seat {player} | hand {g.match.hand_number} | cards [{mine}] | table [{table}] | "
            f"counts {list(hand.card_counts())} | totals {list(g.match.totals)}"
        )


def dealt_cards(hands: list[int]) -> list[int]:
    """The chance actions that deal ``hands`` (seat 0's 13 cards, then seat 1's, ...)."""
    return [c for h in hands for c in iter_cards(h)]


pyspiel.register_game(_GAME_TYPE, PusoyGame)


PLAYTHROUGH_GAME = f"{SHORT_NAME}(match_end=hands 1)"
PLAYTHROUGH_SEED = 2026


def playthrough() -> str:
    """A playthrough of one hand by OpenSpiel's own tool (``generate_playthrough``):
    docs/openspiel/python_pusoy.txt, checked in CI by replaying it."""
    from absl import flags
    from open_spiel.python.algorithms import generate_playthrough

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    text: str = generate_playthrough.playthrough(PLAYTHROUGH_GAME, None, seed=PLAYTHROUGH_SEED)
    return text


def replay(path: str) -> tuple[str, str]:
    """The playthrough file and what the tool makes of it again now."""
    from absl import flags
    from open_spiel.python.algorithms import generate_playthrough

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    original, new = generate_playthrough.replay(path)
    return original, new


if __name__ == "__main__":  # python -m referee.openspiel FILE: write the playthrough
    import sys

    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(playthrough())
