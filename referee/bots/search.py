"""The search anchor: determinised Monte Carlo over the exact engine, its budget counted
in simulations (never in time), so that its play is the same on any machine.

At each decision with a choice, the cards the seat cannot see are dealt at random to the
other seats in their numbers (a *determinisation*), the candidate play is made on the
engine's ``HandState``, and the hand is played out to its end by a fast default policy
(greedy, ``referee.bots.strategies.greedy_pick``'s rule) for every seat; the seat's score
for the hand is the play's reward. The candidates share their determinisations (paired
comparisons) and are narrowed by sequential halving: each round spends an equal part of
the budget on the candidates left, and the better half goes on. The most rewarded
candidate is played.

Reproducible: the random deals come from a seed made of the position and the bot's
seed (``Position.seed``), so a decision depends on the position alone, not on what
was decided before it or on the machine's speed.
"""

from __future__ import annotations

import math
import random

from referee.bots.expert import expert_pick, partition
from referee.bots.position import Position
from referee.rules import (
    PASS,
    Action,
    HandState,
    LegalPlays,
    Scoring,
    context_for,
    score_hand,
)

SIMULATIONS = 300
"""The anchor's budget: playouts per decision (pool v1). Measured while writing it,
against the expert and two greedy on 100 duplicate deals, 200 to 600 playouts and
other playout policies (greedy that keeps pairs, greedy that blocks a seat about to go
out, the expert for the searching seat) played alike within the noise (±0.45 points per
hand); the cheapest was kept."""
MAX_CANDIDATES = 12

"""Plays searched at one decision at most; more are narrowed to the likely ones."""


def greedy_playout(state: HandState) -> int:
    """Play the hand out with the greedy rule for every seat; the winner."""
    key = state.ctx.single_key
    while state.winner is None:
        seat = state.turn
        assert seat is not None
        held = state.hands[seat]
        masks = LegalPlays(
            state.ctx, held, state.table, state.must_include, state.lone_two_rule
        ).masks
        if not masks:
            state.apply_legal(seat, PASS)
        elif state.table is not None:
            state.apply_legal(seat, Action(masks[0]))
        else:
            low = min((c for c in range(52) if held >> c & 1), key=key.__getitem__)
            with_low = [m for m in masks if m >> low & 1] or masks
            longest = max(m.bit_count() for m in with_low)
            state.apply_legal(seat, Action(next(m for m in with_low if m.bit_count() == longest)))
    return state.winner


def candidates(pos: Position) -> list[int]:
    """The plays searched (0: the pass): all of them when few, else the pass, the
    expert's choice, the plays that keep the hand's groups whole, and the weakest and
    strongest play of each size, up to ``MAX_CANDIDATES``, in a fixed order."""
    every = [*pos.plays, *([0] if pos.can_pass else [])]
    if len(every) <= MAX_CANDIDATES:
        return every
    picked: list[int] = []

    def add(m: int | None) -> None:
        if m is not None and m not in picked and len(picked) < MAX_CANDIDATES:
            picked.append(m)

    if pos.can_pass:
        add(0)
    add(expert_pick(pos))
    groups = set(partition(context_for(pos.rules, pos.revolution), pos.hand))
    for m in pos.plays:
        if m in groups:
            add(m)
    for size in (5, 3, 2, 1):
        sized = [m for m in pos.plays if m.bit_count() == size]
        if sized:
            add(sized[0])
            add(sized[-1])
    for m in pos.plays:
        add(m)
    return picked


def search_pick(pos: Position, simulations: int = SIMULATIONS, salt: int | str = 0) -> int | None:
    """The search's play at ``pos`` (a mask), or None to pass."""
    arms = candidates(pos)
    if len(arms) == 1:
        return arms[0] or None
    rng = random.Random(pos.seed(salt))
    sign = 1 if pos.rules.scoring is Scoring.CHIPS else -1
    seat = pos.seat
    total = [0.0] * len(arms)
    count = [0] * len(arms)
    alive = list(range(len(arms)))
    rounds = max(1, math.ceil(math.log2(len(arms))))
    for r in range(rounds):
        for _ in range(max(1, simulations // rounds // len(alive))):
            hands = pos.deal_unseen(rng)
            for i in alive:
                state = pos.hand_state(hands)
                state.apply_legal(seat, Action(arms[i]) if arms[i] else PASS)
                winner = greedy_playout(state)
                total[i] += sign * score_hand(pos.rules, state.hands, winner)[seat]
                count[i] += 1
        alive.sort(key=lambda i: (-total[i] / count[i], i))
        if r < rounds - 1:
            alive = sorted(alive[: (len(alive) + 1) // 2])
    best = alive[0]
    return arms[best] or None
