"""The handshake: tokens, taken seats, versions, and what a (re)connecting seat is sent."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from referee.protocol import match_service, play_service

from .conftest import Seat, create

P = play_service


async def refusal(seat: Seat) -> play_service.Refusal:
    msg = await seat.wait_kind("refusal")
    await seat.finish()
    return msg


async def test_a_wrong_token_is_refused(server, organiser):
    await create(organiser)
    seat = Seat(server.address, "not-a-token").start()
    assert (await refusal(seat)).reason == P.REFUSAL_REASON_BAD_TOKEN
    assert seat.status == grpc.StatusCode.OK


async def test_a_second_connection_to_a_taken_seat_is_refused(server, organiser):
    created = await create(organiser)
    first = Seat(server.address, created.seat_tokens[0], None).start()
    await first.wait_kind("welcome")
    second = Seat(server.address, created.seat_tokens[0], None).start()
    assert (await refusal(second)).reason == P.REFUSAL_REASON_SEAT_TAKEN
    # The first connection keeps its seat.
    assert not first.ended.is_set()
    await organiser.CancelMatch(match_service.CancelMatchRequest(match_id=created.match_id))
    await first.finish()


async def test_a_token_reused_after_the_match_is_refused(server, organiser):
    created = await create(organiser, seed="reuse")
    seats = [Seat(server.address, t).start() for t in created.seat_tokens]
    for s in seats:
        await s.finish()
    again = Seat(server.address, created.seat_tokens[1]).start()
    assert (await refusal(again)).reason == P.REFUSAL_REASON_MATCH_OVER


async def test_an_unsupported_version_is_refused(server, organiser):
    created = await create(organiser)
    seat = Seat(server.address, created.seat_tokens[0], protocol_version=99).start()
    msg = await refusal(seat)
    assert msg.reason == P.REFUSAL_REASON_VERSION_NOT_SUPPORTED
    assert list(msg.supported_versions) == [1]
    await organiser.CancelMatch(match_service.CancelMatchRequest(match_id=created.match_id))


async def test_the_first_message_must_be_a_hello(server, organiser):
    created = await create(organiser)
    seat = Seat(server.address, created.seat_tokens[0])
    seat.start(P.PlayRequest(action=P.Action(turn_id=1)))
    assert (await refusal(seat)).reason == P.REFUSAL_REASON_HELLO_EXPECTED
    await organiser.CancelMatch(match_service.CancelMatchRequest(match_id=created.match_id))


async def test_welcome_snapshot_deal_and_prompts(server, organiser):
    created = await create(organiser, seed="welcome", seat_names=["a", "b", "c", "d"])
    seats = [Seat(server.address, t).start() for t in created.seat_tokens]
    for s in seats:
        await s.finish()
    for i, s in enumerate(seats):
        kinds = [m.WhichOneof("kind") for m in s.received]
        assert kinds[:2] == ["welcome", "snapshot"]
        welcome = s.received[0].welcome
        assert welcome.seat == i and welcome.match_id == created.match_id
        assert list(welcome.config.seat_names) == ["a", "b", "c", "d"]
        assert welcome.config.rules.profile == "big-two"
        assert welcome.seed_commitment == created.seed_commitment
        dealt = s.events("hand_dealt")[0]
        own = next(h for h in dealt.hands if h.seat == i)
        assert len(own.cards) == 13
        assert all(not h.cards and h.count == 13 for h in dealt.hands if h.seat != i)
        for prompt in s.messages("prompt"):
            assert prompt.seat == i and prompt.legal_plays
            assert prompt.attempts_left == 3 and prompt.turn_time_ms == 2000
            assert prompt.deadline.seconds > 0
        assert s.events("match_ended")


async def test_legal_plays_are_sent_only_when_asked(server, organiser):
    created = await create(organiser, seed="no-legal")
    seats = [Seat(server.address, t).start() for t in created.seat_tokens[1:]]

    def first_card(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
        assert not prompt.legal_plays
        return None if prompt.can_pass else [prompt.hand[0]]

    bare = Seat(server.address, created.seat_tokens[0], first_card, want_legal_plays=False)
    bare.retry = True
    bare.start()
    for s in (bare, *seats):
        await s.finish()
    assert bare.messages("prompt")


async def test_health_and_reflection(server):
    async with grpc.aio.insecure_channel(server.address) as ch:
        health = health_pb2_grpc.HealthStub(ch)
        for name in ("", "pusoy.referee.v1.PlayService", "pusoy.referee.v1.MatchService"):
            resp = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        refl = reflection_pb2_grpc.ServerReflectionStub(ch)
        call = refl.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        )
        names = set()
        async for resp in call:
            names = {s.name for s in resp.list_services_response.service}
            break
        assert {
            "pusoy.referee.v1.PlayService",
            "pusoy.referee.v1.MatchService",
            "pusoy.referee.v1.SpectatorService",
            "grpc.health.v1.Health",
        } <= names
        await server.health.enter_graceful_shutdown()
        resp = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert resp.status == health_pb2.HealthCheckResponse.NOT_SERVING
