"""The benchmark's numbers, from a tournament's results alone (results.jsonl).

**The unit is the deal group**: one deal, one table of four, every rotation of its seats
(each bot holds each seat's cards once), so the luck of the cards cancels. Two bots of
a group are compared on their points per hand over it: the one with fewer penalty
points (more chips) *did better on that deal*.

**The score** is a Bradley-Terry rating on the Elo scale, fitted by maximum likelihood
to those comparisons between the candidate and the anchors, the anchors' ratings held
at their frozen values: P(candidate does better than anchor a on a deal) =
1 / (1 + 10^((r_a - r) / 400)); a tie counts half. Bradley-Terry rather than OpenSkill
(the tournaments' rating): OpenSkill updates one event at a time, so its estimate
depends on the order of the groups, and its sigma is a tracking uncertainty, not a
confidence interval; a maximum-likelihood fit against frozen anchors uses every result
at once, the same results always give the same score, and its interval is a
confidence interval. The interval is 95%, with a sandwich (cluster-robust) variance
over deals: a deal's tables share its cards, so they are not independent evidence. One
virtual draw against each anchor keeps the fit finite for a candidate that never (or
always) does better.

**Per anchor**: the candidate's advantage in points per hand over that anchor on the
same deals (one difference per deal: the mean over the tables where both sat), its 95%
interval (Student's t) and likelihood of superiority (``referee.tournament.stats``), and
the win rate (the share of deal groups where the candidate did better, ties half).
**Clean** results leave out every hand in which the candidate had a turn played by
default (a timeout, illegal plays, absence after a crash) or an action rejected
(``faulty_hands`` of its results), for everybody at that match.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from referee.benchmark.pool import RATING_SCALE
from referee.tournament.results import MatchResult
from referee.tournament.stats import Paired, paired, t_quantile

K = math.log(10) / RATING_SCALE


@dataclasses.dataclass(frozen=True, slots=True)
class Group:
    """One deal group's points per hand, by bot (its finished matches only)."""

    deal: int
    """The round: which deal of the set."""
    table: int
    per_hand: dict[str, float]
    hands: int
    """Hands each bot played in the group (clean ones only, when cleaned)."""


def groups_of(
    results: Iterable[MatchResult], *, clean_for: str = "", seatings: int = 4
) -> list[Group]:
    """The complete deal groups (every match finished). ``clean_for``: leave out the
    hands in which that bot had a fault, for every seat of that match."""
    by_group: dict[int, list[MatchResult]] = defaultdict(list)
    for r in results:
        by_group[r.group].append(r)
    out: list[Group] = []
    for _, matches in sorted(by_group.items()):
        if len(matches) != seatings or not all(m.finished for m in matches):
            continue
        points: dict[str, float] = defaultdict(float)
        hands = 0
        for m in matches:
            faulty: set[int] = set()
            for s in m.seats:
                if clean_for and s.bot == clean_for:
                    faulty |= set(s.summary.faulty_hands)
            kept = [h for h in range(1, len(m.seats[0].summary.scores) + 1) if h not in faulty]
            hands += len(kept)
            for s in m.seats:
                points[s.bot] += sum(s.summary.scores[h - 1] for h in kept)
        if hands:  # every bot sits at every match of its group: ``hands`` hands each
            per_hand = {bot: p / hands for bot, p in points.items()}
            out.append(Group(matches[0].round, matches[0].table, per_hand, hands))
    return out


def advantage(a: float, b: float, chips: bool) -> float:
    """How much better ``a`` did than ``b`` (points per hand; positive: ``a`` better)."""
    return a - b if chips else b - a


@dataclasses.dataclass(frozen=True, slots=True)
class Comparison:
    """One deal group's verdict between the candidate and one anchor."""

    deal: int
    anchor: str
    outcome: float
    """1: the candidate did better, 0: worse, 0.5: the same."""
    difference: float
    """The candidate's advantage in points per hand."""


def comparisons(groups: Sequence[Group], candidate: str, chips: bool) -> list[Comparison]:
    out: list[Comparison] = []
    for g in groups:
        mine = g.per_hand.get(candidate)
        if mine is None:
            continue
        for bot, theirs in sorted(g.per_hand.items()):
            if bot == candidate:
                continue
            d = advantage(mine, theirs, chips)
            out.append(Comparison(g.deal, bot, 1.0 if d > 0 else 0.0 if d < 0 else 0.5, d))
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Rating:
    value: float
    low: float
    high: float
    se: float
    deals: int
    comparisons: int


def _p(diff: float) -> float:
    return 1.0 / (1.0 + math.exp(-K * diff))


