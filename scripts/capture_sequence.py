#!/usr/bin/env python3
"""Capture every message of one seat's Play stream over one real hand.

Starts a referee in this process on a free port of 127.0.0.1, creates a one-hand big-two
match from a fixed seed, seats three sample bots of the Python SDK (``pusoy_client``) on
seats 1 to 3 and, on seat 0, a bot written on the raw generated stubs that records each
PlayRequest it sends and each PlayResponse it receives, in order. The transcript is the
source of the message sequence in docs/protocol.md. Run from the repository root:

    .venv/bin/python scripts/capture_sequence.py                  # readable JSON
    .venv/bin/python scripts/capture_sequence.py --format text    # protobuf text format
    .venv/bin/python scripts/capture_sequence.py --format jsonl --out /tmp/seat0.jsonl

JSON uses the protobuf JSON mapping with the proto field names (as the event log does):
fields at their zero value are left out, so a message about seat 0 has no ``seat``.

Seat 0 connects first, so it sees every seat connect. It plays like the SDK's greedy
sample, except that, unless ``--no-rejection`` is given, its first answer to a play on the
table is a deliberately illegal single, so the transcript shows a rejection and the retry.
Match ids, tokens, times and deadlines differ between runs; the cards and every decision
do not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format, text_format
from google.protobuf.message import Message

from referee.bots import GreedyBot, play_seat
from referee.protocol import (
    PROTOCOL_VERSION,
    common,
    match_service,
    match_service_grpc,
    play_service,
    play_service_grpc,
)
from referee.server.app import RefereeServer
from referee.service.logging import configure_logging

DEFAULT_SEED = "protocol-guide"

Recorder = Callable[[str, Message], None]


FORMATS = ("json", "jsonl", "text")
WIDTH = 92


def readable(value: Any, indent: str = "", lead: int = 0) -> str:
    """JSON, indented, with lists of scalars and what fits on a line kept on one line.

    ``lead`` is how many characters precede the value on its first line.
    """
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, dict | list) or lead + len(flat) <= WIDTH:
        return flat
    if isinstance(value, list) and not any(isinstance(v, dict | list) for v in value):
        return flat
    inner = indent + "  "
    if isinstance(value, list):
        items = [inner + readable(v, inner, len(inner)) for v in value]
    else:
        items = []
        for k, v in value.items():
            key = f"{inner}{json.dumps(k)}: "
            items.append(key + readable(v, inner, len(key)))
    opening, closing = ("[", "]") if isinstance(value, list) else ("{", "}")
    return opening + "\n" + ",\n".join(items) + "\n" + indent + closing


def render(msg: Message, fmt: str) -> str:
    """One message as text: JSON with the proto field names, or protobuf text format."""
    if fmt == "text":
        return text_format.MessageToString(msg, as_utf8=True).rstrip("\n")
    data = json_format.MessageToDict(msg, preserving_proto_field_name=True)
    if fmt == "jsonl":
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return readable(data)


def illegal_single(prompt: play_service.TurnPrompt) -> list[str] | None:
    """A single from the seat's hand that is not a legal play here, if there is one."""
    legal = {tuple(p.cards) for p in prompt.legal_plays}
    for card in prompt.hand:
        if (card,) not in legal:
            return [card]
    return None


def action(turn_id: int, cards: list[str] | None) -> play_service.PlayRequest:
    """An Action naming ``turn_id``: a play of ``cards``, or a pass when None or empty."""
    act = play_service.Action(turn_id=turn_id)
    if cards:
        act.play.cards.extend(cards)
    else:
        getattr(act, "pass").SetInParent()  # `pass` is a Python keyword
    return play_service.PlayRequest(action=act)


