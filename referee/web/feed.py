"""The web front's one coupling to the match server: public facts and public events.

Everything the web pages know about matches comes through ``PublicFeed``, which reads
today's registry and runners (``MatchRegistry.list``/``get``/``logged`` and
``MatchRunner.subscribe``). When the match core changes, this module is the one to
re-point. It hands out only public information: the facts a spectator may see and the
events ``SpectatorService.WatchMatch`` sends (no card of a hand before that hand ends, no
rejected attempt), and the log of a match only once the match is over.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from referee.pb import common
from referee.server.registry import MATCH_ID, MatchRegistry
from referee.server.runner import MatchRunner


class NoSuchMatch(LookupError):
    """The server holds no such match (or its id is not a match id)."""


class ViewerTooSlow(Exception):
    """A viewer fell so far behind that the referee would have to buffer without bound."""


@dataclasses.dataclass(frozen=True, slots=True)
class MatchFacts:
    """What anyone may know of a match while it runs."""

    match_id: str
    status: str
    """waiting, running, finished or cancelled."""
    profile: str
    seat_names: tuple[str, ...]
    hands_played: int
    totals: tuple[int, ...]
    created: float
    """Unix time the match was created (0 when only its log is left)."""

    @property
    def over(self) -> bool:
        return self.status in ("finished", "cancelled")


_STATUS = {
    common.MATCH_STATUS_WAITING: "waiting",
    common.MATCH_STATUS_RUNNING: "running",
    common.MATCH_STATUS_FINISHED: "finished",
    common.MATCH_STATUS_CANCELLED: "cancelled",
}


def valid_match_id(text: str) -> bool:
    return MATCH_ID.fullmatch(text) is not None


class Subscription:
    """A match's public events from its start: ``await next(timeout)`` until the end."""

    def __init__(self, runner: MatchRunner, max_backlog: int) -> None:
        self._runner = runner
        self._queue = runner.subscribe(from_start=True)
        self._max_backlog = max_backlog
        self.ended = False

    async def next(self, wait_s: float) -> tuple[int, dict[str, Any]] | None:
        """The next (seq, event) in the log's JSON mapping; None after ``wait_s`` seconds
        with no event. Raises StopAsyncIteration after the match's last event and
        ViewerTooSlow when more than ``max_backlog`` events wait for this viewer."""
        if self.ended:
            raise StopAsyncIteration
        if self._queue.qsize() > self._max_backlog:
            raise ViewerTooSlow(f"more than {self._max_backlog} events behind")
        try:
            item = await asyncio.wait_for(self._queue.get(), wait_s)
        except TimeoutError:
            return None
        if item is None:
            self.ended = True
            raise StopAsyncIteration
        seq, event = item
        return seq, json_format.MessageToDict(event, preserving_proto_field_name=True)

    def close(self) -> None:
        if self._queue in self._runner.spectators:
            self._runner.spectators.remove(self._queue)


class PublicFeed:
    """Public facts and events of the matches of one server."""

    def __init__(self, registry: MatchRegistry) -> None:
        self._registry = registry

    def _facts(self, runner: MatchRunner) -> MatchFacts:
        info = self._registry.info(runner)
        return MatchFacts(
            match_id=info.match_id,
            status=_STATUS.get(info.status, "unknown"),
            profile=info.config.rules.profile,
            seat_names=tuple(info.config.seat_names),
            hands_played=info.hands_played,
            totals=tuple(info.totals),
            created=runner.created,
        )

    def list_matches(self) -> list[MatchFacts]:
        """The matches the server holds, newest first."""
        runners = sorted(self._registry.matches.values(), key=lambda r: r.created, reverse=True)
        return [self._facts(r) for r in runners]

    def facts(self, match_id: str) -> MatchFacts | None:
        """The facts of a match in memory, or of one only its log is left of; else None."""
        if not valid_match_id(match_id):
            return None
        runner = self._registry.get(match_id)
        if runner is not None:
            return self._facts(runner)
        if self._registry.logged(match_id) is not None:
            return MatchFacts(match_id, "finished", "", (), 0, (), 0.0)
        return None

    def finished_log(self, match_id: str) -> Path | None:
        """The log of a match that is over (public then); None while it runs or if unknown."""
        if not valid_match_id(match_id):
            return None
        runner = self._registry.get(match_id)
        if runner is not None:
            return runner.log_path if runner.is_over() else None
        return self._registry.logged(match_id)

    def subscribe(self, match_id: str, max_backlog: int) -> Subscription:
        """The public events of a running match; NoSuchMatch when it is not running here."""
        runner = self._registry.get(match_id) if valid_match_id(match_id) else None
        if runner is None or runner.is_over():
            raise NoSuchMatch(match_id)
        return Subscription(runner, max_backlog)
