"""A sequential probability ratio test: is the candidate better than the baseline?

The data: one number per deal group in which both bots played and every match
finished, ``d`` = the candidate's score per hand minus the baseline's over the group
(signed so that positive means the candidate did better: fewer penalty points, or more
chips; ``referee.tournament.ratings.group_scores``). Both bots hold the same cards over
a group, so the luck of the deal cancels and the ``d`` are independent draws from one
distribution with mean ``delta`` (the candidate's true advantage) and an unknown spread.

The hypotheses, in score per hand:

- H0: ``delta = delta0`` (by default 0: no better);
- H1: ``delta = delta1`` (better by at least the margin that matters to you).

The statistic is the generalized log-likelihood ratio of a normal model whose variance
is estimated under each hypothesis (Wald's SPRT with the variance profiled out)::

    LLR(n) = n/2 * ln( sum (d_i - delta0)^2 / sum (d_i - delta1)^2 )

except when the mean of the ``d`` lies more than one of their standard deviations
beyond ``delta1`` (or below ``delta0``): then H1 is fitted at the mean (``llr``), so a
candidate far better (or worse) than the hypotheses is decided in a few groups.

After each deal group, once at least ``min_groups`` groups are in: LLR >= ln((1 - beta)
/ alpha) accepts H1, LLR <= ln(beta / (1 - alpha)) accepts H0, otherwise play on. A true
advantage of ``delta0`` or less then ends in H1 with probability about ``alpha`` (false
positive); an advantage of ``delta1`` or more ends in H0 with probability about
``beta`` (false negative). ``simulate`` measures both (tests/tournament/test_sprt.py);
the minimum number of groups keeps the variance estimate of the first few groups from
deciding too early.

Groups enter the test in schedule order, each once it and every earlier group of the
test have all their results: the test's course is a function of the results alone, the
same whatever the concurrency, the order matches ended in, or a resume.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.rules import Scoring
from referee.tournament.config import SprtConfig, TournamentConfig
from referee.tournament.ratings import group_scores
from referee.tournament.results import MatchResult, fed
from referee.tournament.schedule import MatchSpec

H1 = "H1"
"""The candidate is better (by ``delta1``)."""
H0 = "H0"
"""The candidate is not better (its advantage is ``delta0`` or less)."""

Floats = npt.NDArray[np.float64]


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's stopping bounds on the LLR: (accept H0 at or below, accept H1 at or above).

    >>> [round(b, 4) for b in bounds(0.05, 0.05)]
    [-2.9444, 2.9444]
    """
    return (math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))


