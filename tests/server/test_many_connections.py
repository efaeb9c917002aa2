"""Many bots connecting at once: what broke first with 1,000 matches on one referee.

With a thousand matches starting at once, the referee took up the bots' new calls at a
few dozen a second, so a burst of 4,000 waited inside gRPC, which cancelled those that
waited more than 30 s (its default): the referee lets them wait longer. And each live
match holds about five file descriptors, far past the usual soft limit of 1,024:
``referee serve`` raises its own to the hard limit and warns when that is short.
"""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from referee_process import serve_argv

from referee.bots import play_seat
from referee.bots.strategies import GreedyBot
from referee.client.organiser import Organiser, Target
from referee.log.signing import load_public_key
from referee.log.verify import verify_log
from referee.protocol import common, match_service
from referee.server import app
from referee.server.app import MAX_UNACCEPTED_S, RefereeServer
from referee.server.limits import ServerLimits

BURST = 500
BUSY_S = 3.0


class ServerInThread:
    """A referee on its own event loop in a thread, whose loop the test can block (as
    a thousand busy matches would), while the test's loop stays free to call it."""

    def __init__(self, tmp: Path, limits: ServerLimits) -> None:
        self.tmp = tmp
        self.limits = limits
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server: RefereeServer | None = None

    def __enter__(self) -> RefereeServer:
        self.thread.start()
        return asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)

    async def _start(self) -> RefereeServer:
        self.server = RefereeServer(
            "127.0.0.1:0", self.tmp / "logs", state_dir=self.tmp / "state", limits=self.limits
        )
        await self.server.start()
        return self.server

    def busy(self, seconds: float) -> None:
        """Hold the server's event loop for ``seconds``."""
        self.loop.call_soon_threadsafe(time.sleep, seconds)

    def __exit__(self, *_: object) -> None:
        assert self.server is not None
        asyncio.run_coroutine_threadsafe(self.server.stop(grace=0), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


async def burst_while_busy(server: ServerInThread, address: str) -> list[object]:
    """BURST calls sent while the server's loop is held: their outcomes."""
    server.busy(BUSY_S)
    # Separate connections (a server takes at most 1,000 streams on one).
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(4)
    ]
    try:
        stubs = [health_pb2_grpc.HealthStub(ch) for ch in channels]
        calls = [
            stubs[i % len(stubs)].Check(health_pb2.HealthCheckRequest(), timeout=120)
            for i in range(BURST)
        ]
        return list(await asyncio.gather(*calls, return_exceptions=True))
    finally:
        for ch in channels:
            await ch.close()


def refused(outcomes: list[object]) -> list[grpc.aio.AioRpcError]:
    return [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]


async def test_a_burst_of_calls_waiting_for_a_busy_server_is_served_in_full(tmp_path):
    holder = ServerInThread(tmp_path, ServerLimits(max_live_matches=1000))
    with holder as srv:
        outcomes = await burst_while_busy(holder, srv.address)
    assert refused(outcomes) == []
    assert all(
        o.status == health_pb2.HealthCheckResponse.SERVING  # type: ignore[attr-defined]
        for o in outcomes
    )


async def test_calls_that_wait_longer_than_the_servers_setting_are_cancelled_by_grpc(
    tmp_path, monkeypatch
):
    """What happened to the late bots of 1,000 matches with gRPC's default (30 s), here
    with the setting at 1 s: the referee's setting (MAX_UNACCEPTED_S) is what decides."""
    monkeypatch.setattr(app, "MAX_UNACCEPTED_S", 1)
    holder = ServerInThread(tmp_path, ServerLimits())
    with holder as srv:
        outcomes = await burst_while_busy(holder, srv.address)
    assert {e.code() for e in refused(outcomes)} == {grpc.StatusCode.CANCELLED}
    assert app.MAX_UNACCEPTED_S < BUSY_S < MAX_UNACCEPTED_S


# -- file descriptors ---------------------------------------------------------------


WITH_NOFILE = (
    "import os, resource, sys; "
    "resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[2]))); "
    "os.execv(sys.argv[3], sys.argv[3:])"
)
"""Set RLIMIT_NOFILE, then become the command: no preexec_fn, which runs Python in a
child forked from this test process, whose gRPC threads (the servers of the tests
before) may hold locks the child then waits on or dies of."""


