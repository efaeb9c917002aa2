"""Turns at a table: each jailed bot runs only on its own, and its CPU time per turn.

Once play has begun, a jailed bot is stopped between its turns (``Jail.turn``), so that
nothing it runs, however many processes in however many sessions, takes CPU from the
seat whose turn it is. The gate hears each change of turn:

- from a referee in this process, at the moment it decides it (``Referee.follow_turns``):
  the next seat's bot is continued before its prompt is sent, the last one's stopped
  before anyone else is prompted;
- from a referee elsewhere, as its public events arrive (``follow``: WatchMatch), a few
  milliseconds after the bots hear them.

At the match's end every bot runs again, to hear it and exit. Each turn's CPU time (from
the start of a seat's turn to the next change of turn, a timed-out turn included) is
read from the jail's counter: ``turns_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

import grpc
import structlog

from referee.client.channels import client_channel
from referee.protocol import common, spectator_service, spectator_service_grpc
from referee.sandbox import Jail

log = structlog.get_logger("referee.table")


@dataclasses.dataclass
class SeatClock:
    turns: int = 0
    total_ns: int = 0
    max_ns: int = 0


class TurnGate:
    """The jailed bots of one match, run turn by turn; call it with each change of turn
    (the seat whose turn it is now, or None, and whether the match is over)."""

    def __init__(self) -> None:
        self.jails: dict[int, Jail] = {}
        self.clocks: dict[int, SeatClock] = {}
        self.turn: int | None = None
        self.over = False
        self._started: int | None = None

    def add(self, seat: int, jail: Jail) -> None:
        self.jails[seat] = jail
        if self.turn is not None and not self.over:
            jail.turn(seat == self.turn)  # seated after play began: a replacement

    def __call__(self, seat: int | None, over: bool) -> None:
        if self.over:
            return
        self._clock_out()
        self.turn = seat
        if over:
            self.over = True
            for jail in self.jails.values():
                jail.release_turns()
            return
        for s, jail in self.jails.items():
            try:
                jail.turn(s == seat)
            except OSError:
                log.exception("stopping or continuing a jailed bot failed", seat=s)
        if seat is not None and seat in self.jails:
            self._started = self.jails[seat].cpu_ns()

    def _clock_out(self) -> None:
        """The turn in force ends: charge its CPU time to its seat."""
        seat, started = self.turn, self._started
        self._started = None
        if seat is None or started is None or seat not in self.jails:
            return
        now = self.jails[seat].cpu_ns()
        if now is None:
            return
        used = max(0, now - started)
        clock = self.clocks.setdefault(seat, SeatClock())
        clock.turns += 1
        clock.total_ns += used
        clock.max_ns = max(clock.max_ns, used)

    def turns_ms(self, seat: int) -> tuple[float, float] | None:
        """The seat's CPU time within its turns, in total and in its longest turn."""
        clock = self.clocks.get(seat)
        if clock is None or not clock.turns:
            return None
        return clock.total_ns / 1e6, clock.max_ns / 1e6

    async def follow(self, address: str, match_id: str) -> None:
        """Hear the turns from the match's public events (a referee elsewhere)."""
        async with client_channel(address) as channel:
            stub = spectator_service_grpc.SpectatorServiceStub(channel)
            request = spectator_service.WatchMatchRequest(match_id=match_id)
            with contextlib.suppress(grpc.aio.AioRpcError):
                async for item in stub.WatchMatch(request):
                    self._on(item.event)
        self(None, True)

    def _on(self, event: common.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "turn_started":
            self(event.turn_started.seat, False)
        elif kind == "match_ended":
            self(None, True)


async def stop_following(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


__all__ = ["SeatClock", "TurnGate", "stop_following"]