async def recording_seat(
    address: str, token: str, record: Recorder, reject_once: bool, welcomed: asyncio.Event
) -> None:
    """Seat 0 on the raw stubs: Hello, then answer every prompt until match_ended."""
    outgoing: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()
    chooser = GreedyBot()

    async def requests() -> AsyncIterator[play_service.PlayRequest]:
        while (msg := await outgoing.get()) is not None:
            yield msg

    def send(msg: play_service.PlayRequest) -> None:
        record("bot -> referee", msg)
        outgoing.put_nowait(msg)

    send(
        play_service.PlayRequest(
            hello=play_service.Hello(
                protocol_version=PROTOCOL_VERSION,
                token=token,
                want_legal_plays=True,
                bot_name="capture-seat-0",
            )
        )
    )
    prompt: play_service.TurnPrompt | None = None
    async with grpc.aio.insecure_channel(address) as channel:
        call = play_service_grpc.PlayServiceStub(channel).Play(requests())
        async for msg in call:
            record("referee -> bot", msg)
            kind = msg.WhichOneof("kind")
            if kind == "refusal":
                raise RuntimeError(f"refused: {msg.refusal.message}")
            if kind == "snapshot":
                welcomed.set()
            if kind == "prompt":
                prompt = msg.prompt
                bad = illegal_single(prompt) if reject_once and not prompt.is_lead else None
                if bad is not None:
                    reject_once = False
                    send(action(prompt.turn_id, bad))
                else:
                    choice = chooser.choose(prompt)
                    send(action(prompt.turn_id, list(choice) if choice else None))
            elif kind == "result" and not msg.result.accepted and prompt is not None:
                if msg.result.attempts_left > 0:
                    choice = chooser.fallback(prompt)
                    send(action(prompt.turn_id, list(choice) if choice else None))
            elif kind == "event" and msg.event.HasField("match_ended"):
                break
        outgoing.put_nowait(None)


async def capture(seed: str, log_dir: Path, reject_once: bool, fmt: str) -> list[str]:
    server = RefereeServer("127.0.0.1:0", log_dir)
    await server.start()
    lines: list[str] = []
    start = time.monotonic()
    count = 0

    def record(direction: str, msg: Message) -> None:
        nonlocal count
        count += 1
        elapsed = int((time.monotonic() - start) * 1000)
        kind = msg.WhichOneof("kind") or "?"
        if kind == "event":
            kind = f"event.{msg.event.WhichOneof('kind')}"  # type: ignore[attr-defined]
        name = type(msg).__name__
        lines.append(f"# {count:03d} +{elapsed}ms {direction}: {name}.{kind}")
        lines.append(render(msg, fmt))
        if fmt != "jsonl":
            lines.append("")

    try:
        async with server.organiser_channel() as channel:
            stub = match_service_grpc.MatchServiceStub(channel)
            created = await stub.CreateMatch(
                match_service.CreateMatchRequest(
                    profile="big-two",
                    seed=seed,
                    hands=1,
                    seat_names=["capture", "greedy-1", "greedy-2", "greedy-3"],
                    time_control=common.TimeControl(turn_time_ms=5000, time_bank_ms=10000),
                    fault_policy=common.FaultPolicy(max_rejections_per_turn=3, max_strikes=3),
                )
            )
            welcomed = asyncio.Event()
            seat0 = asyncio.create_task(
                recording_seat(
                    server.address, created.seat_tokens[0], record, reject_once, welcomed
                )
            )
            await asyncio.wait_for(welcomed.wait(), 10)
            others = [
                asyncio.create_task(play_seat(GreedyBot(), server.address, token))
                for token in created.seat_tokens[1:]
            ]
            await asyncio.wait_for(asyncio.gather(seat0, *others), 30)
            info = await stub.GetMatch(match_service.GetMatchRequest(match_id=created.match_id))
            lines.append(f"# log: {info.match.log_path}")
    finally:
        await server.stop(grace=1.0)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", default=DEFAULT_SEED, help=f"deal seed (default {DEFAULT_SEED})")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="json",
        help="json: readable JSON (default); jsonl: one line per message; text: protobuf text",
    )
    parser.add_argument("--no-rejection", action="store_true", help="no deliberate bad attempt")
    parser.add_argument("--out", type=Path, help="write the transcript here (default: stdout)")
    parser.add_argument("--log-dir", type=Path, help="keep the match log here (default: temp)")
    args = parser.parse_args()
    configure_logging("console", "error")
    with tempfile.TemporaryDirectory(prefix="capture-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        lines = asyncio.run(capture(args.seed, log_dir, not args.no_rejection, args.format))
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
