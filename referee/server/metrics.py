"""Prometheus metrics of a referee server (served by ``referee.service.endpoint``).

One ``Metrics`` per server, in a registry of its own (never the process-wide default),
so that several servers in one process (tests, a tournament) keep separate figures. Each
decision is counted where it is appended to its log: ``MatchHost.step`` for a running
match, ``MatchRegistry.create`` for its first; the registry opens a match's handle when it
hosts the match and closes it when the match's task ends; the servicers count streams,
Hello refusals and spectators. Every label takes its values from a closed set (an event
type, a protocol enum, a status): never a match id, a bot name or any text a client chose.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any, TypeVar

import structlog
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    write_to_textfile,
)
from prometheus_client.exposition import choose_encoder

from referee import __version__
from referee.match.machine import Decision
from referee.match.state import MachineState
from referee.protocol import PROTOCOL_VERSION, common, play_service
from referee.protocol.names import DEFAULT_CAUSE, MATCH_STATUS, REFUSAL_REASON, REJECTION_REASON

log = structlog.get_logger("referee.metrics")

M = TypeVar("M", Counter, Gauge, Histogram)

disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` series: half the output

PREFIX = "pusoy_referee"

TURN_LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip
LOG_APPEND_BUCKETS = (
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 1.0,
)  # fmt: skip

LIVE = {s: MATCH_STATUS.text(s) for s in (common.MATCH_STATUS_WAITING, common.MATCH_STATUS_RUNNING)}
ENDED = ("finished", "cancelled", "unfinished")


REJECTION_REASONS = REJECTION_REASON.names
DEFAULT_CAUSES = DEFAULT_CAUSE.names
REFUSAL_REASONS = REFUSAL_REASON.names
EVENT_TYPES = tuple(f.name for f in common.Event.DESCRIPTOR.oneofs_by_name["kind"].fields)
MALFORMED_CAUSES = {
    "http": (
        "bad_method",
        "bad_request_line",
        "line_too_long",
        "bad_url",
        "bad_header",
        "bad_body",
        "bad_message",
    ),
    "grpc": ("unparsable",),
}
"""Requests refused because they do not parse: by listener, each cause it can have
(``referee.web.errors`` for HTTP, ``referee.server.malformed`` for gRPC)."""
ORGANISER_REFUSALS = {
    "grpc": ("no_credential", "wrong_credential", "wrong_listener"),
    "web": ("no_credential", "wrong_credential"),
}
"""Refusals for want of the organiser's token: organiser calls over gRPC
(``referee.server.auth``), and the web pages when they are the organiser's
(``referee serve --http-access organiser``)."""


class Metrics:
    """The referee's metrics (names and meanings: docs/deploy.md, section Metrics)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)

        def metric(kind: type[M], name: str, help: str, *labels: str, **more: Any) -> M:
            return kind(f"{PREFIX}_{name}", help, list(labels), registry=self.registry, **more)

        build = metric(
            Gauge,
            "build_info",
            "The referee's version, protocol version and Python (value 1)",
            "version",
            "protocol_version",
            "python",
        )
        build.labels(__version__, str(PROTOCOL_VERSION), platform.python_version()).set(1)
        self.matches = metric(
            Gauge,
            "matches",
            "Matches hosted now, by status (waiting for their bots, running)",
            "status",
        )
        self.created = metric(
            Counter, "matches_created", "Matches created (CreateMatch, a tournament)"
        )
        self.resumed = metric(
            Counter, "matches_resumed", "Unfinished matches resumed when the server started"
        )
        self.ended = metric(
            Counter,
            "matches_ended",
            "Matches whose task ended, by status: finished, cancelled, or unfinished (the "
            "log has no end: a log write failed, or the server was suspended)",
            "status",
        )
        self.events = metric(Counter, "events", "Events written to match logs, by type", "type")
        self.moves = metric(
            Counter, "moves", "Plays and passes (the bots' own and default actions)", "move"
        )
        self.rejections = metric(Counter, "rejections", "Actions rejected, by reason", "reason")
        self.defaults = metric(
            Counter,
            "default_actions",
            "Moves the referee made for a seat, by cause (timeout: turn timeouts)",
            "cause",
        )
        self.connects = metric(
            Counter,
            "seat_connects",
            "Seats taken by a bot's Hello, by kind (first, reconnect)",
            "kind",
        )
        self.disconnects = metric(
            Counter,
            "seat_disconnects",
            "Seats whose stream ended during their match (the bot's or the server's doing)",
        )
        self.connected = metric(Gauge, "connected_seats", "Seats connected now, over all matches")
        self.spectators = metric(
            Gauge, "spectators", "WatchMatch streams following a live match now"
        )
        self.streams = metric(Counter, "play_streams", "PlayService.Play streams opened")
        self.refusals = metric(
            Counter,
            "hello_refusals",
            "Play streams refused before a seat was taken, by reason",
            "reason",
        )
        self.malformed = metric(
            Counter,
            "malformed_requests",
            "Requests refused because they do not parse, by listener (http, grpc) and cause",
            "listener",
            "cause",
        )
        self.organiser_refusals = metric(
            Counter,
            "organiser_refusals",
            "Organiser calls and web requests refused for want of the organiser's token, by "
            "where (grpc, web) and why",
            "via",
            "why",
        )
        self.turn_latency = metric(
            Histogram,
            "turn_latency_seconds",
            "From a bot's action arriving to the next prompt handed to its seat's stream",
            buckets=TURN_LATENCY_BUCKETS,
        )
        self.log_append = metric(
            Histogram,
            "log_append_seconds",
            "Time to append one decision to its match log (with fsync when the policy asks)",
            buckets=LOG_APPEND_BUCKETS,
        )
        # Every series exists from the start (at 0), so that rate() and alerts see it.
        self._matches = {s: self.matches.labels(name) for s, name in LIVE.items()}
        self._ended = {name: self.ended.labels(name) for name in ENDED}
        self._events = {kind: self.events.labels(kind) for kind in EVENT_TYPES}
        self._moves = {
            kind: self.moves.labels(m) for kind, m in (("played", "play"), ("passed", "pass"))
        }
        self._rejections = {n: self.rejections.labels(v) for n, v in REJECTION_REASONS.items()}
        self._defaults = {n: self.defaults.labels(v) for n, v in DEFAULT_CAUSES.items()}
        self._connects = {
            False: self.connects.labels("first"),
            True: self.connects.labels("reconnect"),
        }
        self._refusals = {n: self.refusals.labels(v) for n, v in REFUSAL_REASONS.items()}
        self._malformed = {
            (where, cause): self.malformed.labels(where, cause)
            for where, causes in MALFORMED_CAUSES.items()
            for cause in causes
        }
        self._organiser_refusals = {
            (via, why): self.organiser_refusals.labels(via, why)
            for via, whys in ORGANISER_REFUSALS.items()
            for why in whys
        }

    def match(self, state: MachineState, *, resumed: bool = False) -> MatchMetrics:
        """The handle a new (or resumed) match reports each logged decision to, the
        first one (its creation) included."""
        (self.resumed if resumed else self.created).inc()
        return MatchMetrics(self, state)

    def refused(self, reason: play_service.RefusalReason.ValueType) -> None:
        counter = self._refusals.get(reason)
        if counter is not None:
            counter.inc()

    def malformed_request(self, listener: str, cause: str) -> None:
        """Count a request that does not parse (a pair outside ``MALFORMED_CAUSES`` is a
        bug: KeyError)."""
        self._malformed[listener, cause].inc()

    def organiser_refused(self, via: str, why: str) -> None:
        """Count a refusal of ``ORGANISER_REFUSALS``."""
        self._organiser_refusals[via, why].inc()

    def exposition(self, accept: str = "") -> tuple[bytes, str]:
        """The metrics in the format ``accept`` asks for (text or OpenMetrics)."""
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type

    def write(self, path: Path) -> None:
        """The metrics as a text file (atomically), e.g. a tournament's at its end."""
        write_to_textfile(str(path), self.registry)


