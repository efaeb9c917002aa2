#!/usr/bin/env python3
"""Record the kits' conformance transcripts for a batching seat from a real referee.

Each scenario plays a real match on an in-process referee: seat 0 is a recording seat that
says ``batch_events: true`` and answers as every kit's conformance bot does by default
(the weakest legal play, or a pass; after a rejection the fallback), the other three are
the referee's greedy bots. Every message seat 0 receives becomes a ``send`` step of the
transcript, every message it sends a ``recv`` step, every stream end an ``end`` step; a
prompt's ``deadline`` becomes ``$NOW+<turn time>ms`` so that the replay has the same
clock. The bot script checks what the kit's hooks were given: the kit's tracker against
each prompt's state (``tracker``), the number of events before each ``choose``
(``events_before``) and in the whole run (``events_total``).

Timing makes the recordings differ from run to run (elapsed times, the match id, how many
events a cancellation catches), so they are made on demand, not checked:

    .venv/bin/python scripts/record_transcripts.py            # all of them
    .venv/bin/python scripts/record_transcripts.py batched_rejection
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.bots import GreedyBot, play_seat  # noqa: E402
from referee.protocol import (  # noqa: E402
    PROTOCOL_VERSION,
    common,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
)
from referee.server.app import RefereeServer  # noqa: E402

OUT = ROOT / "clients" / "conformance" / "transcripts"
TURN_TIME_MS = 2000
SILENCE_AFTER_RETRY_MS = 2200
"""Longer than the budget of the turn (2000 ms less the 50 ms margin): a kit that waits
for an ActionResult of its accepted retry and sends the fallback at the budget's end
is caught."""


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    profile: str
    seed: str
    hands: int = 1
    bad_prompt: int = 0
    """Answer this prompt of the seat (1-based) with a card it does not hold."""
    drill: int = 0
    """Drills.disconnect_after_prompts: the referee drops the seat after that prompt."""
    cancel_after: int = 0
    """Cancel the match right after the seat answered this prompt."""


SCENARIOS = [
    Scenario(
        "batched_match",
        "A batching seat (PUSOY_BATCH_EVENTS=1: the Hello says batch_events) through a "
        "real two-hand match: no event messages, each prompt carries the events since the "
        "last one, the hand's end and the match's end come as batches, accepted actions "
        "get no result. The kit's hooks and tracker see every event before its turn "
        "(tracker, events_before, events_total) and the match ends on the batch.",
        "pusoy-dos",
        "batched-match",
        hands=2,
    ),
    Scenario(
        "batched_rejection",
        "A batching seat's first answer is a card it does not hold: the rejection comes at "
        "once as a result (its action_rejected event comes later, in the next prompt), "
        "the fallback goes out as the next attempt, and nothing more is sent for that "
        "turn: no result comes for the accepted retry, and none is waited for.",
        "big-two",
        "batched-rejection",
        bad_prompt=1,
    ),
    Scenario(
        "batched_reconnect",
        "The referee drops a batching seat after its third prompt (a drill): the kit "
        "reconnects asking for batching again, starts its tracker from the snapshot, and "
        "plays on from prompts whose events start at its reconnection.",
        "pusoy-dos-chips",
        "batched-reconnect",
        drill=3,
    ),
    Scenario(
        "batched_cancelled",
        "The organiser cancels the match mid-hand: the batching seat gets the events "
        "since its last prompt and match_ended in one batch (no hand_ended before it), "
        "and the kit ends the run on it with exit 0.",
        "big-two",
        "batched-cancelled",
        cancel_after=4,
    ),
]


def not_held(prompt: play_service.TurnPrompt) -> str:
    held = set(prompt.hand)
    return next(r + s for r in "3456789TJQKA2" for s in "CSHD" if r + s not in held)


def action(turn_id: int, cards: list[str] | None) -> play_service.PlayRequest:
    act = play_service.Action(turn_id=turn_id)
    if cards is None:
        getattr(act, "pass").SetInParent()
    else:
        act.play.cards.extend(cards)
    return play_service.PlayRequest(action=act)


def as_json(msg: Any) -> dict[str, Any]:
    return dict(json_format.MessageToDict(msg, preserving_proto_field_name=True))


def sent(msg: play_service.PlayResponse) -> dict[str, Any]:
    body = as_json(msg)
    if msg.HasField("prompt"):
        body["prompt"]["deadline"] = f"$NOW+{msg.prompt.turn_time_ms}ms"
    return {"send": body}


class Recorder:
    """Seat 0: batching, answering as the conformance bots do, writing down everything."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.streams: list[dict[str, Any]] = []
        self.events = 0
        self.prompts = 0
        self.events_before: dict[str, int] = {}
        self.choose: dict[str, Any] = {}
        self.answered = asyncio.Event()

    async def play(self, address: str, token: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            stub: play_service_grpc.PlayServiceAsyncStub = play_service_grpc.PlayServiceStub(
                channel
            )
            while not await self.stream_once(stub, token):
                pass

    async def stream_once(self, stub: play_service_grpc.PlayServiceAsyncStub, token: str) -> bool:
        """One stream; True when the match ended on it."""
        steps: list[dict[str, Any]] = [{"recv": {"@": "hello", "hello": {"batch_events": True}}}]
        self.streams.append({"steps": steps})
        outgoing: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()

        async def requests() -> AsyncIterator[play_service.PlayRequest]:
            while (m := await outgoing.get()) is not None:
                yield m

        def send(req: play_service.PlayRequest) -> None:
            outgoing.put_nowait(req)
            steps.append({"recv": as_json(req)})

        outgoing.put_nowait(
            play_service.PlayRequest(
                hello=play_service.Hello(
                    protocol_version=PROTOCOL_VERSION,
                    token=token,
                    want_legal_plays=True,
                    bot_name="recorder",
                    batch_events=True,
                )
            )
        )
        call = stub.Play(requests())
        prompt: play_service.TurnPrompt | None = None
        ended = False
        try:
            async for msg in call:
                steps.append(sent(msg))
                kind = msg.WhichOneof("kind")
                if kind == "event":
                    raise SystemExit("a batching seat got an event message")
                if kind == "prompt":
                    prompt = msg.prompt
                    self.prompts += 1
                    self.events += len(prompt.events)
                    turn = str(prompt.turn_id)
                    self.events_before[turn] = self.events
                    if self.prompts == self.scenario.bad_prompt:
                        cards: list[str] | None = [not_held(prompt)]
                        self.choose[turn] = {"play": cards}
                    elif prompt.legal_plays:
                        cards = list(prompt.legal_plays[0].cards)
                    else:
                        cards = None
                    send(action(prompt.turn_id, cards))
                    if self.prompts == self.scenario.cancel_after:
                        self.answered.set()
                elif kind == "result":
                    res = msg.result
                    if res.accepted:
                        raise SystemExit("a batching seat got a result for an accepted action")
                    if prompt is not None and res.turn_id == prompt.turn_id and res.attempts_left:
                        retry = None if prompt.can_pass else list(prompt.legal_plays[0].cards)
                        send(action(prompt.turn_id, retry))
                        steps.append({"silence_ms": SILENCE_AFTER_RETRY_MS})
                elif kind == "batch":
                    self.events += len(msg.batch.events)
                    ended = any(e.HasField("match_ended") for e in msg.batch.events)
        finally:
            outgoing.put_nowait(None)
            call.cancel()
        steps.append({"end": "OK"})
        return ended

    def transcript(self) -> dict[str, Any]:
        bot: dict[str, Any] = {"tracker": True}
        if self.choose:
            bot["choose"] = self.choose
        bot["events_before"] = self.events_before
        bot["events_total"] = self.events
        return {
            "description": self.scenario.description
            + " Recorded from a real referee by scripts/record_transcripts.py.",
            "requires": ["batched_events"],
            "bot": bot,
            "env": {"PUSOY_BATCH_EVENTS": "1", "PUSOY_RECONNECT_WINDOW_MS": "3000"},
            "timeout_ms": 60000,
            "streams": self.streams,
            "exit": 0,
        }


async def record(scenario: Scenario, server: RefereeServer) -> dict[str, Any]:
    async with grpc.aio.insecure_channel(server.address) as channel:
        organiser = match_service_grpc.MatchServiceStub(channel)
        created = await organiser.CreateMatch(
            match_service.CreateMatchRequest(
                profile=scenario.profile,
                seed=scenario.seed,
                hands=scenario.hands,
                drills=common.Drills(disconnect_after_prompts=scenario.drill),
                time_control=common.TimeControl(
                    turn_time_ms=TURN_TIME_MS, connect_timeout_ms=10000
                ),
            )
        )
        recorder = Recorder(scenario)
        seat0 = asyncio.create_task(recorder.play(server.address, created.seat_tokens[0]))
        await asyncio.sleep(0.2)  # seat 0 first: it sees the others take their seats
        others = [
            asyncio.create_task(play_seat(GreedyBot(), server.address, t))
            for t in created.seat_tokens[1:]
        ]
        if scenario.cancel_after:
            await recorder.answered.wait()
            await organiser.CancelMatch(
                match_service.CancelMatchRequest(match_id=created.match_id, reason="recorded")
            )
        await asyncio.gather(seat0, *others)
    return recorder.transcript()


async def main_async(names: list[str]) -> None:
    chosen = [s for s in SCENARIOS if not names or s.name in names]
    with tempfile.TemporaryDirectory() as tmp:
        server = RefereeServer("127.0.0.1:0", Path(tmp))
        await server.start()
        try:
            for scenario in chosen:
                data = await record(scenario, server)
                path = OUT / f"{scenario.name}.json"
                path.write_text(json.dumps(data, indent=1) + "\n")
                steps = sum(len(s["steps"]) for s in data["streams"])
                print(f"wrote {path.relative_to(ROOT)} ({steps} steps)")
        finally:
            await server.stop(grace=1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ", ".join(s.name for s in SCENARIOS)
    ap.add_argument("names", nargs="*", help=f"scenarios (default: all): {names}")
    args = ap.parse_args()
    unknown = set(args.names) - {s.name for s in SCENARIOS}
    if unknown:
        ap.error(f"unknown scenarios: {sorted(unknown)}")
    asyncio.run(main_async(args.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
