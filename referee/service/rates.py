"""Rates at the edge: sliding-window counters and log lines that cannot flood the log.

Both are keyed by what a client controls (a client address, a seat), so both bound the
number of keys they remember: a client that rotates addresses costs memory only up to
``max_keys``.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable, Hashable
from typing import Any

import structlog

DEFAULT_MAX_KEYS = 100_000


def peer_host(peer: str) -> str:
    """A gRPC peer string without its port: ``ipv4:10.0.0.5:4242`` -> ``ipv4:10.0.0.5``.

    >>> peer_host("ipv6:[::1]:50000")
    'ipv6:[::1]'
    >>> peer_host("unix:/tmp/sock")
    'unix:/tmp/sock'
    """
    if peer.startswith(("ipv4:", "ipv6:")):
        return peer.rsplit(":", 1)[0]
    return peer


@dataclasses.dataclass(eq=False)
class WindowCounter:
    """At most ``limit`` events per key within any ``window_s`` seconds (0: no limit)."""

    limit: int
    window_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    max_keys: int = DEFAULT_MAX_KEYS
    _hits: collections.OrderedDict[Hashable, collections.deque[float]] = dataclasses.field(
        default_factory=collections.OrderedDict, init=False
    )

    def _recent(self, key: Hashable, now: float) -> collections.deque[float]:
        hits = self._hits.get(key)
        if hits is None:
            hits = collections.deque(maxlen=self.limit + 1)
            self._hits[key] = hits
            while len(self._hits) > self.max_keys:
                self._hits.popitem(last=False)  # the key seen least recently
        else:
            self._hits.move_to_end(key)
        while hits and now - hits[0] >= self.window_s:
            hits.popleft()
        return hits

    def over(self, key: Hashable) -> bool:
        """Whether ``key`` is over its limit now (without counting an event)."""
        if not self.limit:
            return False
        return len(self._recent(key, self.clock())) >= self.limit

    def hit(self, key: Hashable) -> bool:
        """Count an event; False when it is over the limit (it is still counted)."""
        if not self.limit:
            return True
        now = self.clock()
        hits = self._recent(key, now)
        allowed = len(hits) < self.limit
        hits.append(now)
        return allowed

    def retry_after(self, key: Hashable) -> float:
        """Seconds until ``key`` may have another event."""
        hits = self._hits.get(key)
        if not hits or len(hits) < self.limit:
            return 0.0
        return max(0.0, self.window_s - (self.clock() - hits[-self.limit]))


class LimitedLog:
    """Warnings of one kind, at most ``per_window`` lines per key per window; the lines
    left out are counted and reported with the next line that is written."""

    def __init__(
        self,
        logger: Any,
        per_window: int = 10,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.logger = logger
        self.counter = WindowCounter(per_window, window_s, clock, max_keys)
        self._dropped: collections.Counter[Hashable] = collections.Counter()
        self.dropped_total = 0

    def warning(self, key: Hashable, event: str, **fields: Any) -> None:
        if not self.counter.hit(key):
            self._dropped[key] += 1
            self.dropped_total += 1
            if len(self._dropped) > self.counter.max_keys:
                self._dropped.clear()
            return
        dropped = self._dropped.pop(key, 0)
        if dropped:
            fields["similar_lines_left_out"] = dropped
        self.logger.warning(event, **fields)


def limited_log(name: str, per_window: int = 10) -> LimitedLog:
    return LimitedLog(structlog.get_logger(name), per_window)
