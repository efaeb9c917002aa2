"""Noise that hides an attack: floods against a real ``referee serve`` leave a log of
bounded size, a few lines per cause, and counters that say exactly what happened.

Before, each malformed HTTP request wrote a ten-line aiohttp traceback (2,000 requests:
1.3 MB of log) and 1,312 wrong organiser tokens a second went uncounted."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import aiohttp
import grpc
from referee_process import serve_argv

from referee.client.channels import bearer_metadata
from referee.protocol import match_service, match_service_grpc

MALFORMED = {
    "bad_method": b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",  # TLS on plain HTTP
    "bad_request_line": b"GET / HTTP/9.9\r\n\r\n",
    "line_too_long": b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\n\r\n",
    "bad_message": b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n",
}
EACH = 500
GUESSES = 1000
ANONYMOUS = 200
UNPARSABLE = 50
PAGE_VISITS = 100
MAX_FLOOD_LOG_BYTES = 24 * 1024
"""A few lines per cause, at most five a minute each (about 300 bytes a line)."""


async def send_raw(host: str, port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(data)
        return await asyncio.wait_for(reader.read(), 10)  # the server answers and closes
    finally:
        writer.close()


async def in_batches(calls: list, size: int = 50) -> list:
    done = []
    for start in range(0, len(calls), size):
        done += await asyncio.gather(*(c() for c in calls[start : start + size]))
    return done


async def flood(address: str, web: str, token: str) -> None:
    host, port = web.removeprefix("http://").rsplit(":", 1)
    sends = [
        (lambda data=data: send_raw(host, int(port), data))
        for data in MALFORMED.values()
        for _ in range(EACH)
    ]
    answers = await in_batches(sends)
    assert all(a.startswith(b"HTTP/1.") and b" 400 " in a[:20] for a in answers)

    async with aiohttp.ClientSession(web) as anyone:

        async def visit() -> int:
            async with anyone.get("/api/matches") as r:
                return r.status

        assert set(await in_batches([visit] * PAGE_VISITS)) == {401}

    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        request = match_service.ListMatchesRequest()

        async def call(metadata: tuple) -> grpc.StatusCode:
            try:
                await stub.ListMatches(request, metadata=metadata, timeout=30)
            except grpc.aio.AioRpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK

        wrong = bearer_metadata("not-the-token")
        codes = await in_batches([lambda: call(wrong)] * GUESSES, 100)
        codes += await in_batches([lambda: call(())] * ANONYMOUS, 100)
        assert Counter(codes) == {
            grpc.StatusCode.PERMISSION_DENIED: GUESSES,
            grpc.StatusCode.UNAUTHENTICATED: ANONYMOUS,
        }
        assert await call(bearer_metadata(token)) == grpc.StatusCode.OK  # the organiser gets in

        garbage = channel.unary_unary(
            "/pusoy.referee.v1.MatchService/GetMatch",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )

        async def unparsable() -> grpc.StatusCode:
            try:
                await garbage(b"\xff\xff\xff\xff", timeout=30)
            except grpc.aio.AioRpcError as exc:
                return exc.code()
            return grpc.StatusCode.OK

        codes = await in_batches([unparsable] * UNPARSABLE)
        assert set(codes) == {grpc.StatusCode.INVALID_ARGUMENT}


async def scrape(url: str) -> dict[str, float]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        text = await r.text()
    return {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^(pusoy_referee_\S+) (\S+)$", text, re.M)
    }


def test_floods_leave_a_bounded_log_and_exact_counts(tmp_path: Path) -> None:
    argv = serve_argv(tmp_path, "127.0.0.1:0", "--http", "127.0.0.1:0", "--http-access")
    argv += ["organiser", "--metrics-address", "127.0.0.1:0", "--log-format", "json"]
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline() for _ in range(3)]
            address = lines[0].split()[3].rstrip(";")
            web = lines[1].split(" on ", 1)[1].strip().rstrip("/")
            metrics = lines[2].split(" on ", 1)[1].strip()
            token = (tmp_path / "state" / "organiser-token").read_text().strip()
            before = log.stat().st_size
            asyncio.run(flood(address, web, token))
            samples = asyncio.run(scrape(metrics))
            grew = log.stat().st_size - before
        finally:
            proc.terminate()
            proc.wait(30)
    assert proc.returncode == 0

    total = "pusoy_referee_malformed_requests_total"
    for cause in MALFORMED:
        assert samples[f'{total}{{cause="{cause}",listener="http"}}'] == EACH, cause
    assert samples[f'{total}{{cause="unparsable",listener="grpc"}}'] == UNPARSABLE
    refused = "pusoy_referee_organiser_refusals_total"
    assert samples[f'{refused}{{via="grpc",why="wrong_credential"}}'] == GUESSES
    assert samples[f'{refused}{{via="grpc",why="no_credential"}}'] == ANONYMOUS
    assert samples[f'{refused}{{via="web",why="no_credential"}}'] == PAGE_VISITS

    flood_lines = log.read_text().splitlines()
    entries = [json.loads(line) for line in flood_lines if line.startswith("{")]
    assert grew < MAX_FLOOD_LOG_BYTES, grew  # 2,000 tracebacks were 1.3 MB
    assert "Traceback" not in log.read_text()
    per_cause = Counter(
        (e["event"], e.get("cause") or e.get("why")) for e in entries if e["level"] == "warning"
    )
    assert per_cause[("organiser call refused", "wrong_credential")] >= 1  # noticed
    assert per_cause[("malformed http request", "line_too_long")] >= 1
    assert max(per_cause.values()) <= 5, per_cause