def fit_candidate(comps: Sequence[Comparison], ratings: Mapping[str, float]) -> Rating:
    """The candidate's Bradley-Terry rating against anchors of frozen ``ratings``."""
    data = [(ratings[c.anchor], c.outcome, c.deal) for c in comps if c.anchor in ratings]
    prior = [(r, 0.5) for r in ratings.values()]  # one virtual draw against each anchor
    theta = sum(ratings.values()) / len(ratings)
    for _ in range(100):
        grad = hess = 0.0
        for r, w, *_ in (*data, *prior):
            p = _p(theta - r)
            grad += K * (w - p)
            hess += K * K * p * (1 - p)
        step = grad / hess
        theta += max(-400.0, min(400.0, step))
        if abs(step) < 1e-9:
            break
    hess = sum(K * K * _p(theta - r) * (1 - _p(theta - r)) for r, *_ in (*data, *prior))
    by_deal: dict[int, float] = defaultdict(float)
    for r, w, deal in data:
        by_deal[deal] += K * (w - _p(theta - r))
    meat = sum(g * g for g in by_deal.values())
    deals = len(by_deal)
    se = math.sqrt(meat) / hess if meat else math.sqrt(1 / hess)
    half = t_quantile(deals - 1) * se if deals > 1 else math.inf
    return Rating(theta, theta - half, theta + half, se, deals, len(data))


def fit_pool(
    comps: Sequence[tuple[str, str, float]], names: Sequence[str], fixed: str
) -> dict[str, float]:
    """Every bot's Bradley-Terry rating from ``(a, b, outcome for a)`` comparisons (the
    pool's own table), ``fixed`` at 0: how a pool's frozen ratings are made."""
    free = [n for n in names if n != fixed]
    index = {n: i for i, n in enumerate(free)}
    theta = dict.fromkeys(names, 0.0)
    # One virtual draw between every two bots keeps each rating finite.
    prior = [(a, b, 0.5) for i, a in enumerate(names) for b in names[i + 1 :]]
    for _ in range(200):
        n = len(free)
        grad = [0.0] * n
        hess = [[0.0] * n for _ in range(n)]
        for a, b, w in (*comps, *prior):
            p = _p(theta[a] - theta[b])
            g, h = K * (w - p), K * K * p * (1 - p)
            for x, sign in ((a, 1.0), (b, -1.0)):
                if x in index:
                    grad[index[x]] += sign * g
            for x in (a, b):
                for y in (a, b):
                    if x in index and y in index:
                        hess[index[x]][index[y]] += h if x == y else -h
        step = _solve(hess, grad)
        for name, i in index.items():
            theta[name] += max(-400.0, min(400.0, step[i]))
        if max((abs(s) for s in step), default=0.0) < 1e-9:
            break
    return theta


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination (the systems are a few bots across)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[pivot] = m[pivot], m[c]
        if m[c][c] == 0:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


@dataclasses.dataclass(frozen=True, slots=True)
class VersusAnchor:
    anchor: str
    rating: float
    advantage: Paired
    """Points per hand, one difference per deal."""
    win_rate: float
    groups: int


def versus(comps: Sequence[Comparison], ratings: Mapping[str, float]) -> list[VersusAnchor]:
    out: list[VersusAnchor] = []
    for anchor, rating in ratings.items():
        mine = [c for c in comps if c.anchor == anchor]
        by_deal: dict[int, list[float]] = defaultdict(list)
        for c in mine:
            by_deal[c.deal].append(c.difference)
        diffs = [sum(v) / len(v) for _, v in sorted(by_deal.items())]
        wins = sum(c.outcome for c in mine)
        out.append(
            VersusAnchor(
                anchor, rating, paired(diffs), wins / len(mine) if mine else math.nan, len(mine)
            )
        )
    return out


def pairwise_table(
    groups: Sequence[Group], names: Sequence[str], chips: bool
) -> dict[tuple[str, str], Paired]:
    """Every two bots' advantage on the same deals (one difference per deal): the
    pool's table."""
    out: dict[tuple[str, str], Paired] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            by_deal: dict[int, list[float]] = defaultdict(list)
            for g in groups:
                if a in g.per_hand and b in g.per_hand:
                    by_deal[g.deal].append(advantage(g.per_hand[a], g.per_hand[b], chips))
            out[(a, b)] = paired([sum(v) / len(v) for _, v in sorted(by_deal.items())])
    return out


def pool_comparisons(groups: Sequence[Group], chips: bool) -> list[tuple[str, str, float]]:
    """Every two bots of every group, as ``fit_pool`` takes them."""
    out: list[tuple[str, str, float]] = []
    for g in groups:
        bots = sorted(g.per_hand)
        for i, a in enumerate(bots):
            for b in bots[i + 1 :]:
                d = advantage(g.per_hand[a], g.per_hand[b], chips)
                out.append((a, b, 1.0 if d > 0 else 0.0 if d < 0 else 0.5))
    return out
