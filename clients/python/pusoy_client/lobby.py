"""Take part in a tournament from your own machine: wait in the lobby, play what it assigns.

The organiser gives you a bot key and the referee's address. ``run_lobby`` opens one
long-lived lobby stream with that key and, for every seat the referee assigns, plays the
seat with a fresh bot from ``make_bot`` over its own Play stream (``run_bot``), several
at once when ``max_matches`` allows. It returns when the referee closes the lobby (the
tournament is over), and reconnects after a dropped lobby stream.

>>> from pusoy_client.samples import GreedyBot
>>> # asyncio.run(run_lobby(GreedyBot, "referee.example.org:50051", "KEY", max_matches=2))
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence

import grpc

from pusoy_client.bot import Bot, MatchOutcome
from pusoy_client.options import RECONNECT_WINDOW_S
from pusoy_client.protocol import PROTOCOL_VERSION, lobby_service, lobby_service_grpc
from pusoy_client.runner import BotRefused, RpcFailed, run_bot

# After the lobby closes, how long the seats still being played may take to finish.
FINISH_GRACE_S = 30.0


class LobbyRefused(Exception):
    """The referee refused the lobby hello (bad key, version, lobby closed)."""

    def __init__(self, refusal: lobby_service.LobbyRefusal) -> None:
        name = lobby_service.LobbyRefusalReason.Name(refusal.reason)
        super().__init__(f"{name}: {refusal.message}")
        self.refusal = refusal


@dataclasses.dataclass
class LobbySummary:
    """What the bot did while in the lobby."""

    name: str = ""
    """The name the organiser entered the bot under."""
    outcomes: list[MatchOutcome] = dataclasses.field(default_factory=list)
    """One per match played to its end, in the order they ended."""
    failures: dict[str, str] = dataclasses.field(default_factory=dict)
    """Match id to the error of a seat that could not be played to its end."""
    closed_reason: str = ""


class _Stream:
    """The lobby stream's outgoing side, kept open until ``close``."""

    def __init__(self, hello: lobby_service.LobbyHello) -> None:
        self._closed = asyncio.Event()
        self._hello = hello

    async def requests(self) -> AsyncIterator[lobby_service.ConnectRequest]:
        yield lobby_service.ConnectRequest(hello=self._hello)
        await self._closed.wait()

    def close(self) -> None:
        self._closed.set()


async def run_lobby(
    make_bot: Callable[[], Bot],
    address: str,
    key: str,
    *,
    max_matches: int = 1,
    name: str = "",
    reconnect_window_s: float = RECONNECT_WINDOW_S,
    batch_events: bool = False,
) -> LobbySummary:
    """Wait in the lobby and play every assigned seat until the referee closes the lobby
    (``batch_events``: each seat asks for its events batched, docs/protocol.md 3.5)."""
    summary = LobbySummary()
    playing: dict[str, asyncio.Task[None]] = {}
    hello = lobby_service.LobbyHello(
        protocol_version=PROTOCOL_VERSION,
        bot_key=key,
        max_concurrent_matches=max_matches,
        bot_name=name or make_bot().name,
    )

    async def play(assignment: lobby_service.SeatAssignment) -> None:
        try:
            outcome = await run_bot(
                make_bot(),
                address,
                assignment.seat_token,
                reconnect_window_s=reconnect_window_s,
                batch_events=batch_events,
            )
            summary.outcomes.append(outcome)
        except (BotRefused, RpcFailed, ConnectionError, grpc.aio.AioRpcError) as exc:
            summary.failures[assignment.match_id] = str(exc)

    last_ok = time.monotonic()
    delay = 0.0
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = lobby_service_grpc.LobbyServiceStub(channel)
            while True:
                stream = _Stream(hello)
                call = stub.Connect(stream.requests())
                try:
                    async for msg in call:
                        kind = msg.WhichOneof("kind")
                        if kind == "welcome":
                            summary.name = msg.welcome.bot_name
                            last_ok = time.monotonic()
                            delay = 0.0
                        elif kind == "refusal":
                            raise LobbyRefused(msg.refusal)
                        elif kind == "assignment":
                            match_id = msg.assignment.match_id
                            if match_id not in playing:  # sent again after a reconnect
                                playing[match_id] = asyncio.create_task(play(msg.assignment))
                        elif kind == "closed":
                            summary.closed_reason = msg.closed.reason
                    if summary.closed_reason:  # over, or replaced by another connection
                        break
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (
                        grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.CANCELLED,
                        grpc.StatusCode.INTERNAL,
                        grpc.StatusCode.UNKNOWN,
                    ):
                        raise
                finally:
                    stream.close()
                    call.cancel()
                if time.monotonic() - last_ok > reconnect_window_s:
                    raise ConnectionError(f"could not reach the referee's lobby at {address}")
                await asyncio.sleep(delay * (1 + random.random()))
                delay = min(max(delay * 2, 0.05), 1.0)
        if playing:
            await asyncio.wait(playing.values(), timeout=FINISH_GRACE_S)
        return summary
    finally:
        for task in playing.values():
            task.cancel()
        for task in playing.values():
            with contextlib.suppress(asyncio.CancelledError):
                await task


def lobby_main(
    make_bot: Callable[[], Bot], argv: Sequence[str] | None = None, *, max_matches: int = 1
) -> int:
    """Command-line entry for a remote bot: ``--address``/``--key`` or PUSOY_ADDRESS and
    PUSOY_BOT_KEY, ``--max-matches`` for how many matches it plays at once."""
    name = make_bot().name
    parser = argparse.ArgumentParser(description=f"Enter the {name} bot in a tournament lobby.")
    parser.add_argument("--address", default=os.environ.get("PUSOY_ADDRESS", "127.0.0.1:50051"))
    parser.add_argument("--key", default=os.environ.get("PUSOY_BOT_KEY"))
    parser.add_argument("--max-matches", type=int, default=max_matches)
    parser.add_argument(
        "--batch-events",
        action="store_true",
        default=os.environ.get("PUSOY_BATCH_EVENTS", "").lower() in ("1", "true", "yes", "on"),
        help="events batched into the prompts (PUSOY_BATCH_EVENTS=1)",
    )
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("a bot key is needed: --key or PUSOY_BOT_KEY")
    try:
        summary = asyncio.run(
            run_lobby(
                make_bot,
                args.address,
                args.key,
                max_matches=args.max_matches,
                batch_events=args.batch_events,
            )
        )
    except LobbyRefused as exc:
        print(f"{name}: refused: {exc}", file=sys.stderr)
        return 2
    except ConnectionError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 3
    print(
        f"{summary.name or name}: lobby closed ({summary.closed_reason}); "
        f"{len(summary.outcomes)} matches played, {len(summary.failures)} failed"
    )
    return 0


__all__ = ["LobbyRefused", "LobbySummary", "lobby_main", "run_lobby"]
