"""The sequential test: its statistic by hand, its course over match results, and its
error rates by seeded simulation."""

from __future__ import annotations

import math
import random
import time

import numpy as np
import pytest

from referee.rules import Scoring
from referee.tournament.config import ConfigError, SprtConfig
from referee.tournament.sprt import H0, H1, bounds, llr, sequential_test, simulate, verdicts

from .conftest import bot_entry, write_config
from .test_ratings import result


def test_the_statistic_by_hand():
    # Wald's bounds: ln(beta / (1 - alpha)) and ln((1 - beta) / alpha).
    assert bounds(0.05, 0.05) == (math.log(0.05 / 0.95), math.log(0.95 / 0.05))
    assert bounds(0.1, 0.2) == (math.log(0.2 / 0.9), math.log(0.8 / 0.1))
    # d = 1, 2 with H0: 0 and H1: 2; the mean 1.5 is between delta0 and delta1 + sd
    # (sd 0.5). Squares about 0: 1 + 4 = 5; about 2: 1 + 0 = 1; LLR = 2/2 ln(5/1).
    assert math.isclose(float(llr(2, 3, 5, 0.0, 2.0)), math.log(5))
    # d = 1, 2, 3 with H0: 0 and H1: 1: the mean 2 is beyond delta1 + sd (1 + 0.816),
    # so H1 is fitted at the mean: squares about 0: 14; about 2: 2; LLR = 3/2 ln(14/2).
    assert math.isclose(float(llr(3, 6, 14, 0.0, 1.0)), 1.5 * math.log(7))
    # d = -3, -1 (sum -4, squares 10), H0: 0, H1: 0.5: the mean -2 is below 0 - sd (1):
    # squares about 0.5: 12.25 + 2.25 = 14.5; about -2: 2; LLR = -ln(14.5 / 2).
    assert math.isclose(float(llr(2, -4, 10, 0.0, 0.5)), -math.log(7.25))
    # Every value exactly at delta1: no spread around H1, certainty.
    assert float(llr(4, 2.0, 1.0, 0.0, 0.5)) == math.inf
    assert float(llr(0, 0, 0, 0.0, 0.5)) == 0.0
    # Element-wise, as the simulation uses it.
    both = llr(np.array([2, 3]), np.array([3, 6]), np.array([5, 14]), 0.0, 2.0)
    assert both.shape == (2,) and math.isclose(both[0], math.log(5))
    config = SprtConfig("b", delta1=1.0, min_groups=3)
    v = verdicts(np.array([5.0, 5.0, -5.0, 0.0]), np.array([2, 3, 3, 9]), config)
    assert v.tolist() == [0, 1, -1, 0]  # 2 groups: too few to decide yet


BOTS = ["hero", "base", "c", "d"]
ROT = [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]


def group_results(group: int, advantage: int, rng: random.Random) -> list:
    """One deal group of four one-hand matches in which the hero scores ``advantage``
    fewer penalty points per hand than the baseline."""
    out = []
    for i, order in enumerate(ROT):
        seating = [BOTS[k] for k in order]
        base = rng.randint(3, 9)
        points = {"hero": base - advantage, "base": base, "c": 5, "d": 7}
        out.append(result(4 * group + i, group, seating, [points[b] for b in seating]))
    return out


def test_groups_enter_in_schedule_order_and_the_test_stops_at_a_decision():
    config = SprtConfig("base", delta1=1.0, min_groups=3)
    groups = [(g, 4, BOTS) for g in range(20)]
    rng = random.Random(3)
    results = [r for g in range(20) for r in group_results(g, 1 + g % 2, rng)]
    test = sequential_test(config, "hero", groups, Scoring.PENALTY)
    # Group 1 complete before group 0: it waits.
    for r in results[4:8]:
        assert not test.add(r)
    assert test.n == 0
    decided_by = None
    for r in results[:4] + results[8:]:
        if test.add(r):
            decided_by = r
            break
    assert test.decision == H1 and decided_by is not None
    # Differences of 1 and 2 points per hand alternate: mean 1.5 > delta1.
    assert [s.difference for s in test.steps[:4]] == [1.0, 2.0, 1.0, 2.0]
    assert test.n == len(test.steps) >= 3
    assert test.steps[-1].group == decided_by.group  # decided at the end of a group
    assert test.llr >= test.upper
    # More results change nothing once decided.
    steps = list(test.steps)
    for r in results:
        test.add(r)
    assert test.steps == steps
    # The same results in any order, or read back on a resume, give the same test.
    shuffled = results[: 4 * (decided_by.group + 1)]
    random.Random(5).shuffle(shuffled)
    again = sequential_test(config, "hero", groups, Scoring.PENALTY, shuffled)
    assert again.to_json() == test.to_json()
    assert "H1 accepted after" in test.verdict_text()