def serve(tmp: Path, nofile: tuple[int, int], *args: str) -> tuple[str, str]:
    """Start ``referee serve`` with this RLIMIT_NOFILE; its "Max open files" line from
    /proc once it listens, and its stderr."""
    argv = [
        sys.executable,
        "-c",
        WITH_NOFILE,
        *map(str, nofile),
        *serve_argv(tmp, "127.0.0.1:0", *args),
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        limits = Path(f"/proc/{proc.pid}/limits").read_text() if "listening on" in line else ""
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert limits, f"serve exited {proc.returncode} before listening: {line!r}\n{err}"
    return next(ln for ln in limits.splitlines() if ln.startswith("Max open files")), err


def test_serve_raises_its_open_file_limit_to_the_hard_limit(tmp_path):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard limit here ({hard}) leaves nothing to raise to")
    wanted = 2048 if hard == resource.RLIM_INFINITY else hard
    line, err = serve(tmp_path, (256, wanted), "--max-live-matches", "300")
    soft_now, hard_now = line.split()[3:5]
    assert (int(soft_now), int(hard_now)) == (wanted, wanted)
    assert "open-file limit" not in err


def test_serve_warns_when_the_hard_limit_is_short_of_its_live_match_limit(tmp_path):
    line, err = serve(tmp_path, (512, 512), "--max-live-matches", "1000")
    assert line.split()[3:5] == ["512", "512"]
    assert "warning: the open-file limit is 512, but --max-live-matches 1000 needs" in err
    assert "past about 89 matches" in err


# -- connections that say nothing ------------------------------------------------------

SILENT = 1000
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""What a client sends first: the preface and an empty SETTINGS frame."""


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the other end has closed ``sock`` (what it sent first is read and dropped)."""
    try:
        while sock.recv(65536):
            pass
    except BlockingIOError:
        return False
    except ConnectionError:
        pass
    return True


def wait_closed(socks: list[socket.socket], timeout: float) -> float:
    """Seconds until the server closed every socket (AssertionError past ``timeout``)."""
    start = time.monotonic()
    left = list(socks)
    for s in left:
        s.setblocking(False)
    while left:
        left = [s for s in left if not closed_by_peer(s)]
        assert time.monotonic() - start < timeout, f"{len(left)} still open"
        time.sleep(0.05)
    return time.monotonic() - start


def test_silent_connections_are_closed_and_a_match_is_still_played(tmp_path):
    """The issue: 1,000 TCP connections that never sent a byte stayed open for minutes,
    and under a 1,024-descriptor limit CreateMatch then failed ("Too many open files").
    Now a connection that finishes no handshake is closed after the bound, one that has no
    call after another, and connections past what the limit leaves once each live match's
    log has a descriptor in reserve are closed as they arrive."""
    argv = [sys.executable, "-c", WITH_NOFILE, "1024", "1024"]
    argv += serve_argv(tmp_path, "127.0.0.1:0", "--handshake-timeout-ms", "1000")
    argv += ["--idle-timeout-ms", "2000", "--log-level", "warning"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    socks: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        host, port = line.split()[3].rstrip(";").rsplit(":", 1)
        held = 0
        for _ in range(SILENT):
            socks.append(socket.create_connection((host, int(port))))
        for _ in range(10):  # what the server holds while the flood is there
            held = max(held, len(os.listdir(f"/proc/{proc.pid}/fd")))
            time.sleep(0.05)
        assert held < 1024 - 150, held  # a descriptor per possible match's log kept free
        assert wait_closed(socks, timeout=10) < 10
        token = (tmp_path / "state" / "organiser-token").read_text().strip()
        log = asyncio.run(play_one_match(f"{host}:{port}", token, tmp_path / "logs"))
        key = load_public_key(tmp_path / "state" / "signing-key.pub")
        assert verify_log(log, key).ok
        # A connection that did its handshake, then made no call: closed at the idle bound.
        idle = socket.create_connection((host, int(port)))
        idle.sendall(HTTP2_PREFACE)
        assert 1.0 < wait_closed([idle], timeout=10) < 6
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Too many open files" not in err, err[-2000:]


async def play_one_match(address: str, token: str, log_dir: Path) -> Path:
    """A one-hand match created by the organiser and played by four greedy bots."""
    async with Organiser(Target(address, token)) as org:
        created = await org.create(match_service.CreateMatchRequest(profile="big-two", hands=1))
        seats = [play_seat(GreedyBot(), address, t) for t in created.seat_tokens]
        await asyncio.wait_for(asyncio.gather(*seats), 60)
        async for info in org.wait_over(created.match_id):
            last = info
    assert last.status == common.MATCH_STATUS_FINISHED
    return log_dir / f"{created.match_id}.jsonl"
