"""Play one seat with a built-in strategy over gRPC, reconnecting after dropped streams.

A deliberately small client: the strategies answer at once, so there is no worker, no
deadline cut-off and no hooks. Bot authors use their language's starter kit instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import random
import time
from collections.abc import AsyncIterator, Sequence

import grpc

from referee.bots.strategies import Choice, Strategy
from referee.protocol import PROTOCOL_VERSION, common, play_service, play_service_grpc

RECONNECT_WINDOW_S = 30.0
"""Give up after this long without a word from the referee (a restart takes seconds)."""

_RETRYABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
)


class SeatRefused(Exception):
    """The referee refused the seat for good (bad token, version, shutting down)."""

    def __init__(self, refusal: play_service.Refusal) -> None:
        super().__init__(f"{play_service.RefusalReason.Name(refusal.reason)}: {refusal.message}")
        self.refusal = refusal


@dataclasses.dataclass(frozen=True, slots=True)
class SeatOutcome:
    """How the match ended for the seat; ``ended`` is None when it ended while away."""

    seat: int
    match_id: str
    ended: common.MatchEnded | None


def _action(turn_id: int, choice: Choice) -> play_service.PlayRequest:
    action = play_service.Action(turn_id=turn_id)
    if choice:
        action.play.cards.extend(choice)
    else:
        getattr(action, "pass").SetInParent()
    return play_service.PlayRequest(action=action)


def _fallback(prompt: play_service.TurnPrompt) -> Choice:
    if prompt.can_pass or not prompt.legal_plays:
        return None
    return list(prompt.legal_plays[0].cards)


@dataclasses.dataclass
class _Held:
    seat: int = -1
    match_id: str = ""
    last_heard: float = dataclasses.field(default_factory=time.monotonic)
    taken: play_service.Refusal | None = None
    """SEAT_TAKEN since ``taken_since`` (and no Welcome since): someone else holds it."""
    taken_since: float = 0.0


async def _stream_once(
    bot: Strategy,
    stub: play_service_grpc.PlayServiceAsyncStub,
    token: str,
    held: _Held,
    batch_events: bool,
) -> SeatOutcome | None:
    """One stream; the outcome at the match's end, None when the stream dropped."""
    outgoing: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[play_service.PlayRequest]:
        while (msg := await outgoing.get()) is not None:
            yield msg

    outgoing.put_nowait(
        play_service.PlayRequest(
            hello=play_service.Hello(
                protocol_version=PROTOCOL_VERSION,
                token=token,
                want_legal_plays=True,
                bot_name=bot.name,
                batch_events=batch_events,
            )
        )
    )
    call = stub.Play(requests())
    prompt: play_service.TurnPrompt | None = None
    try:
        async for msg in call:
            held.last_heard = time.monotonic()
            kind = msg.WhichOneof("kind")
            if kind == "welcome":
                held.seat, held.match_id = msg.welcome.seat, msg.welcome.match_id
                held.taken = None
            elif kind == "refusal":
                reason = msg.refusal.reason
                if reason == play_service.REFUSAL_REASON_MATCH_OVER and held.seat >= 0:
                    return SeatOutcome(held.seat, held.match_id, None)
                if reason == play_service.REFUSAL_REASON_SEAT_TAKEN:
                    if held.taken is None:
                        held.taken, held.taken_since = msg.refusal, time.monotonic()
                    return None  # the referee has not yet seen our last stream drop
                raise SeatRefused(msg.refusal)
            elif kind == "prompt":
                prompt = msg.prompt
                choice = bot.choose(prompt)
                if inspect.isawaitable(choice):
                    choice = await choice  # a slow strategy holds up its own seat only
                outgoing.put_nowait(_action(prompt.turn_id, choice))
            elif kind == "result":
                res = msg.result
                if (
                    not res.accepted
                    and prompt is not None
                    and res.turn_id == prompt.turn_id
                    and res.attempts_left > 0
                ):
                    outgoing.put_nowait(_action(prompt.turn_id, _fallback(prompt)))
            elif kind == "event" and msg.event.HasField("match_ended"):
                return SeatOutcome(held.seat, held.match_id, msg.event.match_ended)
            elif kind == "batch":
                for event in msg.batch.events:
                    if event.HasField("match_ended"):
                        return SeatOutcome(held.seat, held.match_id, event.match_ended)
    finally:
        outgoing.put_nowait(None)
        call.cancel()
    return None


async def play_seat(
    bot: Strategy,
    address: str,
    token: str,
    *,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, str | int]] = (),
    reconnect_window_s: float = RECONNECT_WINDOW_S,
    batch_events: bool = False,
) -> SeatOutcome:
    """Play the seat of ``token`` until the match ends.

    With ``credentials`` the channel uses TLS (``channel_options``: grpc's, such as the
    name to check in the referee's certificate). Raises SeatRefused for a refusal that
    retrying cannot mend (SEAT_TAKEN for a whole reconnect window: another bot holds the
    seat), ConnectionError after a whole reconnect window without a word from the referee.
    """
    held = _Held()
    delay = 0.0
    channel = (
        grpc.aio.secure_channel(address, credentials, options=list(channel_options))
        if credentials is not None
        else grpc.aio.insecure_channel(address, options=list(channel_options))
    )
    async with channel:
        stub = play_service_grpc.PlayServiceStub(channel)
        while True:
            attempt = time.monotonic()
            try:
                outcome = await _stream_once(bot, stub, token, held, batch_events)
                if outcome is not None:
                    return outcome
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in _RETRYABLE:
                    raise
            if held.taken is not None and time.monotonic() - held.taken_since > reconnect_window_s:
                raise SeatRefused(held.taken)
            if time.monotonic() - held.last_heard > reconnect_window_s:
                raise ConnectionError(f"could not reach the referee at {address}")
            if held.last_heard >= attempt and held.taken is None:
                delay = 0.0  # that stream got through: retry at once
            await asyncio.sleep(delay * (1 + random.random()))
            delay = min(max(delay * 2, 0.05), 1.0)