def llr(
    n: npt.ArrayLike, total: npt.ArrayLike, squares: npt.ArrayLike, delta0: float, delta1: float
) -> Floats:
    """The LLR of H1 against H0 after ``n`` values with sum ``total`` and sum of squares
    ``squares``; element-wise on arrays (the simulation runs many tests at once).

    Between the hypotheses it is ``n/2 ln(S0 / S1)``, ``Sk = sum (d - delta_k)^2``. When
    the mean lies more than one standard deviation of the values beyond ``delta1`` (or
    below ``delta0``) it is ``n/2 ln(S0 / S)`` (``-n/2 ln(S1 / S)``), ``S`` the squares
    about the mean: the likelihood ratio of "at least delta1" against "at most delta0".
    Otherwise a candidate far better than ``delta1`` would look, to both point
    hypotheses, like noise, and take many groups to be accepted.

    >>> round(float(llr(2, 3, 5, 0.0, 2.0)), 4)  # d = 1, 2: between: ln(5 / 1)
    1.6094
    >>> round(float(llr(3, 6, 14, 0.0, 1.0)), 4)  # d = 1, 2, 3: beyond: 3/2 ln(14 / 2)
    2.9189
    """
    n_ = np.asarray(n, dtype=np.float64)
    s1 = np.asarray(total, dtype=np.float64)
    s2 = np.asarray(squares, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(n_ > 0, s1 / n_, 0.0)
        q0 = np.maximum(s2 - 2 * delta0 * s1 + n_ * delta0 * delta0, 0.0)
        q1 = np.maximum(s2 - 2 * delta1 * s1 + n_ * delta1 * delta1, 0.0)
        qm = np.maximum(s2 - n_ * mean * mean, 0.0)
        sd = np.sqrt(np.where(n_ > 0, qm / n_, 0.0))
        between = n_ / 2 * (np.log(q0) - np.log(q1))
        above = n_ / 2 * (np.log(q0) - np.log(qm))
        below = -n_ / 2 * (np.log(q1) - np.log(qm))
        out = np.where(
            n_ > 0,
            np.where(mean >= delta1 + sd, above, np.where(mean <= delta0 - sd, below, between)),
            0.0,
        )
    return np.asarray(out, dtype=np.float64)


def verdicts(values: Floats, n: npt.ArrayLike, config: SprtConfig) -> npt.NDArray[np.int8]:
    """Element-wise: 1 accepts H1, -1 accepts H0, 0 plays on."""
    lower, upper = bounds(config.alpha, config.beta)
    ready = np.asarray(n) >= config.min_groups
    out = np.where(ready & (values >= upper), 1, np.where(ready & (values <= lower), -1, 0))
    return out.astype(np.int8)


@dataclasses.dataclass(frozen=True, slots=True)
class Simulated:
    """What ``simulate`` measured over many tests with one true advantage."""

    runs: int
    h1: float
    """Share of runs that accepted H1."""
    h0: float
    """Share of runs that accepted H0."""
    undecided: float
    """Share of runs that reached ``max_groups`` without a decision."""
    mean_groups: float
    """Average number of deal groups a run took."""


def simulate(
    config: SprtConfig,
    delta: float,
    sd: float,
    *,
    runs: int = 2000,
    max_groups: int = 1000,
    seed: int = 0,
    laplace: bool = False,
) -> Simulated:
    """Run the test ``runs`` times on simulated deal groups whose differences have mean
    ``delta`` and standard deviation ``sd`` (normal, or Laplace for heavier tails).

    With ``delta = delta0`` the share of H1 is the false positive rate (about alpha);
    with ``delta = delta1`` the share of H0 is the false negative rate (about beta). The
    same ``llr`` and ``verdicts`` as a tournament's test decide each run."""
    rng = np.random.default_rng(seed)
    if laplace:
        d = delta + rng.laplace(0.0, sd / math.sqrt(2), (runs, max_groups))
    else:
        d = rng.normal(delta, sd, (runs, max_groups))
    n = np.arange(1, max_groups + 1, dtype=np.float64)
    values = llr(n, np.cumsum(d, axis=1), np.cumsum(d * d, axis=1), config.delta0, config.delta1)
    v = verdicts(values, n, config)
    decided = v != 0
    first = np.where(decided.any(axis=1), decided.argmax(axis=1), max_groups - 1)
    final = v[np.arange(runs), first]
    return Simulated(
        runs=runs,
        h1=float(np.mean(final == 1)),
        h0=float(np.mean(final == -1)),
        undecided=float(np.mean(final == 0)),
        mean_groups=float(np.mean(first + 1)),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One deal group entering the test."""

    group: int
    difference: float
    llr: float


class SequentialTest:
    """The test of one tournament, fed every match result (in any order)."""

    def __init__(
        self,
        config: SprtConfig,
        candidate: str,
        groups: Iterable[tuple[int, int, Sequence[str]]],
        scoring: Scoring,
    ) -> None:
        """``groups``: every deal group of the schedule as (group, matches, its bots)."""
        self.config = config
        self.candidate = candidate
        self.scoring = scoring
        self.lower, self.upper = bounds(config.alpha, config.beta)
        self.groups = [
            (g, size)
            for g, size, bots in sorted(groups)
            if candidate in bots and config.baseline in bots
        ]
        self._wanted = {g for g, _ in self.groups}
        self._pending: dict[int, list[MatchResult]] = defaultdict(list)
        self._next = 0
        self.n = 0
        self._sum = 0.0
        self._squares = 0.0
        self.llr = 0.0
        self.steps: list[Step] = []
        self.decision: str | None = None
        """H1 or H0 once decided; the test takes no more groups after that."""

    @property
    def exhausted(self) -> bool:
        """Every group of the schedule is in and the test did not decide."""
        return self.decision is None and self._next == len(self.groups)

    @property
    def mean(self) -> float:
        return self._sum / self.n if self.n else math.nan

    def add(self, result: MatchResult) -> bool:
        """Take one match result; True when this decided the test."""
        if self.decision is not None or result.group not in self._wanted:
            return False
        self._pending[result.group].append(result)
        while self.decision is None and self._next < len(self.groups):
            group, size = self.groups[self._next]
            if len(self._pending[group]) < size:
                break
            self._next += 1
            self._step(group, self._pending.pop(group))
        return self.decision is not None

    def _step(self, group: int, results: list[MatchResult]) -> None:
        scores = group_scores(results, self.scoring)
        if scores is None:
            return  # a match of the group did not finish: it says nothing about the deals
        d = scores[self.candidate] - scores[self.config.baseline]
        self.n += 1
        self._sum += d
        self._squares += d * d
        c = self.config
        value = llr(self.n, self._sum, self._squares, c.delta0, c.delta1)
        self.llr = float(value)
        self.steps.append(Step(group, d, self.llr))
        verdict = int(verdicts(value, self.n, c))
        self.decision = H1 if verdict == 1 else H0 if verdict == -1 else None

    def status(self) -> str:
        """One line for the progress display."""
        text = f"SPRT LLR {self.llr:+.2f} [{self.lower:.2f}, {self.upper:.2f}] n {self.n}"
        if self.decision is not None:
            text += f" {self.decision}"
        return text

    def verdict_text(self) -> str:
        """What the test says, for people."""
        c = self.config
        who = f"{self.candidate} vs {c.baseline}"
        if self.decision == H1:
            return (
                f"SPRT {who}: H1 accepted after {self.n} deal groups (LLR {self.llr:.2f} >= "
                f"{self.upper:.2f}): {self.candidate} is better by about {c.delta1:g} or more"
            )
        if self.decision == H0:
            return (
                f"SPRT {who}: H0 accepted after {self.n} deal groups (LLR {self.llr:.2f} <= "
                f"{self.lower:.2f}): {self.candidate} is not better by {c.delta1:g}"
            )
        state = "no decision: the schedule ran out" if self.exhausted else "running"
        return (
            f"SPRT {who}: {state} after {self.n} deal groups (LLR {self.llr:.2f}, "
            f"bounds [{self.lower:.2f}, {self.upper:.2f}])"
        )

    def to_json(self) -> dict[str, Any]:
        c = self.config
        mean = self.mean
        return {
            "candidate": self.candidate,
            "baseline": c.baseline,
            "hypotheses": {
                "H0": f"advantage per hand = {c.delta0:g}",
                "H1": f"advantage per hand = {c.delta1:g}",
            },
            "delta0": c.delta0,
            "delta1": c.delta1,
            "alpha": c.alpha,
            "beta": c.beta,
            "min_groups": c.min_groups,
            "lower": round(self.lower, 4),
            "upper": round(self.upper, 4),
            "llr": round(self.llr, 4),
            "groups": self.n,
            "groups_in_schedule": len(self.groups),
            "mean": round(mean, 4) if self.n else None,
            "decision": self.decision,
            "exhausted": self.exhausted,
            "steps": [
                {"group": s.group, "difference": round(s.difference, 4), "llr": round(s.llr, 4)}
                for s in self.steps
            ],
        }


def sequential_test(
    config: SprtConfig,
    candidate: str,
    groups: Iterable[tuple[int, int, Sequence[str]]],
    scoring: Scoring,
    results: Iterable[MatchResult] = (),
) -> SequentialTest:
    """A test fed the results recorded so far (order does not matter)."""
    return fed(SequentialTest(config, candidate, groups, scoring), results)


__all__ = [
    "H0",
    "H1",
    "SequentialTest",
    "Simulated",
    "Step",
    "bounds",
    "for_schedule",
    "llr",
    "sequential_test",
    "simulate",
    "verdicts",
]


def for_schedule(
    config: TournamentConfig,
    schedule: Sequence[MatchSpec],
    results: Iterable[MatchResult] = (),
) -> SequentialTest | None:
    """The tournament's test (None without ``[sprt]``), fed the results so far."""
    if config.sprt is None:
        return None
    sizes: dict[int, int] = defaultdict(int)
    bots: dict[int, tuple[str, ...]] = {}
    for spec in schedule:
        sizes[spec.group] += 1
        bots[spec.group] = spec.bots
    groups = [(g, sizes[g], bots[g]) for g in sorted(sizes)]
    return sequential_test(config.sprt, config.hero, groups, config.rules.scoring, results)
