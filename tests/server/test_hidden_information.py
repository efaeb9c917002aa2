"""No message to a seat or a spectator ever holds a card it may not know at that moment."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from google.protobuf.message import Message

from referee.protocol import common, play_service, spectator_service, spectator_service_grpc
from referee.rules import deal, parse_card

from .conftest import Seat, create

CARD_FIELDS = {"cards", "hand", "played_cards"}
# The opening card a first play must contain is public (the rules say who holds it).
OPENING_CARDS = {"", "3C", "3D"}


def cards_in(msg: Message) -> set[int]:
    """Every card named anywhere in a message (fields that carry cards)."""
    found: set[int] = set()
    for field, value in msg.ListFields():
        if field.message_type is not None:
            items = value if field.is_repeated else [value]
            for item in items:
                found |= cards_in(item)
        elif field.name == "must_include":
            assert value in OPENING_CARDS, value
        elif field.name in CARD_FIELDS:
            for text in value if field.is_repeated else [value]:
                if text:
                    found.add(parse_card(text))
    return found


class Knowledge:
    """What one receiver may know, updated as its messages arrive in order."""

    def __init__(self, seed: str, seat: int | None) -> None:
        self.seed = seed
        self.seat = seat
        self.hand_number = 0
        self.played: set[int] = set()
        self.revealed = False

    def own(self) -> set[int]:
        if self.seat is None or self.hand_number == 0:
            return set()
        mask = deal(self.seed, self.hand_number)[self.seat]
        return {c for c in range(52) if mask >> c & 1}

    def check(self, event_or_msg: Message, event: common.Event | None) -> None:
        if event is not None:
            kind = event.WhichOneof("kind")
            if kind == "hand_dealt":
                self.hand_number = event.hand_dealt.hand_number
                self.played, self.revealed = set(), False
            elif kind == "played":
                self.played |= {parse_card(c) for c in event.played.play.cards}
            elif kind in ("hand_ended", "match_ended"):
                self.revealed = True
            elif kind == "action_rejected":
                # A seat's own rejected attempt echoes what it sent, whatever that was.
                assert event.action_rejected.seat == self.seat
                return
        allowed = set(range(52)) if self.revealed else self.own() | self.played
        leaked = cards_in(event_or_msg) - allowed
        assert not leaked, f"receiver {self.seat} saw {sorted(leaked)} in {event_or_msg}"


def random_policy(rng: random.Random):
    def policy(seat: Seat, prompt: play_service.TurnPrompt) -> list[str] | None:
        options: list[list[str] | None] = [list(p.cards) for p in prompt.legal_plays]
        if prompt.can_pass:
            options.append(None)
        return rng.choice(options)

    return policy


CASES = [
    ("big-two", {}),
    ("pusoy-dos", {}),
    ("pusoy-dos-chips", {}),
    ("big-two", {"revolution": "true", "bomb": "true"}),
    ("pusoy-dos", {"no_finish_on_lone_two": "true", "teams": "true"}),
    ("pusoy-dos-chips", {"five_card_hands": "false"}),
]


@pytest.mark.parametrize(("profile", "options"), CASES)
async def test_no_receiver_ever_sees_a_hidden_card(server, organiser, profile, options):
    for game in range(3):
        seed = f"hidden-{profile}-{game}"
        rng = random.Random(seed)
        created = await create(organiser, profile=profile, options=options, seed=seed, hands=2)
        async with grpc.aio.insecure_channel(server.address) as ch:
            spectate = spectator_service_grpc.SpectatorServiceStub(ch)
            live = spectate.WatchMatch(
                spectator_service.WatchMatchRequest(match_id=created.match_id)
            )
            seats = [
                Seat(server.address, t, random_policy(rng)).start() for t in created.seat_tokens
            ]
            # A second spectator joins mid-match and replays from the start.
            await seats[0].wait_kind("prompt")
            late = spectate.WatchMatch(
                spectator_service.WatchMatchRequest(match_id=created.match_id, from_start=True)
            )
            watched = await asyncio.gather(*(_collect(call) for call in (live, late)))
            for s in seats:
                await s.finish()
        for seat in seats:
            know = Knowledge(seed, seat.seat)
            for msg in seat.received:
                kind = msg.WhichOneof("kind")
                know.check(msg, msg.event if kind == "event" else None)
        for responses in watched:
            assert responses, "a spectator saw nothing"
            assert responses[-1].event.HasField("match_ended")
            know = Knowledge(seed, None)
            seqs = [r.seq for r in responses]
            assert seqs == sorted(seqs)
            for r in responses:
                assert not r.event.HasField("action_rejected")
                know.check(r, r.event)


async def _collect(call) -> list[spectator_service.WatchMatchResponse]:
    return [item async for item in call]
