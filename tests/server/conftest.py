"""Fixtures: a real referee on a loopback port, and scripted seats over real gRPC."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from referee.protocol import (
    PROTOCOL_VERSION,
    common,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
)
from referee.server.app import RefereeServer


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RefereeServer]:
    srv = RefereeServer("127.0.0.1:0", tmp_path / "logs")
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(grace=0.5)


@pytest.fixture
async def organiser(server: RefereeServer) -> AsyncIterator[match_service_grpc.MatchServiceStub]:
    """The organiser's stub: its channel sends the server's organiser token."""
    async with server.organiser_channel() as channel:
        yield match_service_grpc.MatchServiceStub(channel)


def log_path(server: RefereeServer, match_id: str) -> Path:
    """Where the server writes a match's log (the server itself never says)."""
    return server.matches.log_path(match_id)


def entry_lines(path: Path) -> list[str]:
    """A log's entry lines, without the signature trailer."""
    return [ln for ln in path.read_text().splitlines() if not ln.startswith('{"trailer"')]


async def create(
    organiser: match_service_grpc.MatchServiceStub, **kw: Any
) -> match_service.CreateMatchResponse:
    kw.setdefault("profile", "big-two")
    kw.setdefault("hands", 1)
    tc = kw.pop("time_control", {})
    tc.setdefault("connect_timeout_ms", 5000)
    tc.setdefault("turn_time_ms", 2000)
    fp = kw.pop("fault_policy", {})
    return await organiser.CreateMatch(
        match_service.CreateMatchRequest(
            time_control=common.TimeControl(**tc), fault_policy=common.FaultPolicy(**fp), **kw
        )
    )


def play_action(turn_id: int, cards: list[str] | None) -> play_service.PlayRequest:
    """A play of ``cards``, or a pass when ``cards`` is None."""
    action = play_service.Action(turn_id=turn_id)
    if cards is None:
        getattr(action, "pass").SetInParent()
    else:
        action.play.cards.extend(cards)
    return play_service.PlayRequest(action=action)


Policy = Callable[["Seat", play_service.TurnPrompt], "list[str] | None"]


def lowest_policy(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
    """Pass when allowed, else the weakest legal play."""
    if prompt.can_pass or not prompt.legal_plays:
        return None
    return list(prompt.legal_plays[0].cards)


@dataclasses.dataclass
class Seat:
    """A scripted bot over a raw stream: records every message it receives."""

    address: str
    token: str
    policy: Policy | None = lowest_policy
    want_legal_plays: bool = True
    protocol_version: int = PROTOCOL_VERSION
    received: list[play_service.PlayResponse] = dataclasses.field(default_factory=list)
    sent: list[play_service.PlayRequest] = dataclasses.field(default_factory=list)
    seat: int = -1
    status: grpc.StatusCode | None = None
    retry: bool = False
    """Answer a rejection again with the policy (while attempts are left)."""

    def __post_init__(self) -> None:
        self.outgoing: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()
        self.new_message = asyncio.Event()
        self.ended = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.channel: grpc.aio.Channel | None = None
        self.call: Any = None

    async def _requests(self) -> AsyncIterator[play_service.PlayRequest]:
        while True:
            msg = await self.outgoing.get()
            if msg is None:
                return
            self.sent.append(msg)
            yield msg

    def send(self, msg: play_service.PlayRequest) -> None:
        self.outgoing.put_nowait(msg)

    def start(self, first: play_service.PlayRequest | None = None) -> Seat:
        self.outgoing = asyncio.Queue()
        self.ended = asyncio.Event()
        self.send(
            first
            or play_service.PlayRequest(
                hello=play_service.Hello(
                    protocol_version=self.protocol_version,
                    token=self.token,
                    want_legal_plays=self.want_legal_plays,
                    bot_name="scripted",
                )
            )
        )
        self.task = asyncio.create_task(self._run())
        return self

    async def _run(self) -> None:
        self.channel = grpc.aio.insecure_channel(self.address)
        stub = play_service_grpc.PlayServiceStub(self.channel)
        self.call = stub.Play(self._requests())
        try:
            async for msg in self.call:
                self.received.append(msg)
                kind = msg.WhichOneof("kind")
                if kind == "welcome":
                    self.seat = msg.welcome.seat
                elif kind == "prompt" and self.policy is not None:
                    self.send(play_action(msg.prompt.turn_id, self.policy(self, msg.prompt)))
                elif (
                    kind == "result"
                    and self.retry
                    and self.policy is not None
                    and not msg.result.accepted
                    and msg.result.attempts_left > 0
                ):
                    prompt = self.messages("prompt")[-1]
                    self.send(play_action(prompt.turn_id, self.policy(self, prompt)))
                self.new_message.set()
            self.status = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as exc:
            self.status = exc.code()
        except asyncio.CancelledError:
            self.status = grpc.StatusCode.CANCELLED
        finally:
            self.ended.set()
            self.new_message.set()
            await self.channel.close()

    async def wait_for(
        self, pred: Callable[[play_service.PlayResponse], bool], timeout: float = 10.0
    ) -> play_service.PlayResponse:
        """The first received message (from the start) that satisfies ``pred``."""
        async with asyncio.timeout(timeout):
            seen = 0
            while True:
                for msg in self.received[seen:]:
                    if pred(msg):
                        return msg
                seen = len(self.received)
                if self.ended.is_set():
                    raise AssertionError(f"stream ended ({self.status}) before the message")
                self.new_message.clear()
                await self.new_message.wait()

    async def wait_kind(self, kind: str, after: int = 0, timeout: float = 10.0) -> Any:
        count = 0

        def pred(msg: play_service.PlayResponse) -> bool:
            nonlocal count
            if msg.WhichOneof("kind") == kind:
                count += 1
                return count > after
            return False

        msg = await self.wait_for(pred, timeout)
        return getattr(msg, kind)

    def messages(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("kind") == kind]

    def events(self, kind: str) -> list[Any]:
        return [getattr(e, kind) for e in self.messages("event") if e.WhichOneof("kind") == kind]

    async def drop(self) -> None:
        """Close the stream from the client side (a lost connection)."""
        if self.call is not None:
            self.call.cancel()
        if self.task is not None:
            await asyncio.wait([self.task], timeout=5)

    async def finish(self, timeout: float = 30.0) -> None:
        async with asyncio.timeout(timeout):
            await self.ended.wait()


def seat_all(
    server: RefereeServer,
    created: match_service.CreateMatchResponse,
    policies: list[Policy | None] | None = None,
) -> list[Seat]:
    """Four scripted seats, started, one per token (lowest_policy by default)."""
    policies = policies or [lowest_policy] * 4
    seats = [
        Seat(server.address, tok, pol)
        for tok, pol in zip(created.seat_tokens, policies, strict=True)
    ]
    for s in seats:
        s.start()
    return seats


def rechained(entries: list[dict[str, Any]]) -> str:
    """Log entries (edited by a test) as a log whose hash chain is recomputed, as a
    forger would: only the rules can catch the edit then."""
    prev = ""
    out = []
    for e in entries:
        e.pop("prev_hash", None)
        if prev:
            e["prev_hash"] = prev
        line = json.dumps(e, separators=(",", ":"))
        prev = hashlib.sha256(line.encode()).hexdigest()
        out.append(line + "\n")
    return "".join(out)
