"""LobbyService over real gRPC: hello, refusals, assignments, replacement, closing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from referee.protocol import PROTOCOL_VERSION, common, lobby_service, lobby_service_grpc
from referee.server.app import RefereeServer
from referee.server.lobby import Assignment, LobbyError

KEY = "lobby-test-key"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RefereeServer]:
    srv = RefereeServer("127.0.0.1:0", tmp_path / "logs")
    await srv.start()
    srv.lobby.register("far", KEY, max_matches=2)
    try:
        yield srv
    finally:
        await srv.stop(grace=0.5)


class Client:
    """A raw lobby stream that records what it receives."""

    def __init__(self, address: str, first: lobby_service.ConnectRequest) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stop = asyncio.Event()
        self.received: list[lobby_service.ConnectResponse] = []
        self.call = lobby_service_grpc.LobbyServiceStub(self.channel).Connect(self._requests(first))
        self.task = asyncio.create_task(self._read())

    async def _requests(self, first):
        yield first
        await self.stop.wait()

    async def _read(self) -> None:
        async for msg in self.call:
            self.received.append(msg)

    def kinds(self) -> list[str]:
        return [m.WhichOneof("kind") for m in self.received]

    async def until(self, count: int) -> None:
        for _ in range(200):
            if len(self.received) >= count or self.task.done():
                return
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        self.stop.set()
        self.call.cancel()
        await self.channel.close()


def hello(key: str = KEY, version: int = PROTOCOL_VERSION, at_once: int = 5):
    return lobby_service.ConnectRequest(
        hello=lobby_service.LobbyHello(
            protocol_version=version, bot_key=key, max_concurrent_matches=at_once
        )
    )


def assignment(match_id: str, seat: int = 1) -> Assignment:
    return Assignment(match_id, seat, f"token-{match_id}", common.MatchConfig(seat_names=["x"]))


async def test_welcome_then_assignments_capped_by_the_organiser(server):
    server.lobby.assign("far", assignment("early"))  # before the bot connects: held
    client = Client(server.address, hello())
    await client.until(2)
    welcome = client.received[0].welcome
    assert (welcome.bot_name, welcome.max_concurrent_matches) == ("far", 2)
    assert client.received[1].assignment.match_id == "early"
    bot = server.lobby.bot("far")
    assert bot.capacity == 2 and bot.free == 1
    server.lobby.assign("far", assignment("late", seat=3))
    await client.until(3)
    late = client.received[2].assignment
    assert (late.match_id, late.seat, late.seat_token) == ("late", 3, "token-late")
    server.lobby.release("far", "early")
    assert bot.free == 1
    server.lobby.close("the tournament is over")
    await asyncio.wait_for(client.task, 5)
    assert client.received[-1].closed.reason == "the tournament is over"
    await client.close()


async def test_a_new_connection_replaces_the_old_and_gets_running_assignments(server):
    first = Client(server.address, hello())
    await first.until(1)
    server.lobby.assign("far", assignment("m1"))
    await first.until(2)
    second = Client(server.address, hello(at_once=1))
    await second.until(2)
    await asyncio.wait_for(first.task, 5)
    assert first.received[-1].closed.reason == "replaced by a new connection"
    assert second.kinds() == ["welcome", "assignment"]
    assert second.received[1].assignment.match_id == "m1"
    assert server.lobby.bot("far").capacity == 1
    await second.close()
    for _ in range(100):
        if server.lobby.bot("far").connection is None:
            break
        await asyncio.sleep(0.01)
    assert server.lobby.bot("far").connection is None
    await first.close()


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        (hello(key="wrong-key-123"), lobby_service.LOBBY_REFUSAL_REASON_BAD_KEY),
        (hello(version=99), lobby_service.LOBBY_REFUSAL_REASON_VERSION_NOT_SUPPORTED),
        (lobby_service.ConnectRequest(), lobby_service.LOBBY_REFUSAL_REASON_HELLO_EXPECTED),
    ],
)
async def test_refusals(server, first, reason):
    client = Client(server.address, first)
    await asyncio.wait_for(client.task, 5)
    assert client.kinds() == ["refusal"]
    assert client.received[0].refusal.reason == reason
    assert list(client.received[0].refusal.supported_versions) == [PROTOCOL_VERSION]
    await client.close()


async def test_a_closed_lobby_refuses_and_registration_errors(server):
    server.lobby.close("done")
    client = Client(server.address, hello())
    await asyncio.wait_for(client.task, 5)
    assert client.received[0].refusal.reason == lobby_service.LOBBY_REFUSAL_REASON_CLOSED
    await client.close()
    with pytest.raises(LobbyError):
        server.lobby.register("far", "another-key-1")
    with pytest.raises(LobbyError):
        server.lobby.register("other", "")
