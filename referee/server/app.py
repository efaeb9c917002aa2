"""The server process: services, health, reflection, graceful shutdown.

One listener for bots and spectators (and, unless it has one of its own, the
organiser); optionally a second one for the organiser's API alone. Plaintext only on
loopback unless told otherwise; TLS (and mutual TLS) on both when configured.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from referee.client.channels import organiser_channel
from referee.client.tls import ClientTls, TlsError
from referee.log.signing import LogSigner
from referee.server.auth import OrganiserGate, new_token
from referee.server.hellos import HelloGuard
from referee.server.limits import ServerLimits
from referee.server.lobby import Lobby, LobbyServicer
from referee.server.malformed import MalformedRequests
from referee.server.metrics import Metrics
from referee.server.registry import DEFAULT_KEEP_FINISHED, LogPolicy, MatchRegistry, Resumed
from referee.server.servicers import (
    SERVICE_NAMES,
    MatchServicer,
    PlayServicer,
    SpectatorServicer,
    add_services,
)
from referee.server.tls import ServerTls, is_loopback
from referee.service.endpoint import MetricsEndpoint

log = structlog.get_logger("referee.server")

NO_SHARED_PORT = ("grpc.so_reuseport", 0)
"""gRPC core binds with SO_REUSEPORT by default: a second referee (or ladder lobby) started
on the port of a running one, by the same user, would listen too and take half of its
connections, bots of one match landing at the other. Off, it cannot listen there."""

SERVER_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    NO_SHARED_PORT,
]

JAILED_KEEPALIVE_MS = 600_000
"""Keepalive pings to jailed bots' connections (local, through a jail's Unix socket):
rare, since a jailed bot is stopped between its turns and cannot answer a ping then,
and a local connection whose bot died closes at once."""
JAILED_SERVER_OPTIONS = [
    (key, JAILED_KEEPALIVE_MS if key == "grpc.keepalive_time_ms" else value)
    for key, value in SERVER_OPTIONS
]

MAX_STREAMS_PER_CONNECTION = 1000
MAX_UNACCEPTED_S = 300
"""How long a new call may wait inside gRPC for the server to take it up. With a
thousand matches starting at once, this server took up the bots' calls at a few dozen a
second (bench/bench_thousand.py), so a burst of 4,000 waited a minute or more; gRPC's
own default (30 s) cancelled the late ones (CANCELLED, before the referee saw them) and
their seats were played by default."""
STOP_GRACE_S = 5.0
"""How long a stop (SIGTERM, SIGINT, SIGUSR1) lets the open streams finish before it cuts
them: a spectator or a bot that stopped reading never finishes, so with one (or 200) the
server exits about this long after the signal, and within a second with none
(bench/bench_server_stop.py)."""


ORGANISER_CONNECTIONS = 32
"""Connections the organiser's own listener (``--organiser-address``) holds at once,
when the bots' listener has a cap."""


def _grpc_options(limits: ServerLimits, max_connections: int) -> list[tuple[str, int]]:
    """gRPC core's server arguments. A connection that sends nothing is closed after the
    handshake bound, one with no call after the idle bound, and past ``max_connections``
    a new one is closed as it arrives, so that connections never take the descriptors
    live matches' logs need (``openfiles.connection_budget``)."""
    options = [
        *SERVER_OPTIONS,
        ("grpc.max_receive_message_length", limits.max_message_bytes),
        ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
        ("grpc.server_max_unrequested_time_in_server", MAX_UNACCEPTED_S),
        ("grpc.server_handshake_timeout_ms", limits.handshake_timeout_ms),
    ]
    if limits.idle_timeout_ms:
        options.append(("grpc.max_connection_idle_ms", limits.idle_timeout_ms))
    if max_connections:
        options.append(("grpc.max_allowed_incoming_connections", max_connections))
    return options


