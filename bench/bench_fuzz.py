#!/usr/bin/env python3
"""Fuzz a running ``referee serve`` over real sockets, then check it is still whole.

Sends mutated messages to every RPC of every service while matches are being played:

* raw bytes: random and mutated serialisations as the message body of every method
  (unary and streamed), and garbage straight onto the TCP port (no HTTP/2, a broken
  HTTP/2 preface, truncated frames);
* field mutations of valid messages: CreateMatch, GetMatch, CancelMatch, GetMatchLog,
  WatchMatch, Hello, Action, LobbyHello, health and reflection requests with fields set
  to random values (huge, empty, unicode, control characters, out-of-range numbers),
  with and without the organiser's token;
* in live matches: two seats of every match are fuzzing clients that hold real seat
  tokens and answer prompts with mutated actions (random turn ids and cards, malformed
  and oversized plays, second hellos, reconnects), while the other two are real bots.

Then it checks: health still SERVING and the organiser can still create a match; no
traceback or error line on the server's stderr; the server's event loop never stalled
(a probe process sends a health check every 50 ms throughout, to the referee and to a
bare gRPC health server, the same run's reference); the server's RSS and
open file descriptors before and after; and every log the server wrote verifies and is
signed by its key. Exit status 1 if any check fails.

    python bench/bench_fuzz.py                       # 100,000 messages
    python bench/bench_fuzz.py --messages 10000 --seconds 60   # the CI run's size
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots import RandomBot, play_seat  # noqa: E402
from referee.client.channels import bearer_metadata  # noqa: E402
from referee.log.signing import load_public_key  # noqa: E402
from referee.log.verify import verify_log  # noqa: E402
from referee.protocol import (  # noqa: E402
    PROTOCOL_VERSION,
    common,
    lobby_service,
    match_service,
    play_service,
)

MS = "/pusoy.referee.v1.MatchService/"
METHODS: dict[str, tuple[str, type[Message]]] = {
    MS + "CreateMatch": ("uu", match_service.CreateMatchRequest),
    MS + "GetMatch": ("uu", match_service.GetMatchRequest),
    MS + "ListMatches": ("uu", match_service.ListMatchesRequest),
    MS + "CancelMatch": ("uu", match_service.CancelMatchRequest),
    MS + "GetMatchLog": ("us", match_service.GetMatchLogRequest),
    MS + "GetServerInfo": ("uu", match_service.GetServerInfoRequest),
    "/pusoy.referee.v1.PlayService/Play": ("ss", play_service.PlayRequest),
    "/pusoy.referee.v1.SpectatorService/WatchMatch": ("us", match_service.GetMatchRequest),
    "/pusoy.referee.v1.LobbyService/Connect": ("ss", lobby_service.ConnectRequest),
    "/grpc.health.v1.Health/Check": ("uu", health_pb2.HealthCheckRequest),
    "/grpc.health.v1.Health/Watch": ("us", health_pb2.HealthCheckRequest),
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": (
        "ss",
        reflection_pb2.ServerReflectionRequest,
    ),
}
CALL_TIMEOUT_S = 3.0
CARDS = [r + s for r in "3456789TJQKA2" for s in "CSHD"]


# -- mutations -------------------------------------------------------------------------


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three byte-level mutations of a serialisation."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        if op == 0 and out:
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif op == 1 and out:
            out[rng.randrange(len(out))] = rng.randrange(256)
        elif op == 2:
            i = rng.randrange(len(out) + 1)
            out[i:i] = rng.randbytes(rng.randint(1, 16))
        elif op == 3 and out:
            i = rng.randrange(len(out))
            del out[i : i + rng.randint(1, 8)]
        elif op == 4 and out:
            del out[rng.randrange(len(out)) :]
        elif op == 5 and out:
            i = rng.randrange(len(out))
            out += out[i : i + rng.randint(1, 32)] * rng.randint(1, 4)
        elif op == 6:  # a field with a length far beyond the message
            out += bytes([rng.randrange(1, 16) << 3 | 2]) + b"\xff\xff\xff\xff\x0f"
        else:
            out += bytes([rng.randrange(256)]) * rng.randint(1, 64)
    return bytes(out)


def random_text(rng: random.Random) -> str:
    pick = rng.randrange(10)
    if pick == 0:
        return ""
    if pick == 1:
        return "x" * rng.choice([101, 501, 1025, 5000, 70_000])
    if pick == 2:
        return "".join(chr(rng.randrange(0, 0x20)) for _ in range(rng.randint(1, 20)))
    if pick == 3:
        return "\x1b[2J\x1b]0;pwned\x07\u202e" + rng.choice(CARDS)
    if pick == 4:
        return "".join(chr(rng.randrange(0x20, 0x2FFFF)) for _ in range(rng.randint(1, 30)))
    if pick == 5:
        return "../" * rng.randint(1, 8) + "etc/passwd"
    if pick == 6:
        return " ".join(rng.choice(CARDS) for _ in range(rng.randint(1, 20)))
    if pick == 7:
        return rng.choice(["pusoy-dos", "big-two", "pusoy-dos-chips", "poker", "BIG-TWO"])
    if pick == 8:
        return rng.choice(["threshold 1000000000", "hands 0", "hands -1", "hands 99999"])
    return rng.randbytes(rng.randint(1, 40)).decode("latin-1")


def random_value(field: descriptor.FieldDescriptor, rng: random.Random) -> Any:
    t = field.type
    if t == field.TYPE_STRING:
        return random_text(rng)
    if t == field.TYPE_BYTES:
        return rng.randbytes(rng.randint(0, 64))
    if t == field.TYPE_BOOL:
        return rng.random() < 0.5
    if t == field.TYPE_ENUM:
        return rng.choice([0, 1, 2, 3, 4, 17, 99, 2**31 - 1, -1])
    if t in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return rng.choice([0, 1, 2, 3, 4, 7, 1000, 10_000, 2**31, 2**32 - 1])
    if t in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return rng.choice([0, 1, 2, 5, 2**32, 2**63, 2**64 - 1])
    if t in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return rng.choice([0, -1, 1, 2**31 - 1, -(2**31)])
    if t in (field.TYPE_INT64, field.TYPE_SINT64, field.TYPE_SFIXED64):
        return rng.choice([0, -1, 1, 2**63 - 1, -(2**63)])
    if t in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
        return rng.choice([0.0, -1.0, float("inf"), 1e300])
    raise TypeError(t)


def mutate_fields(msg: Message, rng: random.Random, depth: int = 0) -> Message:
    """Set a few fields (nested ones too) of ``msg`` to random values."""
    fields = list(msg.DESCRIPTOR.fields)
    for field in rng.sample(fields, k=min(len(fields), rng.randint(1, 3))):
        if field.message_type is not None:
            if field.message_type.GetOptions().map_entry:
                target = getattr(msg, field.name)
                for _ in range(rng.choice([1, 2, 40])):
                    with contextlib.suppress(Exception):
                        target[random_text(rng)[:200]] = random_text(rng)[:200]
            elif depth < 3:
                if field.is_repeated:
                    for _ in range(rng.randint(1, 3)):
                        mutate_fields(getattr(msg, field.name).add(), rng, depth + 1)
                else:
                    sub = getattr(msg, field.name)
                    sub.SetInParent()
                    mutate_fields(sub, rng, depth + 1)
            continue
        with contextlib.suppress(Exception):  # a value the field cannot hold: skip it
            if field.is_repeated:
                target = getattr(msg, field.name)
                for _ in range(rng.choice([1, 2, 5, 20, 200])):
                    value = random_value(field, rng)
                    target.append(value[:100] if isinstance(value, str) else value)
            else:
                setattr(msg, field.name, random_value(field, rng))
    return msg


# -- the run ---------------------------------------------------------------------------


class Fuzz:
    def __init__(
        self, address: str, token: str, rng: random.Random, budget: int, rate: float
    ) -> None:
        self.address = address
        self.rate = rate
        """Messages per second the workers send at most (a server the fuzzer saturates
        answers late however well it is written: stalls are measured below that)."""
        self.started = time.monotonic()
        self.paced = 0
        """Messages the workers sent (the fuzzing seats follow their matches' pace)."""
        self.auth = bearer_metadata(token)
        self.rng = rng
        self.budget = budget
        self.sent = 0
        self.by_kind: dict[str, int] = {}
        self.statuses: dict[str, int] = {}
        self.match_ids: list[str] = []
        self.tokens: list[str] = []
        self.turn_ids: dict[str, int] = {}
        self.done = asyncio.Event()
        self.errors: list[str] = []
        """Exceptions in the fuzzing clients themselves (not answers of the server)."""

    def count(self, kind: str, n: int = 1) -> None:
        self.sent += n
        if kind != "live":
            self.paced += n
        self.by_kind[kind] = self.by_kind.get(kind, 0) + n
        if self.sent >= self.budget:
            self.done.set()

    def status(self, code: str) -> None:
        self.statuses[code] = self.statuses.get(code, 0) + 1

    def valid(self, cls: type[Message]) -> Message:
        """A plausible message of ``cls`` built from what the run knows."""
        rng = self.rng
        mid = rng.choice(self.match_ids) if self.match_ids else "20260101-000000-00000000"
        token = rng.choice(self.tokens) if self.tokens else "no-token"
        if cls is match_service.CreateMatchRequest:
            return match_service.CreateMatchRequest(
                profile=rng.choice(["big-two", "pusoy-dos"]),
                hands=1,
                seed=f"fuzz-{rng.random()}",
                time_control=common.TimeControl(connect_timeout_ms=500, turn_time_ms=50),
            )
        if cls in (match_service.GetMatchRequest, match_service.GetMatchLogRequest):
            return cls(match_id=mid)
        if cls is match_service.CancelMatchRequest:
            return match_service.CancelMatchRequest(match_id=mid, reason="fuzz")
        if cls is play_service.PlayRequest:
            if rng.random() < 0.5:
                return play_service.PlayRequest(
                    hello=play_service.Hello(protocol_version=PROTOCOL_VERSION, token=token)
                )
            action = play_service.Action(turn_id=rng.randint(0, 400))
            action.play.cards.extend(rng.sample(CARDS, rng.randint(1, 5)))
            return play_service.PlayRequest(action=action)
        if cls is lobby_service.ConnectRequest:
            return lobby_service.ConnectRequest(
                hello=lobby_service.LobbyHello(protocol_version=1, bot_key="k")
            )
        if cls is health_pb2.HealthCheckRequest:
            return health_pb2.HealthCheckRequest(service=rng.choice(["", "x"]))
        if cls is reflection_pb2.ServerReflectionRequest:
            return reflection_pb2.ServerReflectionRequest(list_services="")
        return cls()

    def payload(self, cls: type[Message]) -> tuple[str, bytes]:
        """A mutated message for a method whose request type is ``cls`` (at most
        ~100 kB: over the server's 64 KiB limit sometimes, never megabytes)."""
        rng = self.rng
        pick = rng.randrange(4)
        if pick == 0:
            return "raw", rng.randbytes(rng.choice([0, 1, 5, 50, 500, 5000]))
        if pick == 1:
            return "bytes", mutate_bytes(self.valid(cls).SerializeToString(), rng)
        body = mutate_fields(self.valid(cls), rng).SerializeToString()
        return "fields", body[:100_000]

    async def call(self, channel: grpc.aio.Channel) -> None:
        rng = self.rng
        method = rng.choice(list(METHODS))
        shape, cls = METHODS[method]
        metadata = self.auth if rng.random() < 0.5 else ()
        try:
            if shape == "uu":
                kind, body = self.payload(cls)
                self.count(kind)
                await channel.unary_unary(method)(body, timeout=CALL_TIMEOUT_S, metadata=metadata)
            elif shape == "us":
                kind, body = self.payload(cls)
                self.count(kind)
                call = channel.unary_stream(method)(body, timeout=CALL_TIMEOUT_S, metadata=metadata)
                await self._drain(call)
            else:
                bodies = [self.payload(cls) for _ in range(rng.randint(1, 6))]
                for kind, _ in bodies:
                    self.count(kind)

                call = channel.stream_stream(method)(
                    iter([body for _, body in bodies]), timeout=CALL_TIMEOUT_S, metadata=metadata
                )
                await self._drain(call)
            self.status("OK")
        except grpc.aio.AioRpcError as exc:
            self.status(exc.code().name)

    async def _drain(self, call: Any, most: int = 20) -> None:
        n = 0
        async for _ in call:
            n += 1
            if n >= most:
                call.cancel()
                return

    async def raw_tcp(self) -> None:
        """Bytes that are not HTTP/2 (or break it) straight onto the port."""
        host, port = self.address.rsplit(":", 1)
        preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        data = self.rng.choice(
            [
                self.rng.randbytes(self.rng.randint(1, 4096)),
                preface + self.rng.randbytes(self.rng.randint(1, 512)),
                preface[: self.rng.randint(1, len(preface))],
                preface + b"\x00\x00\x12\x04\x00\x00\x00\x00\x00" + b"\xff" * 18,
                b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            ]
        )
        self.count("tcp")
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, int(port)), CALL_TIMEOUT_S
            )
            writer.write(data)
            await writer.drain()
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(reader.read(1024), 0.2)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        except (TimeoutError, OSError):
            pass

    async def worker(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            while not self.done.is_set():
                ahead = self.started + self.paced / self.rate - time.monotonic()
                if ahead > 0:
                    await asyncio.sleep(ahead)
                try:
                    if self.rng.random() < 0.02:
                        await self.raw_tcp()
                    else:
                        await self.call(channel)
                except Exception as exc:  # a bug of the fuzzer itself: reported, not hidden
                    self.errors.append(f"{type(exc).__name__}: {exc}")

    # -- live matches: two real bots, two fuzzing seats each --------------------------

    async def organise(self, channel: grpc.aio.Channel) -> None:
        """Keep ``matches`` live matches going until the budget is spent."""
        create = channel.unary_unary(
            MS + "CreateMatch",
            request_serializer=match_service.CreateMatchRequest.SerializeToString,
            response_deserializer=match_service.CreateMatchResponse.FromString,
        )
        while not self.done.is_set():
            try:
                await self._one_match(create)
            except Exception as exc:
                self.errors.append(f"organising: {type(exc).__name__}: {exc}")
                await asyncio.sleep(1)

    async def _one_match(self, create: Any) -> None:
        created = await create(
            match_service.CreateMatchRequest(
                profile=self.rng.choice(["big-two", "pusoy-dos"]),
                hands=2,
                time_control=common.TimeControl(connect_timeout_ms=5000, turn_time_ms=150),
            ),
            metadata=self.auth,
        )
        self.match_ids = [*self.match_ids, created.match_id][-50:]
        self.tokens = (self.tokens + list(created.seat_tokens))[-200:]
        seats = [
            play_seat(RandomBot(self.rng.randrange(1 << 30)), self.address, t)
            for t in created.seat_tokens[:2]
        ] + [self.fuzz_seat(t) for t in created.seat_tokens[2:]]
        await asyncio.gather(*seats, return_exceptions=True)

    async def fuzz_seat(self, token: str) -> None:
        """Hold a seat and answer each prompt with mutated actions (sometimes a legal one)."""
        rng = self.rng
        for _ in range(3):  # a few reconnects
            queue: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()
            queue.put_nowait(
                play_service.PlayRequest(
                    hello=play_service.Hello(
                        protocol_version=PROTOCOL_VERSION,
                        token=token,
                        want_legal_plays=True,
                        bot_name=random_text(rng)[:300],
                    )
                )
            )
            self.count("live")

            async def requests(
                queue: asyncio.Queue[play_service.PlayRequest | None] = queue,
            ) -> AsyncIterator[play_service.PlayRequest]:
                while (msg := await queue.get()) is not None:
                    yield msg

            async with grpc.aio.insecure_channel(self.address) as channel:
                play = channel.stream_stream(
                    "/pusoy.referee.v1.PlayService/Play",
                    request_serializer=play_service.PlayRequest.SerializeToString,
                    response_deserializer=play_service.PlayResponse.FromString,
                )
                call = play(requests())
                try:
                    async for msg in call:
                        if msg.HasField("event") and msg.event.HasField("match_ended"):
                            queue.put_nowait(None)
                            return
                        if not msg.HasField("prompt"):
                            continue
                        prompt = msg.prompt
                        for _ in range(rng.randint(0, 4)):
                            action = play_service.Action(turn_id=prompt.turn_id)
                            action.play.cards.extend(rng.sample(CARDS, rng.randint(1, 6)))
                            mutated = mutate_fields(action, rng) if rng.random() < 0.5 else action
                            queue.put_nowait(play_service.PlayRequest(action=mutated))
                            self.count("live")
                        if rng.random() < 0.05:
                            queue.put_nowait(None)  # leave, then come back
                            break
                        if prompt.legal_plays and rng.random() < 0.7:
                            good = play_service.Action(turn_id=prompt.turn_id)
                            good.play.cards.extend(rng.choice(prompt.legal_plays).cards)
                            queue.put_nowait(play_service.PlayRequest(action=good))
                            self.count("live")
                        if self.done.is_set():
                            queue.put_nowait(None)
                            return
                except grpc.aio.AioRpcError as exc:
                    self.status("live " + exc.code().name)


# -- the server and the probe ----------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_figures(pid: int) -> tuple[float, int]:
    """RSS in MB and open file descriptors of a process."""
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def run_reference() -> None:
    """The reference for the probe: a gRPC server in its own process with the health
    service only, on the same machine at the same time. Prints its port, serves until
    SIGTERM."""
    from grpc_health.v1 import health_pb2_grpc
    from grpc_health.v1._async import HealthServicer

    async def serve() -> None:
        server = grpc.aio.server()
        health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        await health.set("", health_pb2.HealthCheckResponse.SERVING)
        print(port, flush=True)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        await server.stop(0)

    asyncio.run(serve())


def run_probe(address: str, out: str) -> None:
    """Until SIGTERM, every 50 ms a health check of the referee and one of the reference
    server; latencies (ms) and failures of each to ``out``."""
    import subprocess

    stop = False

    def halt(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, halt)
    reference = subprocess.Popen(
        [sys.executable, __file__, "--reference"], stdout=subprocess.PIPE, text=True
    )
    assert reference.stdout is not None
    ref_address = f"127.0.0.1:{reference.stdout.readline().strip()}"
    results: dict[str, dict[str, Any]] = {}
    try:
        with grpc.insecure_channel(address) as a, grpc.insecure_channel(ref_address) as b:
            checks = {
                name: channel.unary_unary(
                    "/grpc.health.v1.Health/Check",
                    request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                    response_deserializer=health_pb2.HealthCheckResponse.FromString,
                )
                for name, channel in (("referee", a), ("reference", b))
            }
            results = {name: {"latencies": [], "failures": 0} for name in checks}
            while not stop:
                for name, check in checks.items():
                    t0 = time.perf_counter()
                    try:
                        check(health_pb2.HealthCheckRequest(), timeout=10)
                        results[name]["latencies"].append((time.perf_counter() - t0) * 1000)
                    except grpc.RpcError:
                        results[name]["failures"] += 1
                time.sleep(0.05)
    finally:
        reference.terminate()
        reference.wait()
    Path(out).write_text(json.dumps(results))


def latency_text(lat: list[float]) -> str:
    p99 = statistics.quantiles(lat, n=100)[98] if len(lat) > 100 else max(lat)
    return f"p50 {statistics.median(lat):.1f} ms, p99 {p99:.1f} ms, max {max(lat):.1f} ms"


async def main_async(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-fuzz-"))
    logs, state = tmp / "logs", tmp / "state"
    stderr_path = tmp / "server.stderr"
    with open(stderr_path, "wb") as err:  # noqa: ASYNC230 (once, before anything runs)
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "referee.cli",
            "serve",
            *("--address", "127.0.0.1:0", "--log-dir", str(logs), "--state-dir", str(state)),
            *("--log-format", "json", "--log-level", "warning"),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )
    assert server.stdout is not None
    first = (await server.stdout.readline()).decode()
    address = first.split("listening on ")[1].split(";")[0]
    token = (state / "organiser-token").read_text().strip()
    key = load_public_key(state / "signing-key.pub")
    probe_out = tmp / "probe.json"
    probe = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--probe", address, "--probe-out", str(probe_out)
    )
    rng = random.Random(args.seed)
    fuzz = Fuzz(address, token, rng, args.messages, args.rate)
    await asyncio.sleep(1.0)
    rss0, fds0 = proc_figures(server.pid)
    cpu0 = cpu_seconds(server.pid)
    t0 = time.perf_counter()
    fuzz.started = time.monotonic()
    failures: list[str] = []
    async with grpc.aio.insecure_channel(address) as organiser:
        tasks = [asyncio.create_task(fuzz.organise(organiser)) for _ in range(args.matches)]
        tasks += [asyncio.create_task(fuzz.worker()) for _ in range(args.workers)]
        try:
            await asyncio.wait_for(fuzz.done.wait(), args.seconds)
        except TimeoutError:
            if fuzz.sent < args.messages:
                failures.append(f"only {fuzz.sent} of {args.messages} messages in {args.seconds} s")
        fuzz.done.set()
        await asyncio.wait(tasks, timeout=30)
        for task in tasks:
            task.cancel()
        elapsed = time.perf_counter() - t0
        rss1, fds1 = proc_figures(server.pid)
        busy = (cpu_seconds(server.pid) - cpu0) / elapsed
        # The server still serves: health and a real match by the organiser.
        check = organiser.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        health = await check(health_pb2.HealthCheckRequest(), timeout=10)
        if health.status != health_pb2.HealthCheckResponse.SERVING:
            failures.append(f"health is {health.status}")
        create = organiser.unary_unary(
            MS + "CreateMatch",
            request_serializer=match_service.CreateMatchRequest.SerializeToString,
            response_deserializer=match_service.CreateMatchResponse.FromString,
        )
        after = await create(
            match_service.CreateMatchRequest(profile="big-two", hands=1, seed="after the fuzz"),
            metadata=fuzz.auth,
            timeout=10,
        )
        outcomes = await asyncio.gather(
            *(play_seat(RandomBot(i), address, t) for i, t in enumerate(after.seat_tokens))
        )
        if not all(o.ended is not None for o in outcomes):
            failures.append("a match played after the fuzz did not end for every seat")
    probe.send_signal(signal.SIGTERM)
    await probe.wait()
    server.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(server.wait(), 60)
    if code != 0:
        failures.append(f"referee serve exited with {code}")
    await asyncio.sleep(0)

    stderr = stderr_path.read_text(errors="replace").splitlines()
    levels: dict[str, int] = {}
    bad: list[str] = []
    for line in stderr:
        try:
            entry = json.loads(line)
        except ValueError:
            bad.append(line)
            continue
        level = entry.get("level", "?")
        levels[level] = levels.get(level, 0) + 1
        if level in ("error", "critical") or "exception" in entry:
            bad.append(line)
    if bad:
        failures.append(f"{len(bad)} error or non-log lines on the server's stderr: {bad[:3]}")
    probed = json.loads(probe_out.read_text())
    lat, ref = probed["referee"]["latencies"], probed["reference"]["latencies"]
    if probed["referee"]["failures"]:
        failures.append(f"{probed['referee']['failures']} health checks failed during the fuzz")
    # A stall: the referee slower than the slowest answer of a bare server on the same
    # machine at the same time, by more than --max-stall-ms (on a loaded machine both
    # wait for a core now and then; only the referee's own blocking counts).
    stalled = max(lat) > max(ref) + args.max_stall_ms
    if stalled and args.stalls_fail:
        failures.append(
            f"the server stalled: a health check took {max(lat):.0f} ms "
            f"(the reference's slowest: {max(ref):.0f} ms)"
        )
    reports = [verify_log(p, key) for p in sorted(logs.glob("*.jsonl"))]
    not_ok = [r.summary() for r in reports if not r.ok]
    if not_ok:
        failures.append(f"{len(not_ok)} of {len(reports)} logs do not verify: {not_ok[:3]}")
    if fuzz.errors:
        failures.append(f"{len(fuzz.errors)} errors in the fuzzer itself: {fuzz.errors[:3]}")
    if fds1 > fds0 + 64:
        failures.append(f"file descriptors grew from {fds0} to {fds1}")

    print(
        f"referee fuzz, seed {args.seed}: {fuzz.sent} mutated messages in {elapsed:.1f} s "
        f"(at most {args.rate:.0f}/s from the workers, plus the fuzzing seats)"
    )
    print(f"  by kind: {json.dumps(fuzz.by_kind, sort_keys=True)}")
    print(f"  answers: {json.dumps(fuzz.statuses, sort_keys=True)}")
    print(
        f"  health probe: {len(lat)} checks of the referee, {latency_text(lat)}, "
        f"{probed['referee']['failures']} failed"
    )
    print(f"  same run's reference (a bare health server): {latency_text(ref)}")
    if stalled and not args.stalls_fail:
        print(f"  STALL (reported, not failed): {max(lat):.0f} ms against {max(ref):.0f} ms")
    print(f"  server RSS {rss0:.0f} MB -> {rss1:.0f} MB, open fds {fds0} -> {fds1}")
    print(
        f"  server CPU: {busy:.0%} of a core during the fuzz "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    print(f"  server stderr: {len(stderr)} lines by level {json.dumps(levels, sort_keys=True)}")
    print(f"  logs: {len(reports)} written, {len(reports) - len(not_ok)} verify with the key")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        print(f"  (kept: {tmp})")
        return 1
    print("OK")
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=1800, help="give up after this long")
    ap.add_argument("--matches", type=int, default=6, help="live matches at once")
    ap.add_argument("--workers", type=int, default=24, help="concurrent fuzzing clients")
    ap.add_argument(
        "--rate", type=float, default=150, help="messages per second, at most (default 150)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--max-stall-ms",
        type=float,
        default=1000,
        help="how much slower than the reference's slowest a health check may be",
    )
    ap.add_argument(
        "--report-stalls",
        dest="stalls_fail",
        action="store_false",
        help="report a stall without failing (tests check behaviour, not timing)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the logs and stderr")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    ap.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--probe-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reference:
        run_reference()
        return
    if args.probe:
        run_probe(args.probe, args.probe_out)
        return
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
