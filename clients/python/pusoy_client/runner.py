"""Connect a Bot to a referee and play its seat to the end of the match."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Sequence

import grpc

from pusoy_client.bot import PASS, Bot, Choice, MatchOutcome
from referee.protocol import PROTOCOL_VERSION, common, play_service, play_service_grpc

# Give up reconnecting after this long without a successful connection.
RECONNECT_WINDOW_S = 30.0
# Answer this long before the deadline when the bot's own choice runs late.
DEADLINE_MARGIN_S = 0.05


class BotRefused(Exception):
    """The referee refused the seat (bad token, seat taken, version, match over)."""

    def __init__(self, refusal: play_service.Refusal) -> None:
        name = play_service.RefusalReason.Name(refusal.reason)
        super().__init__(f"{name}: {refusal.message}")
        self.refusal = refusal


def _action(turn_id: int, choice: Choice) -> play_service.PlayRequest:
    if not choice:
        return _pass_request(turn_id)
    return play_service.PlayRequest(
        action=play_service.Action(turn_id=turn_id, play=common.Cards(cards=list(choice)))
    )


def _pass_request(turn_id: int) -> play_service.PlayRequest:
    action = play_service.Action(turn_id=turn_id)
    getattr(action, "pass").SetInParent()
    return play_service.PlayRequest(action=action)


class _Connection:
    """One stream: an outgoing queue and the messages coming back."""

    def __init__(self) -> None:
        self.outgoing: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()

    async def requests(self) -> AsyncIterator[play_service.PlayRequest]:
        while True:
            msg = await self.outgoing.get()
            if msg is None:
                return
            yield msg

    def send(self, msg: play_service.PlayRequest) -> None:
        self.outgoing.put_nowait(msg)


async def _decide(bot: Bot, prompt: play_service.TurnPrompt) -> Choice:
    """The bot's choice, cut short by the prompt's deadline (time bank excluded)."""
    result = bot.choose(prompt)
    if not inspect.isawaitable(result):
        return result
    deadline = prompt.deadline.ToDatetime().timestamp() + prompt.time_bank_ms / 1000
    budget = deadline - time.time() - DEADLINE_MARGIN_S
    try:
        return await asyncio.wait_for(result, max(0.0, budget))
    except TimeoutError:
        return bot.fallback(prompt)


@dataclasses.dataclass
class _Seat:
    seat: int = -1
    match_id: str = ""
    last_heard: float = dataclasses.field(default_factory=time.monotonic)


async def _play_once(
    bot: Bot, stub: play_service_grpc.PlayServiceAsyncStub, token: str, held: _Seat
) -> MatchOutcome | None:
    """Play over one stream; the outcome at match end, None if the stream dropped."""
    conn = _Connection()
    conn.send(
        play_service.PlayRequest(
            hello=play_service.Hello(
                protocol_version=PROTOCOL_VERSION,
                token=token,
                want_legal_plays=bot.want_legal_plays,
                bot_name=bot.name,
            )
        )
    )
    call = stub.Play(conn.requests())
    prompt: play_service.TurnPrompt | None = None
    try:
        async for msg in call:
            held.last_heard = time.monotonic()
            kind = msg.WhichOneof("kind")
            if kind == "welcome":
                held.seat, held.match_id = msg.welcome.seat, msg.welcome.match_id
                bot.on_welcome(msg.welcome)
            elif kind == "refusal":
                if held.seat >= 0 and msg.refusal.reason == play_service.REFUSAL_REASON_MATCH_OVER:
                    return MatchOutcome(held.seat, held.match_id, None)  # ended while away
                raise BotRefused(msg.refusal)
            elif kind == "prompt":
                prompt = msg.prompt
                conn.send(_action(prompt.turn_id, await _decide(bot, prompt)))
            elif kind == "result":
                result = msg.result
                if (
                    not result.accepted
                    and prompt is not None
                    and result.turn_id == prompt.turn_id
                    and result.attempts_left > 0
                ):
                    conn.send(_action(prompt.turn_id, bot.on_rejected(prompt, result)))
            elif kind == "event":
                bot.on_event(msg.event)
                if msg.event.HasField("match_ended"):
                    return MatchOutcome(held.seat, held.match_id, msg.event.match_ended)
    finally:
        conn.send(None)  # type: ignore[arg-type]
        call.cancel()
    return None


def tls_credentials(
    ca_file: str | None, cert_file: str | None = None, key_file: str | None = None
) -> grpc.ChannelCredentials:
    """TLS that trusts the CA in ``ca_file`` (None: the system's roots) and, for mutual
    TLS, shows the client certificate ``cert_file`` with its key ``key_file`` (PEM)."""

    def read(path: str | None) -> bytes | None:
        if not path:
            return None
        with open(path, "rb") as f:
            return f.read()

    return grpc.ssl_channel_credentials(read(ca_file), read(key_file), read(cert_file))


async def run_bot(
    bot: Bot,
    address: str,
    token: str,
    *,
    reconnect_window_s: float = RECONNECT_WINDOW_S,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, str]] | None = None,
) -> MatchOutcome:
    """Play the seat of ``token`` until the match ends; reconnect after dropped streams.

    With ``credentials`` (``tls_credentials``) the channel uses TLS, else plaintext."""
    delay = 0.0  # the first reconnect is immediate, then back off
    held = _Seat()
    channel = (
        grpc.aio.secure_channel(address, credentials, options=channel_options)
        if credentials is not None
        else grpc.aio.insecure_channel(address, options=channel_options)
    )
    async with channel:
        stub = play_service_grpc.PlayServiceStub(channel)
        while True:
            attempt = time.monotonic()
            try:
                outcome = await _play_once(bot, stub, token, held)
                if outcome is not None:
                    return outcome
            except BotRefused as exc:
                # Right after a drop the referee may not have noticed yet: retry a seat
                # it still thinks is taken, within the window.
                if exc.refusal.reason != play_service.REFUSAL_REASON_SEAT_TAKEN:
                    raise
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.CANCELLED,
                    grpc.StatusCode.INTERNAL,
                    grpc.StatusCode.UNKNOWN,
                ):
                    raise
            # Give up after a whole window without a word from the referee.
            if time.monotonic() - held.last_heard > reconnect_window_s:
                raise ConnectionError(f"could not reach the referee at {address}")
            if held.last_heard >= attempt:  # that stream got through: retry at once
                delay = 0.0
            await asyncio.sleep(delay * (1 + random.random()))
            delay = min(max(delay * 2, 0.05), 1.0)


def run(
    bot: Bot, address: str, token: str, credentials: grpc.ChannelCredentials | None = None
) -> MatchOutcome:
    """Blocking form of ``run_bot``."""
    return asyncio.run(run_bot(bot, address, token, credentials=credentials))


def main(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Command-line entry for a bot: ``--address``/``--token`` or PUSOY_ADDRESS/PUSOY_TOKEN."""
    parser = argparse.ArgumentParser(description=f"Run the {bot.name} bot against a referee.")
    parser.add_argument("--address", default=os.environ.get("PUSOY_ADDRESS", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("PUSOY_TOKEN"))
    env = os.environ.get
    parser.add_argument("--ca-file", default=env("PUSOY_CA_FILE"), help="TLS: trust this CA")
    parser.add_argument("--cert-file", default=env("PUSOY_CERT_FILE"), help="mutual TLS: cert")
    parser.add_argument("--key-file", default=env("PUSOY_KEY_FILE"), help="mutual TLS: key")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("a seat token is needed: --token or PUSOY_TOKEN")
    credentials = None
    if args.ca_file or args.cert_file:
        credentials = tls_credentials(args.ca_file, args.cert_file, args.key_file)
    try:
        outcome = run(bot, args.address, args.token, credentials)
    except BotRefused as exc:
        print(f"{bot.name}: refused: {exc}", file=sys.stderr)
        return 2
    except ConnectionError as exc:
        print(f"{bot.name}: {exc}", file=sys.stderr)
        return 3
    print(f"{bot.name}: match {outcome.match_id} over, seat {outcome.seat} placed {outcome.place}")
    return 0


__all__ = ["PASS", "BotRefused", "main", "run", "run_bot", "tls_credentials"]