class MatchMetrics:
    """One match's reports: status and connected seats are kept here so that the shared
    gauges move by this match's changes only."""

    __slots__ = ("_closed", "_connected", "_m", "_status")

    def __init__(self, metrics: Metrics, state: MachineState) -> None:
        self._m = metrics
        self._status: common.MatchStatus.ValueType = common.MATCH_STATUS_UNSPECIFIED
        self._connected = 0
        self._closed = False
        self._track(state)

    def decided(
        self, decision: Decision, append_s: float, since_command_s: float | None = None
    ) -> None:
        """One decision, logged (in ``append_s``) and delivered: every event a match logs
        is counted here and nowhere else. ``since_command_s``: from the command's arrival
        until its messages were handed to the streams."""
        m = self._m
        m.log_append.observe(append_s)
        prompted = False
        for event in decision.events:
            kind = event.WhichOneof("kind")
            if kind is None:
                continue
            m._events[kind].inc()
            if kind == "played" or kind == "passed":
                m._moves[kind].inc()
                cause = getattr(event, kind).default_cause
                if cause:
                    m._defaults[cause].inc()
            elif kind == "action_rejected":
                counter = m._rejections.get(event.action_rejected.reason)
                if counter is not None:
                    counter.inc()
            elif kind == "turn_started":
                prompted = True
            elif kind == "seat_connected":
                m._connects[event.seat_connected.reconnect].inc()
            elif kind == "seat_disconnected":
                m.disconnects.inc()
        action = decision.command.WhichOneof("kind") == "action"
        if prompted and action and since_command_s is not None:
            m.turn_latency.observe(since_command_s)
        self._track(decision.state)

    def refused(self, reason: play_service.RefusalReason.ValueType) -> None:
        self._m.refused(reason)

    def closed(self, state: MachineState) -> None:
        """The match's task ended (its end logged, or not: see ``Metrics.ended``)."""
        if self._closed:
            return
        self._closed = True
        self._set_status(common.MATCH_STATUS_UNSPECIFIED)
        self._m.connected.dec(self._connected)
        self._connected = 0
        if state.status == common.MATCH_STATUS_FINISHED:
            self._m._ended["finished"].inc()
        elif state.status == common.MATCH_STATUS_CANCELLED:
            self._m._ended["cancelled"].inc()
        else:
            self._m._ended["unfinished"].inc()

    def _track(self, state: MachineState) -> None:
        self._set_status(state.status)
        connected = sum(seat.connected for seat in state.seats) if not state.over else 0
        if connected != self._connected:
            self._m.connected.inc(connected - self._connected)
            self._connected = connected

    def _set_status(self, status: common.MatchStatus.ValueType) -> None:
        if status == self._status:
            return
        old = self._m._matches.get(self._status)
        if old is not None:
            old.dec()
        new = self._m._matches.get(status)
        if new is not None:
            new.inc()
        self._status = status
