"""Prometheus metrics: scraped over HTTP during and after a real match (rejections, a
timeout, a dropped and reconnected seat, a spectator, a bad token) and checked against
the match's log; the endpoint's bounds; `referee serve --metrics-address`."""

from __future__ import annotations

import asyncio
import collections
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from referee.client.channels import organiser_channel
from referee.log import read_log
from referee.log.reader import decisions
from referee.protocol import (
    match_service,
    match_service_grpc,
    play_service,
    spectator_service,
    spectator_service_grpc,
)
from referee.server import metrics as metrics_module
from referee.server.app import RefereeServer
from referee.server.metrics import DEFAULT_CAUSES, REJECTION_REASONS
from referee.service import endpoint as endpoint_module
from tests.support.polls import until

from .conftest import Seat, create, lowest_policy

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def http_get(address: str, path: str = "/metrics", raw: bytes | None = None) -> bytes:
    host, port = address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(raw or f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return data


async def scrape(address: str) -> Samples:
    response = await http_get(address)
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK"), head
    assert b"Content-Type: text/plain; version=" in head
    out: Samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def from_log(path: Path) -> dict[str, collections.Counter[object]]:
    """What the metrics must say about this log, counted from its entries alone."""
    read = read_log(path)
    c: dict[str, collections.Counter[object]] = collections.defaultdict(collections.Counter)
    for line in read.lines:
        event = line.entry.event
        kind = event.WhichOneof("kind")
        c["events"][kind] += 1
        if kind in ("played", "passed"):
            c["moves"]["play" if kind == "played" else "pass"] += 1
            cause = getattr(event, kind).default_cause
            if cause:
                c["defaults"][DEFAULT_CAUSES[cause]] += 1
        elif kind == "action_rejected":
            c["rejections"][REJECTION_REASONS[event.action_rejected.reason]] += 1
        elif kind == "seat_connected":
            c["connects"]["reconnect" if event.seat_connected.reconnect else "first"] += 1
        elif kind == "seat_disconnected":
            c["disconnects"]["all"] += 1
    for command, group in decisions(read.lines):
        c["decisions"]["all"] += 1
        kinds = {ln.entry.event.WhichOneof("kind") for ln in group}
        action = command is not None and command.WhichOneof("kind") == "action"
        if action and "turn_started" in kinds:
            c["prompted_actions"]["all"] += 1
    return c


def assert_matches_log(samples: Samples, path: Path) -> dict[str, collections.Counter[object]]:
    want = from_log(path)
    p = "pusoy_referee_"
    for kind in metrics_module.EVENT_TYPES:
        assert value(samples, p + "events_total", type=kind) == want["events"][kind], kind
    for move in ("play", "pass"):
        assert value(samples, p + "moves_total", move=move) == want["moves"][move]
    for reason in REJECTION_REASONS.values():
        assert value(samples, p + "rejections_total", reason=reason) == want["rejections"][reason]
    for cause in DEFAULT_CAUSES.values():
        assert value(samples, p + "default_actions_total", cause=cause) == want["defaults"][cause]
    for kind in ("first", "reconnect"):
        assert value(samples, p + "seat_connects_total", kind=kind) == want["connects"][kind]
    assert value(samples, p + "seat_disconnects_total") == want["disconnects"]["all"]
    assert value(samples, p + "log_append_seconds_count") == want["decisions"]["all"]
    assert value(samples, p + "turn_latency_seconds_count") == want["prompted_actions"]["all"]
    return want


async def test_metrics_during_and_after_a_match_agree_with_its_log(tmp_path: Path) -> None:
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", metrics_address="127.0.0.1:0")
    await server.start()
    assert server.metrics_endpoint is not None
    scrape_at = f"127.0.0.1:{server.metrics_endpoint.port}"
    p = "pusoy_referee_"
    try:
        before = await scrape(scrape_at)
        assert value(before, p + "matches_created_total") == 0
        version = [k for k in before if k[0] == p + "build_info"]
        assert len(version) == 1 and before[version[0]] == 1

        async with server.organiser_channel() as channel:
            organiser = match_service_grpc.MatchServiceStub(channel)
            created = await create(
                organiser, seed="metrics", hands=2, time_control={"turn_time_ms": 1500}
            )
            path = server.matches.log_path(created.match_id)

            # A Hello with a token no seat has: refused, counted, never logged.
            stranger = Seat(server.address, "not-a-token")
            stranger.start()
            await stranger.wait_kind("refusal")

            tries: collections.Counter[int] = collections.Counter()

            def clumsy(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
                """A card the seat does not hold on its first two answers, then legal."""
                tries[prompt.turn_id] += 1
                if len(tries) <= 1 and tries[prompt.turn_id] <= 2:
                    held = set(prompt.hand)
                    return [next(c for c in ("3D", "3C", "3H", "3S", "4D") if c not in held)]
                return lowest_policy(seat, prompt)

            seats = [Seat(server.address, t, lowest_policy) for t in created.seat_tokens]
            seats[1].policy, seats[1].retry = clumsy, True
            seats[2].policy = None  # holds its first prompt: the match waits, we scrape
            for s in seats:
                s.start()
            watch = spectator_service_grpc.SpectatorServiceStub(channel).WatchMatch(
                spectator_service.WatchMatchRequest(match_id=created.match_id)
            )
            first = await asyncio.wait_for(watch.read(), 10)
            assert first.HasField("event")
            await seats[2].wait_kind("prompt")

            during = await scrape(scrape_at)  # the match waits for seat 2: the log is still
            assert_matches_log(during, path)
            assert value(during, p + "matches", status="running") == 1
            assert value(during, p + "matches", status="waiting") == 0
            assert value(during, p + "connected_seats") == 4
            assert value(during, p + "spectators") == 1
            assert value(during, p + "hello_refusals_total", reason="bad_token") == 1
            assert value(during, p + "matches_ended_total", status="finished") == 0

            # Seat 2 never answers that prompt (a timeout), then plays; seat 3 drops and
            # comes back with its token.
            seats[2].policy = lowest_policy
            await seats[3].wait_kind("prompt")
            await seats[3].drop()
            seats[3] = Seat(server.address, created.seat_tokens[3], lowest_policy).start()
            for s in seats:
                await s.finish(60)
            watch.cancel()
            await server.matches.wait_over(created.match_id)

        after = await scrape(scrape_at)
        want = assert_matches_log(after, path)
        assert want["defaults"]["timeout"] >= 1
        assert want["rejections"]["card_not_in_hand"] == 2
        assert want["connects"]["reconnect"] == 1 and want["disconnects"]["all"] >= 1
        assert value(after, p + "matches_created_total") == 1
        assert value(after, p + "matches_ended_total", status="finished") == 1
        assert value(after, p + "matches", status="running") == 0
        assert value(after, p + "connected_seats") == 0
        assert value(after, p + "spectators") == 0
        assert value(after, p + "play_streams_total") == 6  # 4 seats, 1 reconnect, 1 stranger
        assert value(after, p + "turn_latency_seconds_sum") > 0
        assert value(after, p + "log_append_seconds_sum") > 0
    finally:
        await server.stop(grace=0.5)


async def test_a_cancelled_and_a_suspended_match_are_counted_apart(tmp_path: Path) -> None:
    server = RefereeServer(
        "127.0.0.1:0",
        tmp_path / "logs",
        state_dir=tmp_path / "state",
        metrics_address="127.0.0.1:0",
    )
    await server.start()
    assert server.metrics_endpoint is not None and server.metrics is not None
    p = "pusoy_referee_"
    try:
        async with server.organiser_channel() as channel:
            organiser = match_service_grpc.MatchServiceStub(channel)
            one = await create(organiser, time_control={"connect_timeout_ms": 60_000})
            await create(organiser, time_control={"connect_timeout_ms": 60_000})
            mid = await scrape(f"127.0.0.1:{server.metrics_endpoint.port}")
            assert value(mid, p + "matches", status="waiting") == 2
            await organiser.CancelMatch(match_service.CancelMatchRequest(match_id=one.match_id))
    finally:
        await server.stop(grace=0.5, suspend=True)
    text = server.metrics.exposition()[0].decode()
    assert f'{p}matches_ended_total{{status="cancelled"}} 1.0' in text
    assert f'{p}matches_ended_total{{status="unfinished"}} 1.0' in text
    assert f'{p}matches{{status="waiting"}} 0.0' in text

    again = RefereeServer(
        "127.0.0.1:0", tmp_path / "logs", state_dir=tmp_path / "state", resume=True
    )
    await again.start()
    try:
        assert len([r for r in again.resumed if r.resumed]) == 1
    finally:
        await again.stop(grace=0.5)


async def test_the_endpoint_answers_only_small_get_requests(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(endpoint_module, "REQUEST_TIMEOUT_S", 0.5)
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", metrics_address="127.0.0.1:0")
    await server.start()
    assert server.metrics_endpoint is not None
    at = f"127.0.0.1:{server.metrics_endpoint.port}"
    try:
        assert (await http_get(at, "/nothing")).startswith(b"HTTP/1.1 404")
        post = b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
        assert (await http_get(at, raw=post)).startswith(b"HTTP/1.1 405")
        assert (await http_get(at, raw=b"garbage\r\n\r\n")).startswith(b"HTTP/1.1 400")
        huge = b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n"
        assert (await http_get(at, raw=huge)).startswith(b"HTTP/1.1 400")
        # Clients that never finish their request are let go after the timeout, and do
        # not block a scrape meanwhile.
        host, port = at.split(":")
        slow = [await asyncio.open_connection(host, int(port)) for _ in range(10)]
        for _, writer in slow:
            writer.write(b"GET /metr")
        assert value(await scrape(at), "pusoy_referee_matches_created_total") == 0
        for reader, writer in slow:
            assert await asyncio.wait_for(reader.read(), 5) in (b"", b"HTTP/1.1 400 Bad Request")
            writer.close()
        # Past the connection limit, a connection is closed at once.
        monkeypatch.setattr(endpoint_module, "MAX_CONNECTIONS", 2)
        endpoint = server.metrics_endpoint
        held = [await asyncio.open_connection(host, int(port)) for _ in range(2)]
        await until(lambda: len(endpoint._open) == 2, "the endpoint to take both connections")
        reader, writer = await asyncio.open_connection(host, int(port))
        assert await asyncio.wait_for(reader.read(), 2) == b""
        writer.close()
        for _, w in held:
            w.close()
        # Their slots free up once the endpoint sees them closed.
        await until(lambda: not endpoint._open, "the endpoint to let the closed ones go")
        open_metrics = b"GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n"
        answer = await http_get(at, raw=open_metrics)
        assert b"application/openmetrics-text" in answer and answer.endswith(b"# EOF\n")
    finally:
        await server.stop(grace=0.5)


def test_a_bad_metrics_address_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        RefereeServer("127.0.0.1:0", Path("unused"), metrics_address="localhost:http")


def _serve(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0",
            "--log-dir", str(tmp_path / "logs"), "--state-dir", str(tmp_path / "state"),
            "--log-format", "json", "--log-stream", "stdout", *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


async def _line(stream, pattern: str, timeout: float = 60) -> re.Match[str]:
    async with asyncio.timeout(timeout):
        while True:
            line = await asyncio.to_thread(stream.readline)
            if not line:
                raise AssertionError(f"stream ended before {pattern!r}")
            found = re.search(pattern, line)
            if found:
                return found


async def test_serve_with_metrics_address_then_sigusr1_leaves_matches_to_resume(
    tmp_path: Path,
) -> None:
    proc = _serve(tmp_path, "--metrics-address", "127.0.0.1:0")
    try:
        address = (await _line(proc.stderr, r"listening on (\S+);")).group(1)
        metrics_at = (await _line(proc.stderr, r"metrics on http://(\S+)/metrics")).group(1)
        token = (tmp_path / "state" / "organiser-token").read_text().strip()
        async with organiser_channel(address, token) as channel:
            organiser = match_service_grpc.MatchServiceStub(channel)
            created = await create(organiser, time_control={"connect_timeout_ms": 60_000})
            seat = Seat(address, created.seat_tokens[0], None).start()
            await seat.wait_kind("welcome")
            samples = await scrape(metrics_at)
            assert value(samples, "pusoy_referee_connected_seats") == 1
            proc.send_signal(signal.SIGUSR1)
            await seat.finish()
        assert await asyncio.to_thread(proc.wait, 30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    logs = proc.stdout.read().splitlines() if proc.stdout else []
    assert logs and all(line.startswith("{") for line in logs), logs  # JSON only on stdout
    assert any('"suspend": true' in line for line in logs)
    path = tmp_path / "logs" / f"{created.match_id}.jsonl"
    assert not read_log(path).finished
    again = _serve(tmp_path)
    try:
        resumed = await _line(again.stderr, r"match (\S+) (resumed|not resumed.*)")
        assert resumed.groups() == (created.match_id, "resumed")
        again.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(again.wait, 30) == 0
    finally:
        if again.poll() is None:
            again.kill()
            again.wait()
    assert read_log(path).finished  # SIGTERM cancels it this time


def test_metric_names_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text()
    text = metrics_module.Metrics().exposition()[0].decode()
    names = {m.group(1) for m in re.finditer(r"^# HELP (\S+) ", text, re.M)}
    assert names, text
    missing = sorted(n for n in names if f"`{n.removesuffix('_total')}" not in doc)
    assert not missing, f"docs/deploy.md does not describe {missing}"
