"""The benchmark's statistics (``referee.benchmark.score``) on results whose answer is
known."""

from __future__ import annotations

import math
import random

import pytest

from referee.benchmark.score import (
    Comparison,
    Group,
    comparisons,
    fit_candidate,
    fit_pool,
    groups_of,
    pool_comparisons,
    versus,
)
from referee.log.summary import SeatSummary
from referee.tournament.results import MatchResult, SeatResult

RATINGS = {"random": 0.0, "greedy": 300.0, "expert": 500.0}


def _bt(diff: float) -> float:
    return 1 / (1 + 10 ** (-diff / 400))


def _draws(true: float, deals: int, seed: int) -> list[Comparison]:
    rng = random.Random(seed)
    out = []
    for d in range(deals):
        for anchor, r in RATINGS.items():
            won = rng.random() < _bt(true - r)
            out.append(Comparison(d, anchor, 1.0 if won else 0.0, 1.0 if won else -1.0))
    return out


def test_the_score_finds_a_known_rating_within_its_interval():
    """Simulated results of a candidate of rating 350 against the anchors: its 95%
    interval holds 350 in about 95% of runs, and more deals narrow it."""
    hits = 0
    runs = 200
    for seed in range(runs):
        r = fit_candidate(_draws(350.0, 60, seed), RATINGS)
        hits += r.low <= 350.0 <= r.high
    assert 0.9 <= hits / runs <= 0.99
    narrow = fit_candidate(_draws(350.0, 400, 1), RATINGS)
    wide = fit_candidate(_draws(350.0, 25, 1), RATINGS)
    assert narrow.high - narrow.low < (wide.high - wide.low) / 2


def test_a_candidate_that_always_wins_gets_a_finite_score_above_every_anchor():
    comps = [Comparison(d, a, 1.0, 2.0) for d in range(20) for a in RATINGS]
    r = fit_candidate(comps, RATINGS)
    assert math.isfinite(r.value) and r.value > max(RATINGS.values())


def test_the_same_results_in_another_order_give_the_same_score():
    comps = _draws(200.0, 40, 7)
    a = fit_candidate(comps, RATINGS)
    b = fit_candidate(list(reversed(comps)), RATINGS)
    assert (a.value, a.low, a.high) == pytest.approx((b.value, b.low, b.high), abs=1e-9)


def test_the_pool_fit_recovers_known_ratings():
    truth = {"random": 0.0, "greedy": 250.0, "expert": 450.0, "search": 520.0}
    rng = random.Random(3)
    comps = []
    names = list(truth)
    for _ in range(3000):
        a, b = rng.sample(names, 2)
        comps.append((a, b, 1.0 if rng.random() < _bt(truth[a] - truth[b]) else 0.0))
    fitted = fit_pool(comps, names, fixed="random")
    assert fitted["random"] == 0
    for n in names:
        assert fitted[n] == pytest.approx(truth[n], abs=40)


def _match(group: int, seats: list[tuple[str, list[int], list[int]]]) -> MatchResult:
    return MatchResult(
        match_id=f"m{group}-{seats[0][0]}",
        index=0,
        group=group,
        round=group,
        table=0,
        seating=0,
        seed="s",
        status="finished",
        error="",
        referee_match_id="r",
        log="",
        hands=len(seats[0][1]),
        verified=True,
        started="",
        duration_s=0.0,
        seats=tuple(
            SeatResult(bot, SeatSummary(seat=i, scores=tuple(sc), faulty_hands=tuple(f)))
            for i, (bot, sc, f) in enumerate(seats)
        ),
    )


def test_clean_results_leave_out_the_hands_with_the_candidates_faults():
    """Hand 2 of the first match had a timeout of the candidate: the clean comparison
    leaves that hand out for everybody at that match."""
    matches = [
        _match(
            0,
            [
                ("cand", [0, 30], [2]),
                ("greedy", [5, 0], []),
                ("random", [9, 9], []),
                ("x", [9, 9], []),
            ],
        ),
    ] + [
        _match(
            0,
            [
                ("cand", [0, 4], []),
                ("greedy", [5, 0], []),
                ("random", [9, 9], []),
                ("x", [9, 9], []),
            ],
        )
        for _ in range(3)
    ]
    raw = groups_of(matches)
    clean = groups_of(matches, clean_for="cand")
    assert raw[0].hands == 8 and clean[0].hands == 7
    assert raw[0].per_hand["cand"] == pytest.approx((30 + 4 * 3) / 8)
    assert clean[0].per_hand["cand"] == pytest.approx(12 / 7)
    assert clean[0].per_hand["greedy"] == pytest.approx((5 + 3 * 5) / 7)
    vs = {v.anchor: v for v in versus(comparisons(clean, "cand", chips=False), {"greedy": 0.0})}
    assert vs["greedy"].win_rate == 1.0
    vs_raw = {v.anchor: v for v in versus(comparisons(raw, "cand", chips=False), {"greedy": 0.0})}
    assert vs_raw["greedy"].win_rate == 0.0


def test_a_group_with_a_failed_match_is_left_out():
    m = _match(1, [("a", [1], []), ("b", [2], []), ("c", [3], []), ("d", [0], [])])
    failed = MatchResult(
        **{**{f: getattr(m, f) for f in m.__dataclass_fields__}, "status": "failed"}
    )
    assert groups_of([m, m, m, failed]) == []
    assert len(groups_of([m, m, m, m])) == 1
    assert pool_comparisons(groups_of([m] * 4), chips=False)[0] == ("a", "b", 1.0)


def test_the_advantage_is_signed_for_the_scoring():
    g = [Group(0, 0, {"cand": 2.0, "a": 5.0}, 4)]
    assert comparisons(g, "cand", chips=False)[0].outcome == 1.0
    assert comparisons(g, "cand", chips=True)[0].outcome == 0.0
