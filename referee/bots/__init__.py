"""Built-in bots: strategies the referee plays itself, as real gRPC clients (random,
greedy, and the benchmark's anchors: expert, search, policy).

They belong to the referee (``referee match``, tournaments, tests, benchmarks), not to
the Python starter kit, which bot authors install on its own.
"""

from referee.bots.player import play_seat
from referee.bots.strategies import (
    BUILTIN_BOTS,
    ExpertBot,
    GreedyBot,
    PolicyBot,
    RandomBot,
    SearchBot,
    Strategy,
    builtin_bot,
)
from referee.client.seat import SeatOutcome, SeatRefused

__all__ = [
    "BUILTIN_BOTS",
    "ExpertBot",
    "GreedyBot",
    "PolicyBot",
    "RandomBot",
    "SearchBot",
    "SeatOutcome",
    "SeatRefused",
    "Strategy",
    "builtin_bot",
    "play_seat",
]
