"""The server process: services, health, reflection, graceful shutdown."""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
from pathlib import Path

import grpc
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from referee.log.writer import FsyncPolicy
from referee.protocol import (
    lobby_service,
    lobby_service_grpc,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.server.host import DEFAULT_MAX_LOG_BYTES
from referee.server.lobby import Lobby, LobbyServicer
from referee.server.registry import DEFAULT_KEEP_FINISHED, MatchRegistry, Resumed
from referee.server.servicers import MatchServicer, PlayServicer, SpectatorServicer

log = structlog.get_logger("referee.server")

SERVICE_NAMES = (
    match_service.DESCRIPTOR.services_by_name["MatchService"].full_name,
    play_service.DESCRIPTOR.services_by_name["PlayService"].full_name,
    spectator_service.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
    lobby_service.DESCRIPTOR.services_by_name["LobbyService"].full_name,
)


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
        fsync: FsyncPolicy = FsyncPolicy.NEVER,
        max_log_bytes: int = DEFAULT_MAX_LOG_BYTES,
    ) -> None:
        """``state_dir`` keeps what a restart needs and the public must not see (the seeds
        of running matches): never the log folder. Without one, a private temporary
        folder is used and nothing can be resumed. ``resume``: continue the unfinished
        logs of ``log_dir`` at start."""
        self.requested_address = address
        self._temp_state = state_dir is None
        if state_dir is None:
            state_dir = Path(tempfile.mkdtemp(prefix="referee-state-"))
        elif _within(state_dir, log_dir):
            raise ValueError("the state folder must not be the log folder or inside it")
        self.resume = resume and not self._temp_state
        self.registry = MatchRegistry(
            log_dir,
            state_dir,
            keep_finished=keep_finished,
            fsync=fsync,
            max_log_bytes=max_log_bytes,
        )
        self.matches = self.registry
        """The in-process API: create, wait_over, info, seat_gone, cancel, take_log, forget."""
        self.resumed: list[Resumed] = []
        self.lobby = Lobby()
        self.health = HealthServicer()
        self.server = grpc.aio.server(
            options=[
                ("grpc.keepalive_time_ms", 20_000),
                ("grpc.keepalive_timeout_ms", 10_000),
                ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
                ("grpc.keepalive_permit_without_calls", 1),
            ]
        )
        match_service_grpc.add_MatchServiceServicer_to_server(
            MatchServicer(self.registry), self.server
        )
        play_service_grpc.add_PlayServiceServicer_to_server(
            PlayServicer(self.registry), self.server
        )
        spectator_service_grpc.add_SpectatorServiceServicer_to_server(
            SpectatorServicer(self.registry), self.server
        )
        lobby_service_grpc.add_LobbyServiceServicer_to_server(
            LobbyServicer(self.lobby), self.server
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            (
                *SERVICE_NAMES,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ),
            self.server,
        )
        self.port = 0
        self._stopped = asyncio.Event()

    @property
    def address(self) -> str:
        host = self.requested_address.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def start(self) -> None:
        try:
            self.registry.log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(f"cannot use {self.registry.log_dir} for match logs: {exc}") from exc
        try:
            self.registry.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            where = self.registry.state_dir
            raise OSError(f"cannot use {where} for the referee's state: {exc}") from exc
        if self.resume:
            self.resumed = self.registry.resume_all()
        try:
            self.port = self.server.add_insecure_port(self.requested_address)
        except RuntimeError:  # grpcio reports a failed bind this way
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen on {self.requested_address}")
        await self.server.start()
        for name in (*SERVICE_NAMES, ""):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("referee serving", address=self.address, logs=str(self.registry.log_dir))

    async def stop(self, grace: float = 5.0, *, suspend: bool = False) -> None:
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
        await self.server.stop(grace)
        if self._temp_state:
            shutil.rmtree(self.registry.state_dir, ignore_errors=True)
        log.info("stopped")

    async def wait_for_signal(self) -> None:
        """Serve until SIGTERM or SIGINT, then stop gracefully."""
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await self.stop()


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents
