"""The statistics of a tournament, as pure functions of numbers.

Quantiles come from scipy (Student's t, the normal distribution), not from tables.

- ``mean_ci95``: a mean and its 95% confidence interval (Student's t), from running
  sums, for the score per hand of one bot.
- ``paired``: the mean of paired differences (one per deal group: the same deals, the
  same table), its 95% confidence interval, and the likelihood of superiority, the
  probability that the true mean difference is above zero given the data (the
  posterior of a normal model with a flat prior, ``T(n-1).cdf(mean / se)``): 50% is
  "no idea", above 95% or below 5% is about where people start to act.
- ``rating_interval``: ``mu ± 1.96 sigma`` of a rating, and ``overlaps`` to mark
  neighbours in a table whose intervals overlap ("not significantly different": a
  conservative reading; the paired head-to-head numbers are the sharper test).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from scipy import stats as _st

CONFIDENCE = 0.95


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided critical value of Student's t with ``df`` degrees of freedom.

    >>> round(t_quantile(1), 3), round(t_quantile(30), 3), round(t_quantile(10**6), 3)
    (12.706, 2.042, 1.96)
    """
    if df < 1:
        return math.inf
    return float(_st.t.ppf(0.5 + confidence / 2, df))


def z_quantile(confidence: float = CONFIDENCE) -> float:
    """The two-sided critical value of the normal distribution (1.96 for 95%)."""
    return float(_st.norm.ppf(0.5 + confidence / 2))


def mean_ci95(n: int, total: float, squares: float) -> tuple[float, float, float]:
    """Mean and 95% confidence interval of ``n`` values given their sum and sum of
    squares, rounded to 3 places; NaN without values, an unbounded interval for one.

    >>> mean_ci95(4, 10, 30)  # 1, 2, 3, 4
    (2.5, 0.446, 4.554)
    """
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = total / n
    if n == 1:
        return (round(mean, 3), -math.inf, math.inf)
    var = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = t_quantile(n - 1) * math.sqrt(var / n)
    return (round(mean, 3), round(mean - half, 3), round(mean + half, 3))


@dataclasses.dataclass(frozen=True, slots=True)
class Paired:
    """What paired differences say: positive means the first of the pair did better."""

    n: int
    mean: float
    """NaN when ``n`` is 0."""
    ci95_low: float
    ci95_high: float
    """Both NaN below two values."""
    los: float
    """Likelihood of superiority, 0..1; NaN below two values."""
    sd: float
    """Sample standard deviation of the differences; NaN below two values."""


def los(mean: float, se: float, df: int) -> float:
    """Likelihood of superiority: P(true mean > 0) under a flat prior, ``T(df).cdf(mean/se)``.

    >>> los(0.0, 1.0, 5), round(los(2.0, 1.0, 1000), 4), los(1.0, 0.0, 3)
    (0.5, 0.9771, 1.0)
    """
    if df < 1:
        return math.nan
    if se == 0:
        return 1.0 if mean > 0 else 0.0 if mean < 0 else 0.5
    return float(_st.t.cdf(mean / se, df))


def paired(diffs: Sequence[float]) -> Paired:
    """Mean, 95% CI (Student's t) and likelihood of superiority of paired differences.

    >>> p = paired([1.0, 2.0, 3.0])
    >>> p.n, p.mean, round(p.ci95_low, 3), round(p.ci95_high, 3), round(p.los, 4)
    (3, 2.0, -0.484, 4.484, 0.9629)
    """
    n = len(diffs)
    if n == 0:
        return Paired(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    mean = math.fsum(diffs) / n
    if n == 1:
        return Paired(1, mean, math.nan, math.nan, math.nan, math.nan)
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1))
    se = sd / math.sqrt(n)
    half = t_quantile(n - 1) * se
    return Paired(n, mean, mean - half, mean + half, los(mean, se, n - 1), sd)


def rating_interval(mu: float, sigma: float) -> tuple[float, float]:
    """The 95% interval of a rating: ``mu ± 1.96 sigma``.

    >>> rating_interval(25.0, 25 / 3)
    (8.667, 41.333)
    """
    half = z_quantile() * sigma
    return (round(mu - half, 3), round(mu + half, 3))


def overlaps(intervals: Sequence[tuple[float, float]]) -> list[bool]:
    """For each interval in table order, whether it overlaps the one above it.

    >>> overlaps([(10, 20), (15, 25), (0, 5), (4, 6)])
    [False, True, False, True]
    """
    return [
        i > 0 and max(lo, intervals[i - 1][0]) <= min(hi, intervals[i - 1][1])
        for i, (lo, hi) in enumerate(intervals)
    ]


__all__ = [
    "CONFIDENCE",
    "Paired",
    "los",
    "mean_ci95",
    "overlaps",
    "paired",
    "rating_interval",
    "t_quantile",
    "z_quantile",
]
