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
rejected attempts, rejected actions, disconnects, crashes, sandbox limit breaches, turns
played while absent. Bots are ordered by the conservative rating ``mu - 3 sigma`` (the
sort key, shown), disqualified bots last;
each rating has a 95% interval ``mu ± 1.96 sigma``, and a row whose interval overlaps
the row above is marked: those two are not significantly different.

Head to head: for every pair of bots, the difference of their scores per hand on the
same deals, one value per deal group in which both played and every match finished
(``group_scores``), summarised by ``referee.tournament.stats.paired``: mean, 95%
confidence interval, number of groups, likelihood of superiority. Positive means the
first bot of the pair did better (fewer penalty points, or more chips).

A seat played by a disqualified bot's replacement counts for nobody: not in the bot's
statistics, its group's rating event or the head to head.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from openskill.models import PlackettLuce, PlackettLuceRating

from referee.rules import Scoring
from referee.tournament.results import MatchResult, fed
from referee.tournament.stats import Paired, mean_ci95, overlaps, paired, rating_interval


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
    breaches: int = 0
    groups: int = 0
    """Deal groups rated."""
    disqualified: str = ""
    """Why the bot was disqualified ("" while it is in)."""


@dataclasses.dataclass(frozen=True, slots=True)
class StandingRow:
    """One line of the final table."""

    rank: int
    name: str
    mu: float
    sigma: float
    ordinal: float
    """The sort key: ``mu - 3 sigma``."""
    rating_low: float
    rating_high: float
    """The rating's 95% interval, ``mu ± 1.96 sigma``."""
    overlaps_above: bool
    """The interval overlaps the one of the row above: not significantly different."""
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
    breaches: int = 0
    disqualified: str = ""

    def to_json(self) -> dict[str, Any]:
        return _finite(dataclasses.asdict(self))


