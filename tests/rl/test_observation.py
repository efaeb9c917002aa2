"""The observation: its layout as docs/rl.md gives it, and that it never holds a card
the seat may not know.

``reference`` writes an observation entry by entry from the documented layout, from the
engine's own state and the moves seen so far (nothing of the encoder's), and random
matches of every profile and many options compare it with the environment's.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from pusoy_client.rl import OBS_SIZE, PASS_ACTION, positions_of
from referee.rl import Game, raw_env
from referee.rules import HandState, IllegalActionError, Rules, deal, sorted_cards
from referee.rules.cards import SUIT_RANKS, iter_cards

KINDS = [
    "single",
    "pair",
    "triple",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
]

OPTION_MIXES: list[tuple[str, dict[str, Any]]] = [
    ("pusoy-dos", {}),
    ("pusoy-dos-chips", {}),
    ("big-two", {}),
    ("big-two", {"revolution": True, "bomb": True, "teams": True}),
    ("pusoy-dos", {"no_finish_on_lone_two": True, "lowest_straight_beats_straights": True}),
    ("pusoy-dos-chips", {"five_card_hands": False, "suit_order": "diamonds-low"}),
    ("big-two", {"pass_locks_out": True, "direction": "clockwise", "match_end": "threshold 40"}),
]


class Seen:
    """What every seat has seen, kept here from the moves (independently of the Game)."""

    def __init__(self) -> None:
        self.hand_number = 0
        self.dealt: list[list[int]] = []
        self.played = [0, 0, 0, 0]
        self.passed: set[int] = set()

    def new_hand(self, game: Game) -> None:
        hand = game.match.hand
        assert hand is not None
        order = game.rules.suit_order
        self.hand_number = game.match.hand_number
        self.dealt = [sorted_cards(h, order) for h in hand.hands]
        self.played = [0, 0, 0, 0]
        self.passed = set()

    def moved(self, seat: int, cards: int, table_before: int, table_after: int) -> None:
        if cards:
            self.played[seat] |= cards
            self.passed = set()
        else:
            self.passed.add(seat)
        if table_after == 0 and (cards or table_before):
            self.passed = set()  # the trick was cleared


def reference(game: Game, seen: Seen, seat: int) -> np.ndarray:
    """The observation of ``seat``, written from docs/rl.md's table."""
    rules: Rules = game.rules
    hand = game.match.hand
    assert isinstance(hand, HandState)
    sr = SUIT_RANKS[rules.suit_order]
    step = 1 if rules.direction.value == "clockwise" else 3
    rel = [(seat + k * step) % 4 for k in range(4)]
    out = np.zeros(OBS_SIZE, dtype=np.int64)

    def plane(offset: int, mask: int) -> None:
        for c in iter_cards(mask):
            out[offset + (c >> 2) * 4 + sr[c & 3]] = 1

    plane(0, hand.hands[seat])
    for k in range(4):
        plane(52 + 52 * k, seen.played[rel[k]])
    plane(260, seen.played[0] | seen.played[1] | seen.played[2] | seen.played[3])
    if hand.table is not None:
        plane(312, hand.table.mask)
    for p, c in enumerate(seen.dealt[seat]):
        out[364 + 17 * p + (c >> 2)] = 1
        out[364 + 17 * p + 13 + sr[c & 3]] = 1
        out[585 + p] = hand.hands[seat] >> c & 1
    m = game.match
    for k, s in enumerate(rel):
        out[598 + k] = hand.hands[s].bit_count()
        out[602 + k] = max(-128, min(127, m.totals[s]))
        out[606 + k] = min(127, m.hands_won[s])
        out[611 + k] = hand.table is not None and hand.table_seat == s
        out[615 + k] = s in seen.passed
        out[619 + k] = hand.locked[s]
    out[610] = min(127, m.hand_number)
    if hand.table is not None:
        out[623 + KINDS.index(hand.table.kind.value)] = 1
    out[631] = hand.table is None
    out[632] = bool(hand.must_include)
    out[633] = hand.revolution
    out[634] = hand.lone_two_rule
    out[635 + seat] = 1
    kind, value = rules.options()["match_end"].split()
    out[639:658] = [
        rules.suit_order.value == "diamonds-low",
        rules.direction.value == "counterclockwise",
        rules.first_lead.value == "opening-card-every-hand",
        rules.pass_locks_out,
        rules.five_card_categories.value == "locked",
        rules.straights.value == "wrap-high",
        rules.straights.value == "none-with-two",
        rules.straights.value == "wrap-low",
        rules.five_card_hands,
        rules.lowest_straight_beats_straights,
        rules.no_finish_on_lone_two,
        rules.revolution,
        rules.bomb,
        rules.teams,
        rules.scoring.value == "chips",
        rules.tie_break.value == "hands-won-then-seat",
        kind == "hands",
        min(127, int(value)),
        rules.multiplier_from,
    ]
    return out


