"""Hello.batch_events: a seat that asks for its events batched gets exactly the events a
live seat gets, in the same order, in fewer messages: carried by its prompts, and flushed
at each hand's end and the match's end; accepted actions are not answered."""

from __future__ import annotations

import asyncio

from referee.bots import GreedyBot, play_seat
from referee.log import read_log
from referee.log.verify import verify_log
from referee.match.observer import for_seat
from referee.protocol import PROTOCOL_VERSION, common, play_service

from .conftest import Seat, create


def events_seen(seat: Seat) -> list[common.Event]:
    """The events a seat was given, in order, whether live or batched."""
    out: list[common.Event] = []
    for msg in seat.received:
        kind = msg.WhichOneof("kind")
        if kind == "event":
            out.append(msg.event)
        elif kind == "prompt":
            out.extend(msg.prompt.events)
        elif kind == "batch":
            out.extend(msg.batch.events)
    return out


def hello(token: str, batch: bool) -> play_service.PlayRequest:
    return play_service.PlayRequest(
        hello=play_service.Hello(
            protocol_version=PROTOCOL_VERSION,
            token=token,
            want_legal_plays=True,
            bot_name="batching" if batch else "live",
            batch_events=batch,
        )
    )


async def test_a_batching_seat_sees_the_same_events_as_a_live_one_in_fewer_messages(
    server, organiser
):
    created = await create(organiser, profile="pusoy-dos", hands=2, seed="batch")
    batching = Seat(server.address, created.seat_tokens[0])
    live = Seat(server.address, created.seat_tokens[1])
    batching.start(hello(created.seat_tokens[0], True))
    live.start(hello(created.seat_tokens[1], False))
    others = [play_seat(GreedyBot(), server.address, t) for t in created.seat_tokens[2:]]
    await asyncio.gather(*others, batching.finish(), live.finish())
    path = server.matches.log_path(created.match_id)
    assert verify_log(path).ok
    lines = read_log(path).lines
    for seat_obj, seat in ((batching, 0), (live, 1)):
        connected = next(
            i
            for i, ln in enumerate(lines)
            if ln.kind == "seat_connected" and ln.entry.event.seat_connected.seat == seat
        )
        expected = [
            e for ln in lines[connected:] if (e := for_seat(ln.entry.event, seat)) is not None
        ]
        assert events_seen(seat_obj) == expected
    kinds = [m.WhichOneof("kind") for m in batching.received]
    assert "event" not in kinds and kinds.count("batch") == 3  # two hands, and the end
    assert not any(m.result.accepted for m in batching.received if m.HasField("result"))
    live_count = sum(1 for m in live.received if m.WhichOneof("kind") in ("event", "result"))
    assert len(batching.received) < live_count / 2
