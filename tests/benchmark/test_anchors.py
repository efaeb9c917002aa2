"""The anchors (``referee.bots``: expert, search, policy) play the same through a referee
as on the engine, decide from the position alone, and know nothing they may not."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from referee_cli import run_referee

from referee.bots.expert import expert_pick, is_boss, partition
from referee.bots.position import from_hand
from referee.bots.search import candidates, search_pick
from referee.log.reader import read_log
from referee.rl.game import Game
from referee.rl.opponents import builtin
from referee.rules import Action, MatchState, Rules, context_for, deal

PROFILES = ["big-two", "pusoy-dos", "pusoy-dos-chips"]


def _positions(rules: Rules, seed: str, chooser=None):
    """Every position of a hand dealt from ``seed``, played by uniform random choice."""
    match = MatchState(rules)
    hand = match.start_hand(list(deal(seed, 1)))
    rng = random.Random(seed)
    played = 0
    while not hand.is_over:
        pos = from_hand(hand, played)
        yield hand, pos
        options = [*pos.plays, *([0] if pos.can_pass else [])]
        play = chooser(pos) if chooser else rng.choice(options)
        hand.apply(pos.seat, Action(play or 0))
        played |= play or 0


@settings(max_examples=25, deadline=None)
@given(profile=st.sampled_from(PROFILES), seed=st.text(max_size=8), revolution=st.booleans())
def test_a_position_rebuilt_with_the_true_cards_is_the_hand_itself(profile, seed, revolution):
    """``Position.hand_state`` with every seat's real cards is the engine's hand: the
    same turn, the same legal plays, the same next states (what a search plays on)."""
    rules = Rules.for_profile(
        profile, {"revolution": revolution, "pass_locks_out": profile != "big-two"}
    )
    for hand, pos in _positions(rules, seed):
        rebuilt = pos.hand_state(hand.hands)
        assert rebuilt.turn == hand.turn
        assert rebuilt.legal_plays().masks == hand.legal_plays().masks
        assert rebuilt.legal_plays().can_pass == hand.legal_plays().can_pass
        assert from_hand(rebuilt, pos.played) == pos


@settings(max_examples=20, deadline=None)
@given(seed=st.text(max_size=8), draw=st.integers(0, 2**32))
def test_a_determinisation_keeps_what_the_seat_knows(seed, draw):
    """The cards dealt to the others are exactly the unseen ones, in their numbers; the
    seat's own are untouched."""
    rules = Rules.for_profile("big-two")
    for _, pos in _positions(rules, seed):
        hands = pos.deal_unseen(random.Random(draw))
        assert hands[pos.seat] == pos.hand
        others = [h for s, h in enumerate(hands) if s != pos.seat]
        assert (
            sum(others) == pos.unseen
            and sum(h.bit_count() for h in others) == pos.unseen.bit_count()
        )
        assert [h.bit_count() for h in hands] == list(pos.counts)


def test_the_anchors_choose_legal_plays_and_depend_on_the_position_alone():
    rules = Rules.for_profile("big-two")
    for _, pos in _positions(rules, "anchors", chooser=expert_pick):
        for pick in (expert_pick(pos), search_pick(pos, 60)):
            assert (pick is None and pos.can_pass) or pick in pos.plays
        assert search_pick(pos, 60) == search_pick(pos, 60)
        arms = candidates(pos)
        assert len(arms) == len(set(arms)) <= 12


def test_a_boss_cannot_be_beaten_by_any_unseen_cards():
    rules = Rules.for_profile("big-two")
    ctx = context_for(rules)
    two_spades = 1 << (12 * 4 + 1)
    assert is_boss(ctx, two_spades, unseen=(1 << 52) - 1 - two_spades, most_held=13)
    two_hearts = 1 << (12 * 4 + 2)
    assert not is_boss(ctx, two_hearts, unseen=two_spades, most_held=1)
    assert is_boss(ctx, two_hearts, unseen=two_spades, most_held=0)
    hand = deal("partition", 1)[0]
    groups = partition(ctx, hand)
    assert sum(groups) == hand and all(ctx.classify(g) for g in groups)


def test_the_anchors_play_through_a_referee_as_on_the_engine(tmp_path: Path):
    """One match at a referee (``referee match``, real gRPC, each anchor a built-in bot
    deciding from its prompts; the search in its worker process) and the same match on
    the engine (the environments' opponents, deciding from the engine's state): every
    play and every score are the same."""
    seats = ["expert", "search", "policy", "greedy"]
    proc = run_referee(
        "match",
        *(x for s in seats for x in ("--bot", s)),
        "--profile",
        "big-two",
        "--hands",
        "2",
        "--seed",
        "parity",
        "--turn-time-ms",
        "20000",
        "--log-dir",
        str(tmp_path / "logs"),
        "--state-dir",
        str(tmp_path / "state"),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    at_referee = []
    for line in read_log(log).lines:
        if line.kind in ("played", "passed"):
            body = getattr(line.entry.event, line.kind)
            assert not body.default_cause, "an anchor's turn was played by default"
            at_referee.append(
                (body.seat, tuple(sorted(body.play.cards)) if line.kind == "played" else ())
            )
    rules = Rules.for_profile("big-two", {"match_end": "hands 2"})
    game = Game(rules)
    game.reset("parity")
    players = [builtin(s) for s in seats]
    rng = np.random.default_rng(0)
    on_engine = []
    while not game.over:
        seat = game.to_act
        action = players[seat].act(game, seat, rng)
        cards = () if action == 1664 else tuple(sorted(game.dealt[seat].text_of(action)))
        on_engine.append((seat, cards))
        game.step(action)
    assert at_referee == on_engine
