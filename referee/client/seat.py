"""One seat's stream to a referee: the one Python seat client of the referee package.

The built-in bots (in a table's process, and as ``referee bot``) and the stdio bridge
play through it (bot authors use their language's starter kit instead). It holds the
seat until the match ends and leaves what to do with each message to its player
(``SeatPlayer``): a strategy answers prompts, the bridge relays every message to a bot
process. It keeps docs/kits.md's rules (section 6) where the built-in bots always had:

- a stream that ends before ``match_ended``, or fails with one of ``RETRYABLE``, is
  opened again; any other status is raised (``grpc.aio.AioRpcError``);
- SEAT_TAKEN, before the first Welcome as after a drop (the referee may not have
  noticed the old stream's end yet), is retried; for a whole reconnect window it is a
  refusal (``SeatRefused``). MATCH_OVER after a Welcome is the match's end, seen while
  away; any other refusal is raised at once;
- after a stream that held the seat for ``HELD_S`` the next opens at once; after a
  shorter one (a referee restarting, a bot cut off again and again for flooding) the
  pause doubles from 50 ms to 1 s, jittered so that a table's seats do not reconnect in
  step;
- a whole reconnect window without a word from the referee: ``ConnectionError``.

Actions are written to the open stream (``send``) by the player, from the message loop
or from a task of its own; none is queued for a stream that does not exist.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Sequence

import grpc

from referee.client.channels import client_channel
from referee.client.tls import ClientTls
from referee.protocol import PROTOCOL_VERSION, common, play_service, play_service_grpc

RECONNECT_WINDOW_S = 30.0
"""Give up after this long without a word from the referee (a restart takes seconds)."""
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
    }
)
"""The statuses after which a stream is opened again."""
HELD_S = 1.0
"""A stream that held the seat this long is followed by another at once."""
SEAT_CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 1000),
)
"""gRPC's own reconnection keeping pace with the seat's (its default backoff reaches 2
minutes): what a bot process of its own passes (``referee bot``)."""

Stream = grpc.aio.StreamStreamCall[play_service.PlayRequest, play_service.PlayResponse]


class SeatRefused(Exception):
    """The referee refused the seat for good (bad token, version, shutting down, or
    SEAT_TAKEN for a whole reconnect window)."""

    def __init__(self, refusal: play_service.Refusal) -> None:
        super().__init__(f"{play_service.RefusalReason.Name(refusal.reason)}: {refusal.message}")
        self.refusal = refusal


@dataclasses.dataclass(frozen=True, slots=True)
class SeatOutcome:
    """How the match ended for the seat; ``ended`` is None when it ended while away, and
    ``refusal`` is then the referee's MATCH_OVER."""

    seat: int
    match_id: str
    ended: common.MatchEnded | None
    refusal: play_service.Refusal | None = None


class SeatPlayer:
    """What plays the seat: it hears every message but refusals (the client's own: they
    end the seat or are retried), and answers through ``SeatClient.send``."""

    name = ""
    """The bot's name, for the Hello."""

    def stream_opened(self) -> None:
        """A new stream is about to open: what the last one was owed will not come."""

    async def on_message(self, seat: SeatClient, message: play_service.PlayResponse) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        """The seat is over, or lost for good: let go of what the player holds (a turn
        still running, a connection of its own). ``SeatClient.play`` calls it."""


