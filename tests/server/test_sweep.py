"""The hidden-card sweep: every RPC of every service, called by a seat holder and by a
stranger while matches are live, and every field of every answer (error details and
metadata included) scanned for a card the caller may not know yet.

The match is driven turn by turn and held still while the sweep runs (every seat waits
for the test to answer its prompt), so what is public is exactly what the log says at
that moment: the cards played in the current hand, the opening card, and for the seat
holder its own hand.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from referee.client.channels import bearer_metadata
from referee.protocol import (
    PROTOCOL_VERSION,
    lobby_service,
    lobby_service_grpc,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.server.app import SERVICE_NAMES, RefereeServer
from referee.server.limits import ServerLimits

from .conftest import Seat, log_path, play_action
from .test_hidden_information import Knowledge

CARD = re.compile(r"(?<![0-9A-Za-z])(?:10|[2-9TJQKA])[CSHD](?![0-9A-Za-z])")
OPENING = {"3D", "3C"}  # whoever holds it leads: its place is public
COLLECT_S = 0.4


def texts(value: Any) -> Iterator[str]:
    """Every string (and bytes, as Latin-1) anywhere in a message, maps included."""
    if isinstance(value, Message):
        for field, item in value.ListFields():
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                for k, v in item.items():
                    yield from texts(k)
                    yield from texts(v)
            elif field.is_repeated:
                for x in item:
                    yield from texts(x)
            else:
                yield from texts(item)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("latin-1")


def error_texts(exc: grpc.aio.AioRpcError) -> list[str]:
    out = [exc.details() or "", exc.debug_error_string() or ""]
    for md in (exc.initial_metadata(), exc.trailing_metadata()):
        for key, value in md or ():
            out += [key, value if isinstance(value, str) else value.decode("latin-1")]
    return out


async def answers(call: Callable[[], Awaitable[Any]]) -> list[str]:
    try:
        return list(texts(await call()))
    except grpc.aio.AioRpcError as exc:
        return error_texts(exc)


async def streamed(call: Any, limit_s: float = COLLECT_S) -> list[str]:
    """Everything a server stream sends within ``limit_s`` (then it is cancelled)."""
    out: list[str] = []

    async def read() -> None:
        async for item in call:
            out.extend(texts(item))

    try:
        await asyncio.wait_for(read(), limit_s)
    except TimeoutError:
        call.cancel()
    except grpc.aio.AioRpcError as exc:
        out += error_texts(exc)
    return out


async def one_shot(messages: list[Any]) -> AsyncIterator[Any]:
    for m in messages:
        yield m
    await asyncio.sleep(COLLECT_S)  # keep the sending side open while answers come


async def sweep(address: str, match_id: str, metadata: tuple, holder_token: str) -> list[str]:
    """Call every RPC of every service as one caller; every text of every answer."""
    out: list[str] = []
    async with grpc.aio.insecure_channel(address) as ch:
        ms = match_service_grpc.MatchServiceStub(ch)
        for mid in (match_id, "20260101-000000-00000000", "x" * 500):
            out += await answers(
                lambda mid=mid: ms.GetMatch(match_service.GetMatchRequest(match_id=mid))
            )
            request = match_service.GetMatchLogRequest(match_id=mid)
            out += await streamed(ms.GetMatchLog(request, metadata=metadata))
        out += await answers(
            lambda: ms.ListMatches(match_service.ListMatchesRequest(), metadata=metadata)
        )
        out += await answers(
            lambda: ms.CreateMatch(
                match_service.CreateMatchRequest(profile="big-two", seed="sweep"),
                metadata=metadata,
            )
        )
        out += await answers(
            lambda: ms.CancelMatch(
                match_service.CancelMatchRequest(match_id=match_id, reason="sweep"),
                metadata=metadata,
            )
        )
        out += await answers(lambda: ms.GetServerInfo(match_service.GetServerInfoRequest()))

        play = play_service_grpc.PlayServiceStub(ch)
        hellos = [
            play_service.Hello(protocol_version=PROTOCOL_VERSION, token=token, bot_name="sweep")
            for token in (holder_token, "not-a-token", "")
        ]
        for hello in hellos:
            out += await streamed(play.Play(one_shot([play_service.PlayRequest(hello=hello)])))
        out += await streamed(play.Play(one_shot([play_action(1, ["3D"])])))
        out += await streamed(
            play.Play(one_shot([play_service.PlayRequest(hello=hellos[0]), play_action(1, None)]))
        )

        watch = spectator_service_grpc.SpectatorServiceStub(ch)
        for from_start in (True, False):
            request = spectator_service.WatchMatchRequest(match_id=match_id, from_start=from_start)
            out += await streamed(watch.WatchMatch(request, metadata=metadata))

        lobby = lobby_service_grpc.LobbyServiceStub(ch)
        lobby_hello = lobby_service.LobbyHello(protocol_version=PROTOCOL_VERSION, bot_key="k")
        out += await streamed(
            lobby.Connect(one_shot([lobby_service.ConnectRequest(hello=lobby_hello)]))
        )

        health = health_pb2_grpc.HealthStub(ch)
        for name in ("", *SERVICE_NAMES):
            out += await answers(
                lambda name=name: health.Check(health_pb2.HealthCheckRequest(service=name))
            )
        out += await streamed(health.Watch(health_pb2.HealthCheckRequest()))

        reflect = reflection_pb2_grpc.ServerReflectionStub(ch)
        requests = [reflection_pb2.ServerReflectionRequest(list_services="")]
        requests += [
            reflection_pb2.ServerReflectionRequest(file_containing_symbol=name)
            for name in SERVICE_NAMES
        ]
        out += await streamed(reflect.ServerReflectionInfo(one_shot(requests)))
    return out


def public_now(path: Path) -> tuple[set[str], list[set[str]]]:
    """From the log as it is now: cards played in the hand being played, and each
    seat's hand as dealt."""
    played: set[str] = set()
    hands: list[set[str]] = [set() for _ in range(4)]
    for line in path.read_text().splitlines():
        event = json.loads(line)["event"]
        if "hand_dealt" in event:
            played = set()
            for h in event["hand_dealt"]["hands"]:
                hands[h.get("seat", 0)] = set(h.get("cards", []))
        elif "played" in event:
            played |= set(event["played"]["play"]["cards"])
    return played, hands