def random_match(profile: str, options: dict[str, Any], seed: int, check: Any) -> int:
    """Play a random match in the AEC environment; ``check(env, seen, seat)`` at every turn
    for every seat. Returns the number of turns."""
    env = raw_env(profile=profile, hands_cap=4, **options)
    env.reset(seed=seed)
    rng = random.Random(seed)
    seen = Seen()
    turns = 0
    while not (all(env.terminations.values()) or all(env.truncations.values())):
        game = env.game
        if game.match.hand_number != seen.hand_number:
            seen.new_hand(game)
        for s in range(4):
            check(env, seen, s)
        legal = game.legal_actions()
        action = legal[rng.randrange(len(legal))]
        seat = game.to_act
        assert seat is not None
        before = game.match.hand
        assert before is not None
        table_before = before.table.mask if before.table else 0
        cards = (
            0
            if action == PASS_ACTION
            else sum(1 << seen.dealt[seat][p] for p in positions_of(action))
        )
        hand_before = game.match.hand_number
        env.step(action)
        after = game.match.hand
        if game.match.hand_number == hand_before and after is not None:
            seen.moved(seat, cards, table_before, after.table.mask if after.table else 0)
        turns += 1
    return turns


@pytest.mark.parametrize(("profile", "options"), OPTION_MIXES)
def test_observations_follow_the_documented_layout(profile: str, options: dict[str, Any]) -> None:
    def check(env: Any, seen: Seen, seat: int) -> None:
        obs = env.observe(f"seat_{seat}")["observation"]
        assert obs.dtype == np.int8 and obs.shape == (OBS_SIZE,)
        np.testing.assert_array_equal(obs, reference(env.game, seen, seat))

    assert random_match(profile, options, 7, check) > 50


def test_no_observation_holds_a_card_of_another_seat() -> None:
    """Every card in any card plane or position of seat s's observation is one of s's
    own dealt cards, or one that was played on the table this hand."""

    def check(env: Any, seen: Seen, seat: int) -> None:
        game = env.game
        obs = env.observe(f"seat_{seat}")["observation"]
        sr = SUIT_RANKS[game.rules.suit_order]
        card_at = {(c >> 2) * 4 + sr[c & 3]: c for c in range(52)}
        public = seen.played[0] | seen.played[1] | seen.played[2] | seen.played[3]
        mine = sum(1 << c for c in seen.dealt[seat])
        for p in range(7):
            for i in np.flatnonzero(obs[52 * p : 52 * (p + 1)]):
                c = card_at[int(i)]
                assert (mine | public) >> c & 1, f"plane {p} of seat {seat} holds a hidden card"
        for p in range(13):
            block = obs[364 + 17 * p : 364 + 17 * (p + 1)]
            if block.any():
                rank = int(np.flatnonzero(block[:13])[0])
                strength = int(np.flatnonzero(block[13:])[0])
                assert card_at[rank * 4 + strength] == seen.dealt[seat][p]

    for i, (profile, options) in enumerate(OPTION_MIXES):
        random_match(profile, options, 100 + i, check)


@pytest.mark.parametrize("profile", ["pusoy-dos", "pusoy-dos-chips", "big-two"])
def test_observations_do_not_change_with_the_others_hidden_cards(profile: str) -> None:
    """Deal the other seats' unplayed cards differently, replay the same moves: every
    observation (and mask) of the seat stays the same, so none depends on them."""
    rules = Rules.for_profile(profile)
    rng = random.Random(profile)
    compared = 0
    for trial in range(12):
        game = Game(rules, auto_deal=False)
        game.reset(f"hidden-{trial}")
        hands = list(deal(f"hidden-{trial}", 1))
        game.start_hand(hands)
        moves: list[tuple[int, int]] = []
        for _ in range(rng.randrange(5, 40)):
            seat = game.to_act
            if seat is None:
                break
            masks, can_pass = game.legal_plays()
            options = [*masks, 0] if can_pass else masks
            cards = options[rng.randrange(len(options))]
            moves.append((seat, cards))
            game.play(seat, cards)
        viewer = rng.randrange(4)
        others = [s for s in range(4) if s != viewer]
        left = [game.match.hand.hands[s] if game.match.hand else 0 for s in range(4)]
        pool = [c for s in others for c in iter_cards(left[s])]
        rng.shuffle(pool)
        other_hands = list(hands)
        i = 0
        for s in others:
            n = left[s].bit_count()
            other_hands[s] = (hands[s] & ~left[s]) | sum(1 << c for c in pool[i : i + n])
            i += n
        if other_hands == hands:
            continue
        first, second = Game(rules, auto_deal=False), Game(rules, auto_deal=False)
        for g, h in ((first, hands), (second, other_hands)):
            g.reset(f"hidden-{trial}")
            g.start_hand(h)
        try:
            for seat, cards in moves:
                np.testing.assert_array_equal(first.observe(viewer), second.observe(viewer))
                if seat == viewer:
                    assert first.legal_actions() == second.legal_actions()
                first.play(seat, cards)
                second.play(seat, cards)
                compared += 1
        except IllegalActionError:  # a pass on a lead can depend on the cards held: rare
            continue
        np.testing.assert_array_equal(first.observe(viewer), second.observe(viewer))
    assert compared > 100
