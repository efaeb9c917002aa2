"""Ratings of versions: the tournament's model (OpenSkill's Plackett-Luce, one deal group
one rating event, ``referee.tournament.ratings.rate_group``), applied by the store in the
transaction that records a group's last match, so a group is rated exactly once."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from openskill.models import PlackettLuce

from referee.rules import Scoring


@dataclasses.dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """The leaderboard's sort key, as the tournament's table: ``mu - 3 sigma``."""
        return self.mu - 3 * self.sigma


class Rater:
    """Rates a finished deal group; ``scoring`` says which totals are better."""

    def __init__(self, scoring: Scoring = Scoring.PENALTY) -> None:
        self.scoring = scoring
        self.model = PlackettLuce()

    def initial(self) -> Rating:
        r = self.model.rating()
        return Rating(r.mu, r.sigma)

    def rate(
        self, seats: Iterable[tuple[int, int, int]], current: Mapping[int, Rating]
    ) -> dict[int, Rating]:
        """New ratings from (version id, place, total) over a group's finished matches."""
        # Imported here: the tournament package's __init__ brings its whole director
        # (and scipy), seconds of start-up a process that only claims matches does not need.
        from referee.tournament.ratings import rate_group

        ratings = {v: self.model.rating(mu=r.mu, sigma=r.sigma) for v, r in current.items()}
        rated = rate_group(self.model, ratings, seats, self.scoring)
        return {v: Rating(r.mu, r.sigma) for v, r in rated.items()}
