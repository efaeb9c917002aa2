"""Prometheus metrics of a ladder, read from its database when they are scraped.

The figures are the database's (``views.figures``), so every process of a ladder gives
the same ones and a restart loses none: the queue's length, running matches, matches
finished (in all, and in the last minute), failed matches by cause, bots' faults by
kind, versions by state; and, from the process that serves them, refused API keys. They
are served by the referee's own small endpoint (``referee.server.metrics``), on its own
address (``referee ladder run --metrics`` or ``serve --metrics``). Every label value
comes from a closed set (a cause the ladder's code writes, a state, a kind), never a
team's or a bot's name.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from referee.ladder import views
from referee.ladder.keys import KeyGuard
from referee.ladder.schema import GroupPurpose, VersionState
from referee.ladder.store import LadderStore

PREFIX = "pusoy_ladder"
CAUSES = (
    "start",
    "referee",
    "settings",
    "timeout",
    "cancelled",
    "error",
    "abandoned",
    "retired",
    "offline",
)
"""Why a match failed or was taken off the queue (``matches.failure``); anything else
counts as ``other``."""


class LadderMetrics(Collector):
    """A registry of its own with the ladder's figures; ``exposition`` for the endpoint."""

    def __init__(self, store: LadderStore, guard: KeyGuard | None = None) -> None:
        self.store = store
        self.guard = guard
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    def collect(self) -> Iterator[Metric]:
        f = views.figures(self.store)
        queue = GaugeMetricFamily(
            f"{PREFIX}_queue_length", "Matches waiting in the queue", labels=["purpose"]
        )
        for purpose in GroupPurpose:
            queue.add_metric([purpose.value], f.queued_by_purpose.get(purpose, 0))
        yield queue
        yield GaugeMetricFamily(f"{PREFIX}_running_matches", "Matches being played", f.running)
        yield GaugeMetricFamily(
            f"{PREFIX}_matches_per_minute",
            "Matches finished in the last 60 seconds",
            f.finished_last_minute,
        )
        yield CounterMetricFamily(
            f"{PREFIX}_matches_finished", "Matches finished since the ladder began", f.finished
        )
        failures = CounterMetricFamily(
            f"{PREFIX}_match_failures",
            "Matches failed or taken off the queue, by cause",
            labels=["cause"],
        )
        counts = dict.fromkeys((*CAUSES, "other"), 0)
        for cause, n in f.failures.items():
            counts[cause if cause in CAUSES else "other"] += n
        for cause, n in counts.items():
            failures.add_metric([cause], n)
        yield failures
        faults = CounterMetricFamily(
            f"{PREFIX}_bot_faults", "Bots' faults in recorded matches, by kind", labels=["kind"]
        )
        for kind in views.FAULTS:
            faults.add_metric([kind], f.faults.get(kind, 0))
        yield faults
        states = GaugeMetricFamily(f"{PREFIX}_versions", "Bot versions by state", labels=["state"])
        for state in VersionState:
            states.add_metric([state.value], f.versions.get(state, 0))
        yield states
        if self.guard is not None:
            keys = CounterMetricFamily(
                f"{PREFIX}_key_refusals",
                "API keys refused by this process (throttled: wrong, past the address's limit)",
                labels=["why"],
            )
            keys.add_metric(["wrong"], self.guard.refused_total)
            keys.add_metric(["throttled"], self.guard.throttled_total)
            yield keys

    def exposition(self, accept: str = "") -> tuple[bytes, str]:
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type


__all__ = ["CAUSES", "PREFIX", "LadderMetrics"]
