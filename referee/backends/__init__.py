"""Where matches are played: one interface (``base``), two backends.

``local``: at tables in this process, around one referee (in this process or a running
``referee serve``); ``ray``: each match a Ray task on a cluster, its log checked,
signed and verified on arrival. Both take ``MatchJob``s and give back
``FinishedMatch``es (``MatchBackend.run``, or one at a time ``play``); they know
nothing of schedules, ratings or results files, which stay with their caller (a
tournament's ``referee.tournament.director``, a ladder's worker).
"""

from referee.backends.base import FinishedMatch, MatchBackend, MatchFailure, MatchJob
from referee.backends.local import LocalBackend
from referee.backends.ray import (
    ClusterUnavailable,
    RayBackend,
    RayNotInstalled,
    require_ray,
)

__all__ = [
    "ClusterUnavailable",
    "FinishedMatch",
    "LocalBackend",
    "MatchBackend",
    "MatchFailure",
    "MatchJob",
    "RayBackend",
    "RayNotInstalled",
    "require_ray",
]