def lowest(prompt: play_service.TurnPrompt) -> play_service.PlayRequest:
    if prompt.can_pass:
        return play_action(prompt.turn_id, None)
    return play_action(prompt.turn_id, list(prompt.legal_plays[0].cards))


@pytest.fixture
async def open_server(tmp_path: Path) -> AsyncIterator[RefereeServer]:
    """A server whose hello rates do not cut the sweep's many failed hellos short."""
    limits = ServerLimits(max_failed_hellos_per_minute=0, max_reconnects_per_minute=0)
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", limits=limits)
    await server.start()
    try:
        yield server
    finally:
        await server.stop(grace=0.5)


SWEEP_AT_TURNS = {1, 2, 6, 13, 27, 40}


async def test_no_rpc_shows_anyone_a_card_not_yet_public(open_server):
    server = open_server
    async with server.organiser_channel() as channel:
        organiser = match_service_grpc.MatchServiceStub(channel)
        created = await organiser.CreateMatch(
            match_service.CreateMatchRequest(profile="big-two", hands=2, seed="sweep-1")
        )
        # A second live match that waits for its bots, so listings have two.
        await organiser.CreateMatch(match_service.CreateMatchRequest(profile="pusoy-dos"))
    seats = [Seat(server.address, t, None).start() for t in created.seat_tokens]
    path = log_path(server, created.match_id)
    answered: set[int] = set()
    turn = 0
    swept = 0
    async with asyncio.timeout(180):
        while not seats[0].events("match_ended"):
            pending = [
                (s, p)
                for s in seats
                for p in s.messages("prompt")[-1:]
                if p.turn_id not in answered
            ]
            if not pending:
                await asyncio.sleep(0.01)
                continue
            seat, prompt = pending[0]
            turn += 1
            if turn in SWEEP_AT_TURNS:
                played, hands = public_now(path)
                allowed = played | OPENING
                holder = seats[0].seat
                for role, metadata, mine in (
                    ("stranger", (), set()),
                    ("seat holder", bearer_metadata(created.seat_tokens[0]), hands[holder]),
                ):
                    found: set[str] = set()
                    for text in await sweep(
                        server.address, created.match_id, metadata, created.seat_tokens[0]
                    ):
                        assert str(server.registry.log_dir) not in text  # no server paths
                        found |= set(CARD.findall(text))
                    leaked = found - allowed - mine
                    assert not leaked, f"{role} saw {sorted(leaked)} at turn {turn}"
                swept += 1
            answered.add(prompt.turn_id)
            seat.send(lowest(prompt))
    for s in seats:
        await s.finish()
    assert swept == len(SWEEP_AT_TURNS)
    # The seat holder's own stream, message by message.
    know = Knowledge("sweep-1", seats[0].seat)
    for msg in seats[0].received:
        know.check(msg, msg.event if msg.WhichOneof("kind") == "event" else None)
