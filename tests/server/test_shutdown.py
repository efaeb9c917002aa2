"""`referee serve` stops cleanly on SIGTERM: running matches end and their logs close."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from referee_process import serve_argv

from referee.client.channels import organiser_channel
from referee.log import read_log
from referee.log.signing import load_public_key
from referee.log.verify import verify_log
from referee.protocol import common, match_service, match_service_grpc

from .conftest import Seat


async def test_sigterm_cancels_running_matches_and_closes_their_logs(tmp_path: Path):
    logs = tmp_path / "logs"
    proc = await asyncio.create_subprocess_exec(
        *serve_argv(tmp_path, "127.0.0.1:0", "--log-format", "json"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        address = line.split("listening on ")[1].split(";")[0]
        token = (tmp_path / "state" / "organiser-token").read_text().strip()
        async with organiser_channel(address, token) as ch:
            stub = match_service_grpc.MatchServiceStub(ch)
            created = await stub.CreateMatch(
                match_service.CreateMatchRequest(profile="big-two", hands=50, seed="sigterm")
            )
            # Two seats play, two never answer: the match is mid-turn when SIGTERM comes.
            seats = [Seat(address, t, None).start() for t in created.seat_tokens]
            await asyncio.gather(*(s.wait_kind("welcome") for s in seats))
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 30)
            for s in seats:
                await s.finish()
        assert code == 0
        path = next(logs.glob("*.jsonl"))
        read = read_log(path)
        assert read.complete
        ended = read.lines[-1].entry.event.match_ended
        assert ended.status == common.MATCH_STATUS_CANCELLED
        assert ended.cancel_reason == "server shutting down"
        assert verify_log(path, load_public_key(tmp_path / "state" / "signing-key.pub")).ok
        assert all(s.events("match_ended") for s in seats)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