class RefereeServer:
    """A running referee: ``await start()``, then ``await stop()`` (or wait for SIGTERM)."""

    def __init__(
        self,
        address: str = "127.0.0.1:50051",
        log_dir: Path = Path("matches"),
        keep_finished: int = DEFAULT_KEEP_FINISHED,
        *,
        state_dir: Path | None = None,
        resume: bool = False,
        logs: LogPolicy | None = None,
        metrics: Metrics | None = None,
        metrics_address: str | None = None,
        organiser_token: str | None = None,
        organiser_address: str | None = None,
        tls: ServerTls | None = None,
        insecure: bool = False,
        signer: LogSigner | None = None,
        limits: ServerLimits | None = None,
        bot_listen: Sequence[str] = (),
    ) -> None:
        """``state_dir`` keeps what a restart needs and the public must not see (the seeds
        of running matches): never the log folder. Without one, a private temporary
        folder is used and nothing can be resumed. ``resume``: continue the unfinished
        logs of ``log_dir`` at start. ``metrics``: count into it (one is made when
        ``metrics_address`` is given, where ``/metrics`` is then served over HTTP).

        ``organiser_token`` None: a fresh one held in memory (an embedded referee whose
        organiser is this process: ``organiser_channel()``). ``organiser_address``: the
        organiser's API on a listener of its own. ``tls``: serve TLS (mutual with a client
        CA); without it only loopback addresses are served, unless ``insecure``.
        ``signer`` None: logs are signed with a fresh in-memory key. ``logs``: when a
        log is forced to disk, how large it may grow, whether it is published at the end.
        """
        self.requested_address = address
        self.requested_organiser_address = organiser_address
        self.tls = tls
        self.insecure = insecure
        self.organiser_token = organiser_token or new_token()
        self.signer = signer or LogSigner.ephemeral()
        self.limits = limits or ServerLimits()
        self.bot_listen = tuple(bot_listen)
        """Addresses (``unix:PATH``) of a second server with PlayService alone, for
        sandboxed bots: they may play their seat there, not organise, watch or list."""
        self.bot_server: grpc.aio.Server | None = None
        self._temp_state = state_dir is None
        if state_dir is None:
            state_dir = Path(tempfile.mkdtemp(prefix="referee-state-"))
        elif _within(state_dir, log_dir):
            raise ValueError("the state folder must not be the log folder or inside it")
        self.resume = resume and not self._temp_state
        if metrics is None and metrics_address is not None:
            metrics = Metrics()
        self.metrics = metrics
        self.metrics_endpoint = (
            MetricsEndpoint(metrics, metrics_address)
            if metrics is not None and metrics_address is not None
            else None
        )
        self.registry = MatchRegistry(
            log_dir,
            state_dir,
            keep_finished=keep_finished,
            logs=logs or LogPolicy(),
            metrics=metrics,
            signer=self.signer,
        )
        self.matches = self.registry
        """The in-process API: create, wait_over, info, seat_gone, cancel, take_log, forget."""
        self.resumed: list[Resumed] = []
        self.lobby = Lobby()
        self.health = HealthServicer()
        hellos = HelloGuard(self.limits)
        play = PlayServicer(self.registry, self.limits, hellos)
        self._play = play
        spectate = SpectatorServicer(self.registry, self.limits)
        lobby = LobbyServicer(self.lobby, hellos)
        separate = organiser_address is not None
        gate = OrganiserGate(self.organiser_token, here=not separate, metrics=metrics)
        cap = self.limits.max_connections
        self.server = self._grpc_server(gate, play, spectate, lobby, cap)
        self.organiser_server: grpc.aio.Server | None = None
        if separate:
            self.organiser_server = self._grpc_server(
                OrganiserGate(self.organiser_token, here=True, metrics=metrics),
                None,
                None,
                None,
                ORGANISER_CONNECTIONS if cap else 0,
            )
        self.organiser_port = 0
        self.port = 0
        self._stopped = asyncio.Event()

    def _grpc_server(
        self,
        gate: OrganiserGate,
        play: PlayServicer | None,
        spectate: SpectatorServicer | None,
        lobby: LobbyServicer | None,
        max_connections: int,
    ) -> grpc.aio.Server:
        server = grpc.aio.server(
            interceptors=[MalformedRequests(self.metrics), gate],
            options=_grpc_options(self.limits, max_connections),
        )
        match = MatchServicer(self.registry, gate, self.limits, self.signer)
        names = add_services(server, match=match, play=play, spectate=spectate, lobby=lobby)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            (
                *names,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ),
            server,
        )
        return server

    def _bot_server(self) -> grpc.aio.Server:
        """PlayService alone (sandboxed bots): the same seats, limits and hello guard;
        rare keepalive pings (a jailed bot is stopped between its turns)."""
        options = dict(_grpc_options(self.limits, self.limits.max_connections))
        options.update(JAILED_SERVER_OPTIONS)
        server = grpc.aio.server(
            interceptors=[MalformedRequests(self.metrics)], options=list(options.items())
        )
        add_services(server, play=self._play)
        return server

    @property
    def address(self) -> str:
        host = self.requested_address.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    @property
    def organiser_address(self) -> str:
        """Where the organiser's API is served (the bots' address unless separate)."""
        if self.requested_organiser_address is None:
            return self.address
        host = self.requested_organiser_address.rsplit(":", 1)[0]
        return f"{host}:{self.organiser_port}"

    def organiser_channel(self, tls: ClientTls | None = None) -> grpc.aio.Channel:
        """A channel to this server's organiser API that carries its token."""
        return organiser_channel(self.organiser_address, self.organiser_token, tls)

    def _listen(self, server: grpc.aio.Server, address: str) -> int:
        if self.tls is None and not self.insecure and not is_loopback(address):
            raise OSError(
                f"refusing to serve {address} in plaintext: it is reachable from other "
                "machines. Give a certificate (--tls-cert and --tls-key), or --insecure "
                "to serve plaintext on the network anyway"
            )
        try:
            if self.tls is not None:
                port = server.add_secure_port(address, self.tls.credentials())
            else:
                port = server.add_insecure_port(address)
        except TlsError as exc:
            raise OSError(str(exc)) from None
        except RuntimeError:  # grpcio reports a failed bind this way
            port = 0
        if port == 0:
            raise OSError(f"cannot listen on {address}")
        return port

    async def start(self) -> None:
        try:
            # A folder made here is private, unless its logs are to be published.
            mode = 0o755 if self.registry.logs.publish else 0o700
            self.registry.log_dir.mkdir(mode=mode, parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(f"cannot use {self.registry.log_dir} for match logs: {exc}") from exc
        try:
            self.registry.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            where = self.registry.state_dir
            raise OSError(f"cannot use {where} for the referee's state: {exc}") from exc
        if self.metrics_endpoint is not None:
            await self.metrics_endpoint.start()  # OSError: the address cannot be used
        if self.resume:
            self.resumed = self.registry.resume_all()
        try:
            self.port = self._listen(self.server, self.requested_address)
            if self.organiser_server is not None:
                assert self.requested_organiser_address is not None
                self.organiser_port = self._listen(
                    self.organiser_server, self.requested_organiser_address
                )
                await self.organiser_server.start()
            if self.bot_listen:
                self.bot_server = self._bot_server()
                for extra in self.bot_listen:
                    if not self.bot_server.add_insecure_port(extra):  # unix sockets only
                        raise OSError(f"cannot listen on {extra}")
                await self.bot_server.start()
        except OSError:
            if self.metrics_endpoint is not None:
                await self.metrics_endpoint.stop()
            raise
        await self.server.start()
        for name in (*SERVICE_NAMES, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info(
            "referee serving",
            address=self.address,
            organiser_address=self.organiser_address,
            tls="mutual" if self.tls and self.tls.client_ca else "on" if self.tls else "off",
            max_connections=self.limits.max_connections or "no cap",
            handshake_timeout_ms=self.limits.handshake_timeout_ms,
            idle_timeout_ms=self.limits.idle_timeout_ms or "never",
            logs=str(self.registry.log_dir),
            signing_key=self.signer.public_key_text,
        )

    async def stop(self, grace: float = STOP_GRACE_S, *, suspend: bool = False) -> None:
        """Graceful shutdown: refuse new matches, report NOT_SERVING, close every log.

        ``suspend``: leave the running matches unfinished instead of cancelling them, so
        that the next start on the same folders resumes them (for an upgrade).
        """
        if self._stopped.is_set():
            return
        self._stopped.set()
        log.info("shutting down", suspend=suspend)
        await self.health.enter_graceful_shutdown()
        self.lobby.close("the server is shutting down")
        if suspend:
            await self.registry.suspend()
        else:
            await self.registry.shutdown()
        stops = [self.server.stop(grace)]
        if self.organiser_server is not None:
            stops.append(self.organiser_server.stop(grace))
        if self.bot_server is not None:
            stops.append(self.bot_server.stop(grace))
        await asyncio.gather(*stops)
        if self.metrics_endpoint is not None:
            await self.metrics_endpoint.stop()
        if self._temp_state:
            shutil.rmtree(self.registry.state_dir, ignore_errors=True)
        log.info("stopped")

    async def wait_for_signal(self, ready: Callable[[], None] | None = None) -> None:
        """Serve until SIGTERM or SIGINT, then stop gracefully (running matches are
        cancelled); on SIGUSR1, stop and leave them to resume (an upgrade). ``ready`` is
        called once the signals are handled (to announce the server)."""
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        suspend = False

        def on_suspend() -> None:
            nonlocal suspend
            suspend = True
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        loop.add_signal_handler(signal.SIGUSR1, on_suspend)
        if ready is not None:
            ready()
        await stop.wait()
        await self.stop(suspend=suspend)


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents
