"""The web front's one coupling to the match server: public facts and public events.

Everything the web pages know about matches comes through ``PublicFeed``, which reads the
registry and its hosts the way ``SpectatorService.WatchMatch`` does (``MatchRegistry.list``,
``get``, ``logged``, ``log_path``; a ``Spectator`` added to ``MatchHost.spectators``; the
log's public events up to the moment of joining). When the match core changes, this module
is the one to re-point. It hands out only public information: the facts a spectator may
see and the events WatchMatch sends (no card of a hand before that hand ends, no rejected
attempt), and the log of a match only once the match is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

import grpc
from google.protobuf import json_format

from referee.log.stream import public_events
from referee.protocol import common, match_service
from referee.protocol.names import MATCH_STATUS
from referee.server.host import MatchHost
from referee.server.registry import MATCH_ID, MatchRegistry
from referee.server.sessions import DEFAULT_SPECTATOR_OUTBOX, Spectator


class NoSuchMatch(LookupError):
    """The server holds no such running match (or its id is not a match id)."""


class ViewerTooSlow(Exception):
    """The server cut this feed off: it fell too far behind the match."""


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

    @property
    def over(self) -> bool:
        return self.status in ("finished", "cancelled")


def valid_match_id(text: str) -> bool:
    return MATCH_ID.fullmatch(text) is not None


def _facts(info: match_service.MatchInfo) -> MatchFacts:
    return MatchFacts(
        match_id=info.match_id,
        status=MATCH_STATUS.names.get(info.status, "unknown"),
        profile=info.config.rules.profile,
        seat_names=tuple(info.config.seat_names),
        hands_played=info.hands_played,
        totals=tuple(info.totals),
    )


class EventSource(Protocol):
    """A running match's public events, as the web's channels read them: ``Subscription``
    here, or a ladder's relay of a worker's referee (``referee.ladder.web.relay``)."""

    async def next(self, wait_s: float) -> tuple[int, dict[str, Any]] | None: ...

    def close(self) -> None: ...


class Subscription:
    """A running match's public events from its start: ``await next(wait_s)`` until the end.

    As WatchMatch does: join the match's spectators first, then read the log's public
    events up to the last one logged at that moment, then take the live ones.
    """

    def __init__(self, host: MatchHost, log: Path, limit: int) -> None:
        self._host = host
        self._spectator = Spectator(limit)
        host.spectators.add(self._spectator)
        self._upto = host.writer.seq
        self._past: AsyncIterator[tuple[int, common.Event]] | None = public_events(log)
        self.ended = False

    async def next(self, wait_s: float) -> tuple[int, dict[str, Any]] | None:
        """The next (seq, event) in the log's JSON mapping; None after ``wait_s`` seconds
        with no event. Raises StopAsyncIteration after the match's last event, and
        ViewerTooSlow when the server cut this feed off."""
        if self._past is not None:
            item = await anext(self._past, None)
            if item is not None and item[0] <= self._upto:
                return item[0], _event_dict(item[1])
            await self._close_past()
        if self.ended:
            raise StopAsyncIteration
        try:
            live = await asyncio.wait_for(self._spectator.outbox.get(), wait_s)
        except TimeoutError:
            return None
        if live is None:
            self.ended = True
            end = self._spectator.outbox.end
            if end is not None and end.code != grpc.StatusCode.OK:
                raise ViewerTooSlow(end.details)
            raise StopAsyncIteration
        return live[0], _event_dict(live[1])

    async def _close_past(self) -> None:
        past, self._past = self._past, None
        if past is not None:
            with contextlib.suppress(Exception):
                await past.aclose()  # type: ignore[attr-defined]

    def close(self) -> None:
        self._host.spectators.discard(self._spectator)
        self._spectator.outbox.close()


def _event_dict(event: common.Event) -> dict[str, Any]:
    return json_format.MessageToDict(event, preserving_proto_field_name=True)


class PublicFeed:
    """Public facts and events of the matches of one server."""

    def __init__(self, registry: MatchRegistry) -> None:
        self._registry = registry

    def list_matches(self) -> list[MatchFacts]:
        """The matches the server holds, newest first."""
        return [_facts(info) for info in self._registry.list()]

    def facts(self, match_id: str) -> MatchFacts | None:
        """The facts of a match in memory, or of one only its log is left of; else None."""
        if not valid_match_id(match_id):
            return None
        host = self._registry.get(match_id)
        if host is not None:
            return _facts(self._registry.info(host))
        if self._registry.logged(match_id) is not None:
            return MatchFacts(match_id, "finished", "", (), 0, ())
        return None

    def finished_log(self, match_id: str) -> Path | None:
        """The log of a match that is over (public then); None while it runs or if unknown."""
        if not valid_match_id(match_id):
            return None
        host = self._registry.get(match_id)
        if host is not None and not host.is_over():
            return None
        return self._registry.logged(match_id)

    def subscribe(self, match_id: str, limit: int = DEFAULT_SPECTATOR_OUTBOX) -> Subscription:
        """The public events of a running match; NoSuchMatch when it is not running here.
        ``limit``: events that may wait for this feed before the server cuts it off."""
        host = self._registry.get(match_id) if valid_match_id(match_id) else None
        if host is None or host.is_over():
            raise NoSuchMatch(match_id)
        return Subscription(host, self._registry.log_path(match_id), limit)