def test_no_advantage_is_accepted_as_h0_and_unfinished_groups_are_skipped():
    config = SprtConfig("base", delta1=1.0, min_groups=4)
    groups = [(g, 4, BOTS) for g in range(30)] + [(30, 4, ["c", "d", "e", "f"])]
    rng = random.Random(9)
    test = sequential_test(config, "hero", groups, Scoring.PENALTY)
    assert len(test.groups) == 30  # a table without both bots is not part of the test
    first = group_results(0, 0, rng)
    first[2] = result(2, 0, [BOTS[k] for k in ROT[2]], [0, 0, 0, 0], status="failed")
    for r in first:
        test.add(r)
    assert test.n == 0 and test.steps == []  # a group with a failed match says nothing
    g = 1
    while test.decision is None and g < 30:
        for r in group_results(g, 0, rng):
            test.add(r)
        g += 1
    assert test.decision == H0 and test.llr <= test.lower
    # Zero difference every time: each group is evidence against H1.
    assert test.n == config.min_groups


def test_an_undecided_test_reports_its_state():
    config = SprtConfig("base", delta1=5.0, min_groups=2)
    rng = random.Random(1)
    test = sequential_test(
        config, "hero", [(0, 4, BOTS)], Scoring.PENALTY, group_results(0, 2, rng)
    )
    assert test.decision is None and test.exhausted
    assert "no decision" in test.verdict_text()
    doc = test.to_json()
    assert doc["groups"] == 1 and doc["decision"] is None and doc["steps"][0]["group"] == 0


# Seeded simulation: error rates near alpha and beta. 2,000 runs give a standard error
# of about 0.005 on a rate of 0.05; the tolerance is four of those, and the lower
# bound shows the test is not merely timid.
@pytest.mark.parametrize(
    ("alpha", "beta", "effect", "laplace"),
    [(0.05, 0.05, 0.35, False), (0.1, 0.2, 0.3, True)],
)
def test_error_rates_by_simulation(alpha, beta, effect, laplace):
    started = time.monotonic()
    config = SprtConfig("base", delta1=effect, delta0=0.0, alpha=alpha, beta=beta)
    null = simulate(config, 0.0, 1.0, runs=2000, max_groups=600, seed=11, laplace=laplace)
    alt = simulate(config, effect, 1.0, runs=2000, max_groups=600, seed=12, laplace=laplace)
    assert null.undecided < 0.01 and alt.undecided < 0.01
    assert alpha / 2 < null.h1 < alpha + 0.02, null
    assert beta / 2 < alt.h0 < beta + 0.02, alt
    # Far from both hypotheses the test is nearly always right, and quick.
    strong = simulate(config, 3 * effect, 1.0, runs=500, max_groups=600, seed=13)
    assert strong.h1 > 0.99 and strong.mean_groups < alt.mean_groups
    # A candidate far better than delta1 (30 times, as a broken baseline would make it)
    # is accepted as soon as the minimum number of groups is in.
    crushing = simulate(config, 30 * effect, 1.0, runs=200, max_groups=600, seed=14)
    assert crushing.h1 == 1.0 and crushing.mean_groups == config.min_groups
    print(f"alpha {alpha} -> {null.h1:.4f}; beta {beta} -> {alt.h0:.4f};", null, alt)
    assert time.monotonic() - started < 30  # a budget, not a benchmark: it takes ~1 s


def test_sprt_configuration_is_checked(tmp_path):
    from referee.tournament.toml_reader import load_config

    bots = [bot_entry(n, builtin="greedy") for n in ("hero", "base", "c", "d")]

    def load(sprt: str, fmt: str = "gauntlet") -> object:
        path = write_config(tmp_path, bots, tournament={"format": fmt, "hero": "hero"})
        if fmt != "gauntlet":
            path.write_text(path.read_text().replace('hero = "hero"\n', ""))
        path.write_text(path.read_text() + "\n[sprt]\n" + sprt)
        return load_config(path)

    cfg = load('baseline = "base"\ndelta1 = 0.5\n')
    assert cfg.sprt == SprtConfig("base", 0.5)  # type: ignore[attr-defined]
    assert cfg.identity()["sprt"]["alpha"] == 0.05  # type: ignore[attr-defined]
    cases = [
        ('baseline = "base"\n', "sprt.delta1: required"),
        ('baseline = "nobody"\ndelta1 = 1\n', "sprt.baseline: no bot is named 'nobody'"),
        ('baseline = "hero"\ndelta1 = 1\n', "sprt.baseline: should be another bot"),
        ('baseline = "base"\ndelta1 = 0\n', "sprt.delta1: should be greater than delta0"),
        ('baseline = "base"\ndelta1 = 1\nalpha = 0.7\n', "sprt.alpha: should be between"),
        ('baseline = "base"\ndelta1 = 1\nmin_groups = 1\n', "sprt.min_groups"),
        ('baseline = "base"\ndelta1 = 1\nelo = 1\n', "sprt.elo: unknown key"),
    ]
    for text, message in cases:
        with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
            load(text)
    with pytest.raises(ConfigError, match='needs format = "gauntlet"'):
        load('baseline = "base"\ndelta1 = 1\n', fmt="round-robin")
    # Without [sprt] the identity has no such key: existing tournaments still resume.
    plain = write_config(tmp_path, bots, tournament={"format": "gauntlet", "hero": "hero"})
    assert "sprt" not in load_config(plain).identity()
