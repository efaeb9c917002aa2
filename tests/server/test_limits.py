"""Every resource a client can make the server hold has a bound, tried over real gRPC:
hands, waiting and live matches, spectators, hello rates, message size, string lengths."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from referee.log import LogLine, read_log
from referee.log.verify import verify_log
from referee.protocol import (
    PROTOCOL_VERSION,
    common,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
    spectator_service,
    spectator_service_grpc,
)
from referee.server.app import RefereeServer
from referee.server.limits import ServerLimits
from tests.support.polls import until

from .conftest import Seat, log_path, play_action

StatusCode = grpc.StatusCode


@pytest.fixture
async def limited(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[RefereeServer]:
    """A server with the limits the test is parametrised with (``limits`` marker)."""
    marker = request.node.get_closest_marker("limits")
    limits = ServerLimits(**(marker.kwargs if marker else {}))
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", limits=limits)
    await server.start()
    try:
        yield server
    finally:
        await server.stop(grace=0.5)


async def organise(server: RefereeServer, **fields: object) -> match_service.CreateMatchResponse:
    fields.setdefault("profile", "big-two")
    async with server.organiser_channel() as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        return await stub.CreateMatch(match_service.CreateMatchRequest(**fields))  # type: ignore[arg-type]


async def refused(server: RefereeServer, **fields: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await organise(server, **fields)
    return err.value.code(), err.value.details() or ""


def fast(connect_ms: int = 200) -> common.TimeControl:
    return common.TimeControl(connect_timeout_ms=connect_ms, turn_time_ms=20)


async def wait_over(server: RefereeServer, match_id: str, timeout: float = 60) -> None:
    host = server.registry.get(match_id)
    assert host is not None
    await asyncio.wait_for(host.done.wait(), timeout)


@pytest.mark.limits(max_hands=4)
async def test_a_runaway_threshold_match_is_stopped_by_the_hands_cap(limited):
    """A threshold nobody reaches, one bot that says hello and leaves: every turn is a
    default action, and the match ends at the hands cap instead of running forever."""
    created = await organise(limited, threshold=1_000_000_000, time_control=fast())
    assert created.match.config.rules.max_hands == 4
    seat = Seat(limited.address, created.seat_tokens[0], None).start()
    await seat.wait_kind("welcome")
    await seat.drop()
    await wait_over(limited, created.match_id)
    path = log_path(limited, created.match_id)
    read = read_log(path)
    ended = read.lines[-1].entry.event.match_ended
    assert ended.status == common.MATCH_STATUS_FINISHED
    assert sum(ln.entry.event.HasField("hand_ended") for ln in read.lines) == 4
    assert max(ended.totals) < 1_000_000_000
    report = verify_log(path, limited.signer.public_key)
    assert report.ok and report.hands == 4, report.summary()


async def test_every_match_gets_the_servers_hands_cap(server, organiser):
    created = await organiser.CreateMatch(
        match_service.CreateMatchRequest(profile="pusoy-dos", threshold=1_000_000_000)
    )
    assert created.match.config.rules.max_hands == server.limits.max_hands == 1000
    for request, message in (
        ({"hands": 1001}, "at most 1000 hands per match"),
        ({"options": {"max_hands": "5000"}}, "max_hands: at most 1000"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await organiser.CreateMatch(
                match_service.CreateMatchRequest(profile="big-two", **request)
            )
        assert err.value.code() == StatusCode.INVALID_ARGUMENT
        assert message in (err.value.details() or "")


async def test_a_match_no_bot_joined_is_closed_at_its_connect_limit(limited):
    """(The match machine's rule; here over gRPC, with a threshold nobody reaches.)"""
    created = await organise(limited, threshold=1_000_000_000, time_control=fast())
    await wait_over(limited, created.match_id)
    read = read_log(log_path(limited, created.match_id))
    ended = read.lines[-1].entry.event.match_ended
    assert ended.status == common.MATCH_STATUS_CANCELLED
    assert ended.cancel_reason == "no bot connected within the connect time limit"
    assert not any(ln.entry.event.HasField("hand_dealt") for ln in read.lines)
    assert verify_log(log_path(limited, created.match_id), limited.signer.public_key).ok


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.limits(max_waiting_matches=1000, max_live_matches=1000)
async def test_a_thousand_bot_less_matches_expire_and_free_what_they_held(limited):
    before = open_fds()
    async with limited.organiser_channel() as channel:
        stub = match_service_grpc.MatchServiceStub(channel)

        async def one(i: int) -> str:
            created = await stub.CreateMatch(
                match_service.CreateMatchRequest(
                    profile="big-two", seed=f"empty-{i}", time_control=fast(1500)
                )
            )
            return created.match_id

        ids: list[str] = []
        for start in range(0, 1000, 100):
            ids += await asyncio.gather(*(one(i) for i in range(start, start + 100)))
        await asyncio.wait_for(
            asyncio.gather(*(limited.registry.get(i).done.wait() for i in ids)), 120
        )
        statuses = {limited.registry.get(i).state.status for i in ids}
        assert statuses == {common.MATCH_STATUS_CANCELLED}
        # Every log file closed: a match is over (its ``done``) before its log's last
        # write and close, which run off the event loop, have finished.
        await until(lambda: open_fds() <= before + 10, "every match's log to be closed")
        await one(1000)  # the server goes on


@pytest.mark.limits(max_waiting_matches=2, max_live_matches=3)
async def test_waiting_and_live_matches_are_capped(limited):
    slow = common.TimeControl(connect_timeout_ms=60_000)
    first = await organise(limited, time_control=slow)
    await organise(limited, time_control=slow)
    code, message = await refused(limited, time_control=slow)
    assert code == StatusCode.RESOURCE_EXHAUSTED and "limit is 2" in message
    assert "waiting for their bots" in message
    # Once the first match's bots are in, it runs, and a third match may wait.
    seats = [Seat(limited.address, t, None).start() for t in first.seat_tokens]
    await asyncio.gather(*(s.wait_kind("welcome") for s in seats))
    host = limited.registry.get(first.match_id)
    assert host is not None
    await until(
        lambda: host.state.status != common.MATCH_STATUS_WAITING, "the first match to start"
    )
    await organise(limited, time_control=slow)
    code, message = await refused(limited, time_control=slow)
    assert code == StatusCode.RESOURCE_EXHAUSTED and "at most 3 matches at once" in message


@pytest.mark.limits(max_spectators_per_match=2, max_spectators=3)
async def test_spectators_past_the_cap_are_refused(limited):
    slow = common.TimeControl(connect_timeout_ms=60_000)
    a = await organise(limited, time_control=slow)
    b = await organise(limited, time_control=slow)
    async with grpc.aio.insecure_channel(limited.address) as channel:
        stub = spectator_service_grpc.SpectatorServiceStub(channel)

        async def watch(match_id: str) -> grpc.aio.UnaryStreamCall:
            call = stub.WatchMatch(
                spectator_service.WatchMatchRequest(match_id=match_id, from_start=True)
            )
            await call.read()  # match_created: the stream is open
            return call

        async def refused_watch(match_id: str) -> str:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await watch(match_id)
            assert err.value.code() == StatusCode.RESOURCE_EXHAUSTED
            return err.value.details() or ""

        open_a = [await watch(a.match_id), await watch(a.match_id)]
        assert "this match has 2 spectators" in await refused_watch(a.match_id)
        open_b = await watch(b.match_id)
        assert "at most 3 spectators" in await refused_watch(b.match_id)
        open_a[0].cancel()

        async def freed() -> grpc.aio.UnaryStreamCall | None:
            try:
                return await watch(b.match_id)
            except grpc.aio.AioRpcError as exc:
                assert exc.code() == StatusCode.RESOURCE_EXHAUSTED
                return None

        again = await until(freed, "a freed slot to be free again")
        for call in (open_a[1], open_b, again):
            call.cancel()


@pytest.mark.limits(max_reconnects_per_minute=4)
async def test_a_seat_that_reconnects_in_a_loop_is_cut_off_before_the_match(limited):
    created = await organise(limited, time_control=common.TimeControl(connect_timeout_ms=60_000))
    token = created.seat_tokens[0]
    for _ in range(4):
        seat = Seat(limited.address, token, None).start()
        await seat.wait_kind("welcome")
        await seat.drop()
    seat = Seat(limited.address, token, None).start()
    await seat.finish(10)
    assert seat.status == StatusCode.RESOURCE_EXHAUSTED
    assert not seat.messages("welcome")
    other = Seat(limited.address, created.seat_tokens[1], None).start()
    await other.wait_kind("welcome")  # other seats are not affected
    lines = read_log(log_path(limited, created.match_id)).lines
    connects = [
        ln
        for ln in lines
        if ln.entry.event.HasField("seat_connected") and ln.entry.event.seat_connected.seat == 0
    ]
    assert len(connects) == 4  # the refused hello never reached the match
    await other.drop()


@pytest.mark.limits(max_failed_hellos_per_minute=5)
async def test_failed_hellos_from_one_address_are_throttled(limited):
    created = await organise(limited, time_control=common.TimeControl(connect_timeout_ms=60_000))
    statuses = []
    for i in range(8):
        seat = Seat(limited.address, f"guess-{i}", None).start()
        await seat.finish(10)
        refusal = seat.messages("refusal")
        statuses.append(refusal[0].reason if refusal else seat.status)
    assert statuses[:5] == [play_service.REFUSAL_REASON_BAD_TOKEN] * 5
    assert statuses[5:] == [StatusCode.RESOURCE_EXHAUSTED] * 3
    seat = Seat(limited.address, created.seat_tokens[2], None).start()
    await seat.wait_kind("welcome")  # a real token still gets in
    await seat.drop()


async def test_a_message_over_the_size_limit_is_refused_and_the_match_goes_on(server, organiser):
    created = await organiser.CreateMatch(
        match_service.CreateMatchRequest(profile="big-two", hands=1, seed="big message")
    )
    seats = [Seat(server.address, t, None).start() for t in created.seat_tokens]
    prompt = None
    async with asyncio.timeout(20):
        while prompt is None:
            for s in seats:
                if s.messages("prompt"):
                    prompt, me = s.messages("prompt")[-1], s
            await asyncio.sleep(0.01)
    me.send(play_action(prompt.turn_id, ["3D" * 40_000]))  # 80 kB
    await me.finish(10)
    assert me.status == StatusCode.RESOURCE_EXHAUSTED
    back = Seat(server.address, me.token).start()  # reconnect, play on
    for s in seats:
        if s is not me:
            s.policy = back.policy
            for p in s.messages("prompt")[-1:]:
                s.send(play_action(p.turn_id, None if p.can_pass else list(p.legal_plays[0].cards)))
    await back.finish(60)
    assert back.events("match_ended")
    assert verify_log(log_path(server, created.match_id), server.signer.public_key).ok


async def test_strings_are_bounded(server, organiser):
    too_long = "x" * 101
    cases = [
        ({"seat_names": ["a", "b", "c", too_long]}, "at most 100 characters"),
        ({"options": {"revolution": too_long}}, "at most 100 characters"),
        ({"options": {f"o{i}": "1" for i in range(33)}}, "at most 32 option overrides"),
        ({"seed": "s" * 1025}, "at most 1024 bytes"),
        ({"profile": too_long}, "unknown profile"),
        ({"time_control": common.TimeControl(connect_timeout_ms=600_001)}, "at most 600000"),
    ]
    for fields, message in cases:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await organiser.CreateMatch(
                match_service.CreateMatchRequest(**{"profile": "big-two", **fields})
            )
        assert err.value.code() == StatusCode.INVALID_ARGUMENT, fields
        assert message in (err.value.details() or ""), (fields, err.value.details())
    created = await organiser.CreateMatch(match_service.CreateMatchRequest(profile="big-two"))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await organiser.CancelMatch(
            match_service.CancelMatchRequest(match_id=created.match_id, reason="r" * 501)
        )
    assert err.value.code() == StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await organiser.GetMatch(match_service.GetMatchRequest(match_id="m" * 10_000))
    assert err.value.code() == StatusCode.NOT_FOUND and len(err.value.details() or "") < 100
    # A bot's own name is kept to 100 characters in the log.
    async with grpc.aio.insecure_channel(server.address) as channel:
        call = play_service_grpc.PlayServiceStub(channel).Play()
        await call.write(
            play_service.PlayRequest(
                hello=play_service.Hello(
                    protocol_version=PROTOCOL_VERSION,
                    token=created.seat_tokens[0],
                    bot_name="n" * 5000,
                )
            )
        )
        assert (await call.read()).HasField("welcome")
        call.cancel()
    path = log_path(server, created.match_id)

    def connected() -> list[LogLine]:
        lines = read_log(path).lines
        return lines if any(ln.kind == "seat_connected" for ln in lines) else []

    lines = await until(connected, "the connection in the log")
    names = [
        ln.entry.event.seat_connected.bot_name
        for ln in lines
        if ln.entry.event.HasField("seat_connected")
    ]
    assert len(names) == 1 and len(names[0]) <= 100 and names[0].startswith("n" * 90)


async def test_a_request_that_does_not_parse_is_invalid_argument(server):
    async with grpc.aio.insecure_channel(server.address) as channel:
        for method in (
            "/pusoy.referee.v1.MatchService/GetMatch",
            "/pusoy.referee.v1.MatchService/CreateMatch",
            "/grpc.health.v1.Health/Check",
        ):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await channel.unary_unary(method)(b"\xff\xff\xff", timeout=10)
            assert err.value.code() == StatusCode.INVALID_ARGUMENT, method
            assert "cannot be parsed" in (err.value.details() or "")


async def test_a_streamed_message_that_does_not_parse_ends_the_stream_invalid(server):
    async with grpc.aio.insecure_channel(server.address) as channel:
        for method in (
            "/pusoy.referee.v1.PlayService/Play",
            "/pusoy.referee.v1.LobbyService/Connect",
        ):
            call = channel.stream_stream(method)(iter([b"\xff\xff\xff"]), timeout=10)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                _ = [m async for m in call]
            assert err.value.code() == StatusCode.INVALID_ARGUMENT, method


async def test_a_seated_bot_that_sends_garbage_is_cut_invalid_and_its_seat_goes(server, organiser):
    created = await organiser.CreateMatch(
        match_service.CreateMatchRequest(profile="big-two", hands=1, seed="garbage")
    )
    hello = play_service.PlayRequest(
        hello=play_service.Hello(protocol_version=PROTOCOL_VERSION, token=created.seat_tokens[0])
    ).SerializeToString()
    sent: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[bytes]:
        while (item := await sent.get()) is not None:
            yield item

    async with grpc.aio.insecure_channel(server.address) as channel:
        play = channel.stream_stream(
            "/pusoy.referee.v1.PlayService/Play",
            request_serializer=lambda b: b,
            response_deserializer=play_service.PlayResponse.FromString,
        )
        call = play(requests(), timeout=20)
        sent.put_nowait(hello)
        assert (await call.read()).HasField("welcome")
        sent.put_nowait(b"\xff\xff\xff")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            while (await call.read()) is not grpc.aio.EOF:
                pass
        assert err.value.code() == StatusCode.INVALID_ARGUMENT
        assert "cannot be parsed" in (err.value.details() or "")
        sent.put_nowait(None)
    async with asyncio.timeout(10):
        while True:
            events = [ln.entry.event for ln in read_log(log_path(server, created.match_id)).lines]
            gone = [e.seat_disconnected for e in events if e.HasField("seat_disconnected")]
            if gone:
                break
            await asyncio.sleep(0.05)
    assert gone[0].seat == 0
