"""Tournaments: many fair matches between bot programs, with ratings, resumable.

``config`` reads and checks the TOML file, ``schedule`` turns it into a deterministic
list of matches (duplicate deals: one seed per group, played in every seating),
``results`` keeps the results files, ``ratings`` computes OpenSkill ratings and
statistics, ``progress`` shows how far it got, and ``director`` plays the schedule on a
match backend (``backends``: tables here around a referee, or Ray tasks on a cluster),
``dispatch`` deciding which match starts when and who sits in its seats.
See docs/tournaments.md.
"""

from referee.tournament.config import ConfigError, TournamentConfig
from referee.tournament.director import Tournament, TournamentError, TournamentSummary
from referee.tournament.toml_reader import load_config

__all__ = [
    "ConfigError",
    "Tournament",
    "TournamentConfig",
    "TournamentError",
    "TournamentSummary",
    "load_config",
]