@dataclasses.dataclass(frozen=True, slots=True)
class PairRow:
    """Head to head: how much better ``a`` scored than ``b`` per hand on the same deals."""

    a: str
    b: str
    groups: int
    """Deal groups both played, every match finished."""
    mean: float
    """a's advantage in score per hand (fewer penalty points, or more chips)."""
    ci95_low: float
    ci95_high: float
    los: float
    """Likelihood of superiority: the probability that a is the better of the two."""
    sd: float
    """Standard deviation of the per-group differences."""

    @classmethod
    def of(cls, a: str, b: str, p: Paired) -> PairRow:
        return cls(
            a,
            b,
            p.n,
            round(p.mean, 4),
            round(p.ci95_low, 4),
            round(p.ci95_high, 4),
            round(p.los, 4),
            round(p.sd, 4),
        )

    def flipped(self) -> PairRow:
        """The same comparison seen from b."""
        return PairRow(
            self.b,
            self.a,
            self.groups,
            -self.mean + 0.0,
            -self.ci95_high + 0.0,
            -self.ci95_low + 0.0,
            round(1 - self.los, 4),
            self.sd,
        )

    def to_json(self) -> dict[str, Any]:
        return _finite(dataclasses.asdict(self))


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    """JSON has no NaN or infinity: null instead."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def group_scores(group: Sequence[MatchResult], scoring: Scoring) -> dict[str, float] | None:
    """Each bot's score per hand over one deal group, signed so that higher is better
    (minus penalty points, or chips); None unless every match of it finished.

    Every bot of a group plays every one of its matches, so the difference of two bots'
    values compares them on exactly the same deals."""
    if not group or not all(r.finished for r in group):
        return None
    sign = -1 if scoring is Scoring.PENALTY else 1
    points: dict[str, int] = defaultdict(int)
    hands: dict[str, int] = defaultdict(int)
    replaced = {sr.bot for r in group for sr in r.seats if sr.replaced_by}
    for r in group:
        for sr in r.seats:
            points[sr.bot] += sum(sr.summary.scores)
            hands[sr.bot] += len(sr.summary.scores)
    if not all(hands.values()):
        return None
    # A disqualified bot's replacement played some of its seats: not its own result.
    return {bot: sign * points[bot] / hands[bot] for bot in points if bot not in replaced}


Player = TypeVar("Player", str, int)


def rate_group(
    model: PlackettLuce,
    ratings: Mapping[Player, PlackettLuceRating],
    seats: Iterable[tuple[Player, int, int]],
    scoring: Scoring,
) -> dict[Player, PlackettLuceRating]:
    """One deal group as one rating event: its players' new ratings (none when fewer
    than two played). ``seats`` are (player, place, total) over the group's finished
    matches; a player's rank is by the sum of its places, then of its totals (fewer
    penalty points, or more chips); players still equal share a rank. Tournaments rate
    bots by name with it, the ladder versions by id."""
    sign = 1 if scoring is Scoring.PENALTY else -1
    keys: dict[Player, tuple[int, int]] = {}
    for player, place, total in seats:
        places, points = keys.get(player, (0, 0))
        keys[player] = (places + place, points + sign * total)
    names = sorted(keys)
    if len(names) < 2:
        return {}
    ranks = [1 + sum(keys[o] < keys[n] for o in names) for n in names]
    teams = [[ratings[n]] for n in names]
    rated = model.rate(teams, ranks=[float(x) for x in ranks])
    return {n: team[0] for n, team in zip(names, rated, strict=True)}


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
        self._order = {name: i for i, name in enumerate(bots)}
        self.differences: dict[tuple[str, str], list[float]] = defaultdict(list)
        """Per pair of bots (in configuration order), one score difference per group."""

    def add(self, result: MatchResult) -> None:
        self.results += 1
        for sr in result.seats:
            if sr.replaced_by:
                continue  # its replacement played: not the bot's result
            st = self.stats[sr.bot]
            st.disqualified = sr.disqualified or st.disqualified
            st.breaches += bool(sr.breach)
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
        scores = group_scores(group, self.scoring)
        if scores is not None:
            names = sorted(scores, key=self._order.__getitem__)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    self.differences[(a, b)].append(scores[a] - scores[b])
        seats = [
            (sr.bot, sr.summary.place, sr.summary.total)
            for r in group
            if r.finished
            for sr in r.seats
            if not sr.replaced_by
        ]
        rated = rate_group(self.model, self.ratings, seats, self.scoring)
        for n, rating in rated.items():
            self.ratings[n] = rating
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
        rows.sort(key=lambda x: (bool(x[2].disqualified), -x[0], -x[1].mu, x[2].name))
        intervals = [rating_interval(r[1].mu, r[1].sigma) for r in rows]
        marks = overlaps(intervals)
        return [
            StandingRow(
                rank=i + 1,
                name=st.name,
                mu=round(rating.mu, 3),
                sigma=round(rating.sigma, 3),
                ordinal=round(ordinal, 3),
                rating_low=intervals[i][0],
                rating_high=intervals[i][1],
                overlaps_above=marks[i],
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
                breaches=st.breaches,
                disqualified=st.disqualified,
            )
            for i, (ordinal, rating, st, mean, low, high) in enumerate(rows)
        ]

    def pairwise(self, order: Sequence[str] | None = None) -> list[PairRow]:
        """Head to head for every pair of bots, ``a`` above ``b`` in ``order`` (default:
        the table's order), pairs in that order too."""
        names = list(order) if order is not None else [r.name for r in self.table()]
        out = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if self._order[a] < self._order[b]:
                    out.append(PairRow.of(a, b, paired(self.differences.get((a, b), []))))
                else:
                    out.append(PairRow.of(b, a, paired(self.differences.get((b, a), []))).flipped())
        return out

    def leader(self) -> StandingRow | None:
        """The top of the table, once a deal group is rated: before that every rating is
        the prior's, and the top is only the configuration's order."""
        if not any(st.groups for st in self.stats.values()):
            return None
        table = self.table()
        return table[0] if table else None


SORT_KEY = (
    "The table is sorted by mu - 3 sigma, an OpenSkill rating of the finishing order in each "
    "deal group (the sum of places; points only break ties), lowered for uncertainty; head "
    "to head compares points per hand on the same deals, so the two can disagree."
)
"""The sort key in one line, said with every disagreement (``rank_notes``)."""

SURE = 0.95
"""Likelihood of superiority from which a head-to-head result against the table's order
is worth a note."""


@dataclasses.dataclass(frozen=True, slots=True)
class RankNote:
    """A bot ranked above another that beat it head to head: ``pair`` is the lower bot
    (``pair.a``) against the higher (``pair.b``)."""

    above: StandingRow
    below: StandingRow
    pair: PairRow

    def text(self, scoring: str) -> str:
        """One line for a person: who, by how much, how sure (``scoring``: ``penalty`` or
        ``chips``)."""
        unit = "chips" if scoring == "chips" else "penalty points"
        p = self.pair
        return (
            f"{self.above.name} (#{self.above.rank}) is ranked above {self.below.name} "
            f"(#{self.below.rank}), yet {self.below.name} did better on the same deals: by "
            f"{p.mean:.2f} {unit} a hand (95% CI {p.ci95_low:+.2f} to {p.ci95_high:+.2f}, "
            f"likelihood of superiority {p.los:.0%}, {p.groups} deal groups)"
        )

    def to_json(self, scoring: str) -> dict[str, Any]:
        return {
            "above": self.above.name,
            "below": self.below.name,
            "pair": self.pair.to_json(),
            "text": self.text(scoring),
        }


def rank_notes(rows: Sequence[StandingRow], pairs: Sequence[PairRow]) -> list[RankNote]:
    """Every pair of bots of the table (disqualified ones aside) where the lower one did
    better head to head with a likelihood of superiority of ``SURE`` or more, or a 95%
    interval above 0: the table's order and the duplicate deals disagree, and a reader
    of the table should know (a bot that times out often can still win on places)."""
    lookup: dict[tuple[str, str], PairRow] = {}
    for p in pairs:
        lookup[(p.a, p.b)] = p
        lookup[(p.b, p.a)] = p.flipped()
    ranked = [r for r in rows if not r.disqualified]
    out = []
    for i, above in enumerate(ranked):
        for below in ranked[i + 1 :]:
            h2h = lookup.get((below.name, above.name))
            if h2h is None or h2h.groups < 2 or h2h.mean <= 0:
                continue
            if h2h.los >= SURE or h2h.ci95_low > 0:
                out.append(RankNote(above, below, h2h))
    return out


def rank_notes_json(
    rows: Sequence[StandingRow], pairs: Sequence[PairRow], scoring: str
) -> dict[str, Any]:
    """standings.json's ``sort_key`` and ``rank_notes``, which the tournament's page shows."""
    return {
        "sort_key": SORT_KEY,
        "rank_notes": [n.to_json(scoring) for n in rank_notes(rows, pairs)],
    }


PAIRWISE_UNIT = (
    "score per hand on the same deals (a minus b; fewer penalty points or more chips is "
    "better, so positive means a did better); one value per deal group both played"
)


def table_csv(rows: Sequence[StandingRow]) -> str:
    """standings.csv: the table, one row per bot."""
    return _csv([list(StandingRow.__dataclass_fields__), *(r.to_json().values() for r in rows)])


def pairwise_csv(pairs: Sequence[PairRow]) -> str:
    """pairwise.csv: head to head, one row per pair of bots."""
    return _csv([list(PairRow.__dataclass_fields__), *(p.to_json().values() for p in pairs)])


def _csv(rows: Iterable[Iterable[Any]]) -> str:
    return "\n".join(",".join("" if v is None else str(v) for v in row) for row in rows) + "\n"


def replay(
    bots: Sequence[str],
    scoring: Scoring,
    group_sizes: dict[int, int],
    results: Iterable[MatchResult],
) -> Standings:
    """Standings from results in schedule order: the same whatever order they ended in."""
    return fed(Standings(bots, scoring, group_sizes), results)


__all__ = [
    "PAIRWISE_UNIT",
    "SORT_KEY",
    "SURE",
    "BotStats",
    "PairRow",
    "RankNote",
    "StandingRow",
    "Standings",
    "group_scores",
    "pairwise_csv",
    "rank_notes",
    "rank_notes_json",
    "rate_group",
    "replay",
    "table_csv",
]
