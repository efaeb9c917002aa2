"""Error rates of the tournament's sequential test, by seeded simulation.

Runs ``referee.tournament.sprt.simulate`` (the same LLR and stopping rule a gauntlet's
``[sprt]`` uses) for several alpha/beta pairs, effect sizes and distributions of the
per-group differences, and prints false positive and false negative rates with the
average number of deal groups. The figures in docs/tournaments.md come from here; the
CI version is tests/tournament/test_sprt.py.

    .venv/bin/python bench/bench_sprt.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import time

from referee.tournament.config import SprtConfig
from referee.tournament.sprt import simulate

CASES = [
    # alpha, beta, delta1 (in sd of the differences), Laplace tails
    (0.05, 0.05, 0.35, False),
    (0.10, 0.20, 0.30, True),
    (0.05, 0.05, 0.20, False),
    (0.05, 0.05, 0.20, True),
    (0.05, 0.05, 0.50, False),
    (0.05, 0.05, 1.00, False),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--max-groups", type=int, default=1500)
    args = parser.parse_args()
    print(
        f"{'alpha':>5} {'beta':>5} {'delta1':>6} {'tails':>7} {'FP':>6} {'FN':>6} "
        f"{'groups H0':>9} {'groups H1':>9} {'undecided':>9}"
    )
    started = time.monotonic()
    for i, (alpha, beta, effect, laplace) in enumerate(CASES):
        config = SprtConfig("baseline", delta1=effect, alpha=alpha, beta=beta)
        kw = {"runs": args.runs, "max_groups": args.max_groups, "laplace": laplace}
        null = simulate(config, 0.0, 1.0, seed=2 * i + 1, **kw)  # type: ignore[arg-type]
        alt = simulate(config, effect, 1.0, seed=2 * i + 2, **kw)  # type: ignore[arg-type]
        print(
            f"{alpha:>5} {beta:>5} {effect:>6} {'Laplace' if laplace else 'normal':>7} "
            f"{null.h1:>6.3f} {alt.h0:>6.3f} {null.mean_groups:>9.1f} {alt.mean_groups:>9.1f} "
            f"{max(null.undecided, alt.undecided):>9.4f}"
        )
    print(f"{args.runs} runs per cell, min_groups 10, {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
