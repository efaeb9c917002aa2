"""The referee stays within bounds when the disk fills up or readers stop reading.

A full disk (a small tmpfs as the log folder) ends the match cleanly; a seat that never
reads its stream is cut off (and the log says so); 200 spectators that never read leave
the server's memory bounded. Real gRPC over real sockets; the memory is the RSS of a real
``referee serve`` process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from referee.bots import GreedyBot, play_seat
from referee.client.channels import organiser_channel
from referee.log import read_log
from referee.log.verify import verify_log
from referee.protocol import (
    PROTOCOL_VERSION,
    common,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
)
from referee.server.app import RefereeServer

from .conftest import create

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@needs_root
async def test_a_full_disk_ends_the_match_cleanly_and_new_matches_are_refused(tmp_path):
    with small_tmpfs(tmp_path / "logs", "24k") as logs:
        server = RefereeServer("127.0.0.1:0", logs, state_dir=tmp_path / "state")
        await server.start()
        try:
            async with server.organiser_channel() as channel:
                organiser = match_service_grpc.MatchServiceStub(channel)
                created = await create(organiser, profile="pusoy-dos", hands=50, seed="full")
                outcomes = await asyncio.wait_for(
                    asyncio.gather(
                        *(play_seat(GreedyBot(), server.address, t) for t in created.seat_tokens),
                        return_exceptions=True,
                    ),
                    60,
                )
                # every bot got its stream closed, and none hangs
                assert all(
                    not isinstance(o, BaseException) or isinstance(o, Exception) for o in outcomes
                )
                info = (
                    await organiser.GetMatch(
                        match_service.GetMatchRequest(match_id=created.match_id)
                    )
                ).match
                assert info.status == common.MATCH_STATUS_CANCELLED
                assert "No space left on device" in info.failure
                assert not any(info.connected)
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await create(organiser, seed="no room")
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE
                # the log holds whole lines only, and what is there is true
                read = read_log(server.matches.log_path(created.match_id))
                assert not read.truncated and read.lines
        finally:
            await server.stop(grace=0.2)


ROOT = Path(__file__).resolve().parents[2]
CROWD = Path(__file__).resolve().parent / "crowd.py"
STOP_WITHIN_S = 30
"""What docs/deploy.md asks a stop to be given (docker stop -t 30): the server's grace
for streams that never finish (STOP_GRACE_S, 5 s), closing the logs, and a loaded
machine's delays."""


def _stop(proc: subprocess.Popen[str]) -> None:
    """Freeze a process: its sockets are not read any more (a reader that never reads)."""
    os.kill(proc.pid, signal.SIGSTOP)


def _end(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16384)]
"""A client whose flow-control window stays at 16 KB: once it stops reading, gRPC stops
sending to it, and what the match sends it waits in the referee's outbox."""


async def test_a_seat_that_never_reads_is_cut_off_and_the_match_goes_on(server, organiser):
    created = await create(
        organiser,
        profile="pusoy-dos",
        hands=60,
        seed="deaf",
        time_control={"turn_time_ms": 100},
        fault_policy={"max_strikes": 1},
    )
    path = server.matches.log_path(created.match_id)

    async def hello_then_silence() -> AsyncIterator[play_service.PlayRequest]:
        yield play_service.PlayRequest(
            hello=play_service.Hello(
                protocol_version=PROTOCOL_VERSION, token=created.seat_tokens[0], bot_name="deaf"
            )
        )
        await asyncio.Event().wait()

    async with grpc.aio.insecure_channel(server.address, options=SMALL_WINDOW) as channel:
        deaf = play_service_grpc.PlayServiceStub(channel).Play(hello_then_silence())
        outcomes = await asyncio.wait_for(
            asyncio.gather(
                *(play_seat(GreedyBot(), server.address, t) for t in created.seat_tokens[1:])
            ),
            180,
        )
        assert all(o.ended is not None for o in outcomes)
        deaf.cancel()
    assert verify_log(path).ok
    causes = [
        ln.entry.event.seat_disconnected.cause
        for ln in read_log(path).lines
        if ln.kind == "seat_disconnected" and ln.entry.event.seat_disconnected.seat == 0
    ]
    assert any("not reading its stream" in c for c in causes), causes


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_spectators_that_never_read_keep_the_servers_memory_bounded(tmp_path, capsys):
    serve = subprocess.Popen(  # noqa: ASYNC220
        [
            *(sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0"),
            *("--log-dir", str(tmp_path / "logs"), "--state-dir", str(tmp_path / "state")),
            *("--log-level", "error"),
            *("--max-spectators-per-match", "200"),  # all of the crowd gets in
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    crowd = None
    try:
        assert serve.stdout is not None
        line = await asyncio.to_thread(serve.stdout.readline)
        address = line.split()[3].rstrip(";")
        token = (tmp_path / "state" / "organiser-token").read_text().strip()
        async with organiser_channel(address, token) as channel:
            organiser = match_service_grpc.MatchServiceStub(channel)
            created = await create(organiser, profile="pusoy-dos", hands=100, seed="crowd")
            before = _rss_kb(serve.pid)
            crowd = subprocess.Popen(  # noqa: ASYNC220
                [sys.executable, str(CROWD), address, created.match_id, "200"],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert crowd.stdout is not None
            assert (await asyncio.to_thread(crowd.stdout.readline)).startswith("watching")
            _stop(crowd)
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(play_seat(GreedyBot(), address, t) for t in created.seat_tokens)),
                180,
            )
            assert all(o.ended is not None for o in outcomes)
            peak = _rss_kb(serve.pid)
        grown_mb = (peak - before) / 1024
        with capsys.disabled():
            print(
                f"\n[200 frozen spectators, 100 hands: referee RSS {before // 1024} MB -> "
                f"{peak // 1024} MB]"
            )
        assert grown_mb < 300, f"the server grew by {grown_mb:.0f} MB"
        [log] = list((tmp_path / "logs").glob("*.jsonl"))
        assert verify_log(log).ok
        # Stopped with the crowd still frozen: its streams never finish, and the server
        # cuts them when its grace runs out, then exits (docs/deploy.md, "Stopping").
        stopping = time.monotonic()
        serve.terminate()
        assert serve.wait(STOP_WITHIN_S) == 0
        with capsys.disabled():
            print(f"[stopped with the crowd frozen in {time.monotonic() - stopping:.1f} s]")
    finally:
        if crowd is not None:
            _end(crowd)
        if serve.poll() is None:
            serve.kill()
            serve.wait()
