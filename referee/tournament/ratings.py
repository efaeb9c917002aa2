"""Ratings and statistics per bot, from match results.

Ratings are OpenSkill's Plackett-Luce model (default parameters: mu 25, sigma 25/3),
which rates four-player finishing orders directly. One deal group is one rating event:
its four bots are ranked by the sum of their places over the group's finished matches,
then by their summed totals (fewer penalty points, or more chips, is better); bots still
equal share a rank. Without duplicate deals a group is a single match, so this is just
that match's standings. Groups are rated when their last match is recorded; the final
table replays every group in schedule order, so it does not depend on which match
happened to end first, on concurrency or on a resume.

Per bot, besides the rating: matches, wins (first place, shared or not), the average
place, the average score per hand with a 95% confidence interval (Student's t over the
bot's hands), and the faults the referee recorded: timeouts, turns defaulted after
rejected attempts, rejected actions, disconnects, crashes, turns played while absent.
Bots are ordered by the conservative rating ``mu - 3 sigma``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

from referee.rules import Scoring
from referee.tournament.results import MatchResult

# Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t (Cornish-Fisher beyond the table).

    >>> t975(1), round(t975(1000), 3)
    (12.706, 1.962)
    """
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df)


def mean_ci95(n: int, total: float, squares: float) -> tuple[float, float, float]:
    """Mean and 95% confidence interval of ``n`` values given their sum and sum of squares.

    >>> mean_ci95(4, 10, 30)
    (2.5, 0.446, 4.554)
    """
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = total / n
    if n == 1:
        return (mean, -math.inf, math.inf)
    var = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = t975(n - 1) * math.sqrt(var / n)
    return (round(mean, 3), round(mean - half, 3), round(mean + half, 3))


@dataclasses.dataclass
class BotStats:
    """Running totals for one bot."""

    name: str
    matches: int = 0
    """Matches that finished with the bot seated."""
    failed: int = 0
    """Matches with the bot seated that were cancelled or could not be played."""
    wins: int = 0
    places: int = 0
    hands: int = 0
    score_sum: int = 0
    score_squares: int = 0
    timeouts: int = 0
    illegal_defaults: int = 0
    rejected: int = 0
    disconnects: int = 0
    crashes: int = 0
    absent_turns: int = 0
    groups: int = 0
    """Deal groups rated."""


@dataclasses.dataclass(frozen=True, slots=True)
class StandingRow:
    """One line of the final table."""

    rank: int
    name: str
    mu: float
    sigma: float
    ordinal: float
    matches: int
    wins: int
    avg_place: float
    hands: int
    score_per_hand: float
    ci95_low: float
    ci95_high: float
    timeouts: int
    illegal_defaults: int
    rejected: int
    disconnects: int
    crashes: int
    absent_turns: int
    failed: int

    def to_json(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in dataclasses.asdict(self).items()
        }


class Standings:
    """Statistics and ratings, fed one match result at a time."""

    def __init__(self, bots: Sequence[str], scoring: Scoring, group_sizes: dict[int, int]) -> None:
        self.model = PlackettLuce()
        self.scoring = scoring
        self.group_sizes = group_sizes
        self.stats = {name: BotStats(name) for name in bots}
        self.ratings: dict[str, PlackettLuceRating] = {
            name: self.model.rating(name=name) for name in bots
        }
        self._groups: dict[int, list[MatchResult]] = defaultdict(list)
        self.results = 0

    def add(self, result: MatchResult) -> None:
        self.results += 1
        for sr in result.seats:
            st = self.stats[sr.bot]
            s = sr.summary
            if not result.finished:
                st.failed += 1
            else:
                st.matches += 1
                st.wins += s.place == 1
                st.places += s.place
            st.hands += len(s.scores)
            st.score_sum += sum(s.scores)
            st.score_squares += sum(x * x for x in s.scores)
            st.timeouts += s.timeouts
            st.illegal_defaults += s.illegal_defaults
            st.rejected += s.rejected
            st.disconnects += s.disconnects
            st.absent_turns += s.absent_turns
            st.crashes += sr.crashed
        group = self._groups[result.group]
        group.append(result)
        if len(group) == self.group_sizes.get(result.group, 1):
            self._rate(self._groups.pop(result.group))

    def _rate(self, group: list[MatchResult]) -> None:
        finished = [r for r in group if r.finished]
        if not finished:
            return
        sign = 1 if self.scoring is Scoring.PENALTY else -1
        keys: dict[str, tuple[int, int]] = {}
        for r in finished:
            for sr in r.seats:
                places, points = keys.get(sr.bot, (0, 0))
                keys[sr.bot] = (places + sr.summary.place, points + sign * sr.summary.total)
        names = sorted(keys)
        ranks = [1 + sum(keys[o] < keys[n] for o in names) for n in names]
        teams = [[self.ratings[n]] for n in names]
        rated = self.model.rate(teams, ranks=[float(x) for x in ranks])
        for n, team in zip(names, rated, strict=True):
            self.ratings[n] = team[0]
            self.stats[n].groups += 1

    def table(self) -> list[StandingRow]:
        rows = []
        for name, st in self.stats.items():
            rating = self.ratings[name]
            mean, low, high = mean_ci95(st.hands, st.score_sum, st.score_squares)
            rows.append(
                (
                    rating.mu - 3 * rating.sigma,
                    rating,
                    st,
                    mean,
                    low,
                    high,
                )
            )
        rows.sort(key=lambda x: (-x[0], -x[1].mu, x[2].name))
        return [
            StandingRow(
                rank=i + 1,
                name=st.name,
                mu=round(rating.mu, 3),
                sigma=round(rating.sigma, 3),
                ordinal=round(ordinal, 3),
                matches=st.matches,
                wins=st.wins,
                avg_place=round(st.places / st.matches, 3) if st.matches else math.nan,
                hands=st.hands,
                score_per_hand=mean,
                ci95_low=low,
                ci95_high=high,
                timeouts=st.timeouts,
                illegal_defaults=st.illegal_defaults,
                rejected=st.rejected,
                disconnects=st.disconnects,
                crashes=st.crashes,
                absent_turns=st.absent_turns,
                failed=st.failed,
            )
            for i, (ordinal, rating, st, mean, low, high) in enumerate(rows)
        ]

    def leader(self) -> StandingRow | None:
        table = self.table()
        return table[0] if table and self.results else None


def replay(
    bots: Sequence[str],
    scoring: Scoring,
    group_sizes: dict[int, int],
    results: Iterable[MatchResult],
) -> Standings:
    """Standings from results in schedule order: the same whatever order they ended in."""
    standings = Standings(bots, scoring, group_sizes)
    for result in sorted(results, key=lambda r: r.index):
        standings.add(result)
    return standings


__all__ = ["BotStats", "StandingRow", "Standings", "mean_ci95", "replay", "t975"]
