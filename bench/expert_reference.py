#!/usr/bin/env python3
"""The rule-based expert beside its paper's figures (docs/benchmark.md): how often it
wins a hand against three random bots and against three greedy bots.

Sugiyanto, Fernando and Tai (2021) report winning rates of 89.6% against a randomized AI
and 73.0% against a "conventional" one, under their own rules and scoring: a reference,
not a target. Here: big-two, the pool's anchors on the engine (``referee.rl``'s
opponents: the same decisions as at a referee), each deal played four times with the
expert in each seat, one hand a deal.

    .venv/bin/python bench/expert_reference.py --deals 500
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.rl.game import Game
from referee.rl.opponents import builtin
from referee.rules import Rules


def share_won(against: str, deals: int) -> tuple[float, float]:
    rules = Rules.for_profile("big-two", {"match_end": "hands 1"})
    expert, other = builtin("expert"), builtin(against)
    rng = np.random.default_rng(0)
    won = penalty = 0
    for d in range(deals):
        for seat in range(4):
            game = Game(rules)
            game.reset(f"expert-reference:{d}")
            while not game.over:
                s = game.to_act
                player = expert if s == seat else other
                game.step(player.act(game, s, rng))
            result = game.last_result
            assert result is not None
            won += result.winner == seat
            penalty += result.scores[seat]
    return won / (4 * deals), penalty / (4 * deals)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--deals", type=int, default=500)
    args = ap.parse_args()
    for against, paper in (("random", "89.6%"), ("greedy", "73.0% (their conventional AI)")):
        t = time.monotonic()
        share, pen = share_won(against, args.deals)
        print(
            f"expert against three {against}: won {share:.1%} of {4 * args.deals} hands, "
            f"{pen:.2f} penalty points a hand (paper: {paper}) [{time.monotonic() - t:.0f} s]"
        )


if __name__ == "__main__":
    main()
