#!/usr/bin/env python3
"""Benchmark of the rules engine (not a test; figures go to bench/RESULTS.md).

1. Random hands per second: big-two profile, a seeded deal, then until the first player
   is out: list the legal plays of the seat to act (``LegalPlays(...).masks``), pick one
   uniformly at random (the pass included when a pass is legal) and apply it.
2. Listing on a lead: median microseconds to list every legal play of a random 13-card
   hand on a fresh lead (a new ``LegalPlays`` each time, tables warm).
3. Brute force on the same hands: every subset of 1, 2, 3 and 5 cards classified and
   kept when it is a play, and the ratio to (2). The two lists are compared as sets.

Run from the repository root:

    .venv/bin/python bench/bench_rules.py
    .venv/bin/python bench/bench_rules.py --hands 5000 --leads 20000
"""

from __future__ import annotations

import argparse
import gc
import itertools
import platform
import random
import statistics
import time
from collections.abc import Callable

from referee.rules import (
    Action,
    Context,
    HandState,
    LegalPlays,
    Rules,
    context_for,
    deal,
)

TARGET_HANDS_PER_SECOND = 1000
TARGET_LEAD_LISTING_US = 25.0


def play_random_hand(rules: Rules, seed: str, rng: random.Random) -> int:
    """Play one hand of uniformly random legal actions; return the number of turns."""
    hands = deal(seed, 1)
    opening = 1 << rules.opening_card
    leader = next(s for s in range(4) if hands[s] & opening)
    hs = HandState(rules, hands, leader, opening)
    ctx_hands = hs.hands
    turns = 0
    while hs.winner is None:
        seat = hs.turn
        assert seat is not None
        plays = LegalPlays(hs.ctx, ctx_hands[seat], hs.table, hs.must_include, hs.lone_two_rule)
        options = plays.masks
        n = len(options) + (1 if plays.can_pass else 0)
        k = rng.randrange(n)
        hs.apply(seat, Action(options[k] if k < len(options) else 0))
        turns += 1
    return turns


def bench_hands(count: int, seed: int) -> tuple[float, float]:
    """(hands per second, turns per second) over ``count`` random hands."""
    rules = Rules.for_profile("big-two")
    rng = random.Random(seed)
    for i in range(20):  # warm the context and table caches
        play_random_hand(rules, f"warm/{i}", rng)
    turns = 0
    start = time.perf_counter()
    for i in range(count):
        turns += play_random_hand(rules, f"bench/{seed}/{i}", rng)
    elapsed = time.perf_counter() - start
    return count / elapsed, turns / elapsed


def random_hands(count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    deck = list(range(52))
    out = []
    for _ in range(count):
        mask = 0
        for c in rng.sample(deck, 13):
            mask |= 1 << c
        out.append(mask)
    return out


def brute_force_lead(ctx: Context, hand: int) -> list[int]:
    """Every play of ``hand`` on a lead, by classifying every subset of 1, 2, 3, 5 cards."""
    bits = []
    m = hand
    while m:
        low = m & -m
        bits.append(low)
        m ^= low
    classify = ctx.classify
    out = []
    for size in (1, 2, 3, 5):
        for combo in itertools.combinations(bits, size):
            mask = 0
            for b in combo:
                mask |= b
            if classify(mask) is not None:
                out.append(mask)
    return out


def engine_lead(ctx: Context, hand: int) -> list[int]:
    return LegalPlays(ctx, hand).masks


def time_each(
    fn: Callable[[Context, int], list[int]], ctx: Context, hands: list[int]
) -> list[float]:
    """Microseconds per call, one call per hand, garbage collection paused."""
    out = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for hand in hands:
            t0 = clock()
            fn(ctx, hand)
            out.append((clock() - t0) / 1000)
    finally:
        gc.enable()
    return out


def bench_leads(count: int, brute_count: int, seed: int) -> dict[str, float]:
    ctx = context_for(Rules.for_profile("big-two"))
    hands = random_hands(count, seed)
    time_each(engine_lead, ctx, hands[:200])  # warm-up
    engine_us = time_each(engine_lead, ctx, hands)
    sample = hands[:brute_count]
    for hand in sample[:50]:
        if set(engine_lead(ctx, hand)) != set(brute_force_lead(ctx, hand)):
            raise SystemExit(f"engine and brute force disagree on hand {hand:#x}")
    brute_us = time_each(brute_force_lead, ctx, sample)
    engine_same = engine_us[:brute_count]
    plays = statistics.mean(len(engine_lead(ctx, h)) for h in hands[:1000])
    return {
        "engine_median": statistics.median(engine_us),
        "engine_p90": statistics.quantiles(engine_us, n=10)[-1],
        "engine_median_same": statistics.median(engine_same),
        "brute_median": statistics.median(brute_us),
        "ratio": statistics.median(brute_us) / statistics.median(engine_same),
        "mean_plays": plays,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the rules engine.")
    parser.add_argument("--hands", type=int, default=3000, help="random hands to play")
    parser.add_argument("--leads", type=int, default=20000, help="random 13-card hands to list")
    parser.add_argument("--brute", type=int, default=2000, help="hands for the brute force")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)

    print(f"python {platform.python_version()} ({platform.python_implementation()})")
    hands_per_s, turns_per_s = bench_hands(args.hands, args.seed)
    ok = "ok" if hands_per_s >= TARGET_HANDS_PER_SECOND else "BELOW TARGET"
    print(
        f"(1) random big-two hands: {hands_per_s:,.0f} hands/s ({turns_per_s:,.0f} turns/s) "
        f"over {args.hands} hands  [target >= {TARGET_HANDS_PER_SECOND}: {ok}]"
    )
    r = bench_leads(args.leads, args.brute, args.seed)
    ok = "ok" if r["engine_median"] <= TARGET_LEAD_LISTING_US else "ABOVE TARGET"
    print(
        f"(2) legal plays on a lead: median {r['engine_median']:.1f} us, "
        f"p90 {r['engine_p90']:.1f} us over {args.leads} random 13-card hands "
        f"(mean {r['mean_plays']:.1f} plays)  [target <= {TARGET_LEAD_LISTING_US:g} us: {ok}]"
    )
    print(
        f"(3) brute force (all 1/2/3/5-card subsets classified): median "
        f"{r['brute_median']:.1f} us over {args.brute} of the same hands; engine median on "
        f"those {r['engine_median_same']:.1f} us; ratio {r['ratio']:.0f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