class SeatClient:
    """``await SeatClient(address, token).play(player)``: the seat of ``token`` until
    its match ends.

    ``tls``: TLS to the referee (None: plaintext); ``channel_options``: grpc's channel
    arguments; the Hello's ``name``, ``want_legal_plays`` and ``batch_events``.
    ``play`` returns the SeatOutcome; raises SeatRefused, ConnectionError, the
    AioRpcError of a stream that failed for good, and TlsError for TLS files it cannot
    use."""

    def __init__(
        self,
        address: str,
        token: str,
        *,
        tls: ClientTls | None = None,
        channel_options: Sequence[tuple[str, str | int]] = (),
        name: str = "",
        want_legal_plays: bool = True,
        batch_events: bool = False,
        reconnect_window_s: float = RECONNECT_WINDOW_S,
    ) -> None:
        self.address = address
        self.tls = tls
        self.channel_options = tuple(channel_options)
        self.reconnect_window_s = reconnect_window_s
        self.hello = play_service.PlayRequest(
            hello=play_service.Hello(
                protocol_version=PROTOCOL_VERSION,
                token=token,
                want_legal_plays=want_legal_plays,
                bot_name=name,
                batch_events=batch_events,
            )
        )
        self.seat = -1
        self.match_id = ""
        self.reconnects = 0
        """Streams opened after the first."""
        self._call: Stream | None = None
        self._last_heard = time.monotonic()
        self._welcomed_at = 0.0
        self._taken: play_service.Refusal | None = None
        """SEAT_TAKEN since ``_taken_since`` (and no Welcome since): someone else holds it."""
        self._taken_since = 0.0

    @property
    def connected(self) -> bool:
        """Whether a stream is open (its Hello sent): an answer sent now can count."""
        return self._call is not None

    async def send(self, action: play_service.Action) -> bool:
        """Write an action to the open stream; False when there is none, or it ended."""
        call = self._call
        if call is None:
            return False
        try:
            await call.write(play_service.PlayRequest(action=action))
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, RuntimeError):
            return False  # the stream ended meanwhile: it is opened again
        return True

    async def play(self, player: SeatPlayer) -> SeatOutcome:
        """Hold the seat until the match ends, opening a new stream after each drop; the
        player is closed whatever the end."""
        try:
            return await self._play(player)
        finally:
            await player.close()

    async def _play(self, player: SeatPlayer) -> SeatOutcome:
        delay = 0.0
        self._last_heard = time.monotonic()
        async with client_channel(self.address, self.tls, options=self.channel_options) as ch:
            stub = play_service_grpc.PlayServiceStub(ch)
            while True:
                opened = time.monotonic()
                player.stream_opened()
                try:
                    outcome = await self._stream(stub, player)
                    if outcome is not None:
                        return outcome
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in RETRYABLE:
                        raise
                now = time.monotonic()
                if self._taken is not None and now - self._taken_since > self.reconnect_window_s:
                    raise SeatRefused(self._taken)
                if now - self._last_heard > self.reconnect_window_s:
                    raise ConnectionError(f"could not reach the referee at {self.address}")
                if self._welcomed_at >= opened and now - opened >= HELD_S:
                    delay = 0.0  # that stream held the seat: open the next at once
                await asyncio.sleep(delay * (1 + random.random()))
                delay = min(max(delay * 2, 0.05), 1.0)
                self.reconnects += 1

    async def _stream(
        self, stub: play_service_grpc.PlayServiceAsyncStub, player: SeatPlayer
    ) -> SeatOutcome | None:
        """One stream; the outcome at the match's end, None when the stream dropped."""
        call: Stream = stub.Play(None)  # written to with call.write
        try:
            await call.write(self.hello)
            self._call = call
            async for msg in call:
                self._last_heard = time.monotonic()
                kind = msg.WhichOneof("kind")
                if kind == "refusal":
                    return self._refused(msg.refusal)
                if kind == "welcome":
                    self.seat, self.match_id = msg.welcome.seat, msg.welcome.match_id
                    self._welcomed_at, self._taken = self._last_heard, None
                await player.on_message(self, msg)
                if kind == "event":
                    if msg.event.HasField("match_ended"):
                        return SeatOutcome(self.seat, self.match_id, msg.event.match_ended)
                elif kind == "batch":
                    for event in msg.batch.events:
                        if event.HasField("match_ended"):
                            return SeatOutcome(self.seat, self.match_id, event.match_ended)
        except asyncio.InvalidStateError:
            pass  # the stream ended as it opened
        finally:
            self._call = None
            call.cancel()
        return None

    def _refused(self, refusal: play_service.Refusal) -> SeatOutcome | None:
        """The end of the seat (MATCH_OVER after a Welcome), None to retry (SEAT_TAKEN),
        or SeatRefused."""
        reason = refusal.reason
        if reason == play_service.REFUSAL_REASON_MATCH_OVER and self.seat >= 0:
            return SeatOutcome(self.seat, self.match_id, None, refusal)
        if reason == play_service.REFUSAL_REASON_SEAT_TAKEN:
            if self._taken is None:
                self._taken, self._taken_since = refusal, time.monotonic()
            return None  # the referee has not yet seen our last stream drop
        raise SeatRefused(refusal)
