"""CPU time per turn of sandboxed bots, next to the wall time the log records.

A turn's wall time (prompt to answer, ``elapsed_ms`` in the log) depends on the machine's
load as much as on the bot; its CPU time does not. The clock follows the match as a
spectator does (``SpectatorService.WatchMatch``) and reads the bot's cgroup CPU counter
when its turn starts and when it answers, so the results can show both per turn. The
events reach the clock a moment after the bot, so each figure is good to a few
milliseconds; a bot that thinks between its turns has that time in its match total
(``cpu_s``), not in its turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable

import grpc

from referee.client.channels import client_channel
from referee.protocol import common, spectator_service, spectator_service_grpc


@dataclasses.dataclass
class SeatClock:
    turns: int = 0
    total_ns: int = 0
    max_ns: int = 0


class TurnClock:
    """Follows one match; ``turns_ms(seat)`` is what the seat's bot used in its turns."""

    def __init__(self, address: str, match_id: str, cpu_ns: Callable[[int], int | None]) -> None:
        self.address = address
        self.match_id = match_id
        self._cpu_ns = cpu_ns
        """A seat's CPU time so far (its sandbox's cgroup), None for a seat without one."""
        self.seats: dict[int, SeatClock] = {}
        self._started: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> TurnClock:
        self._task = asyncio.create_task(self._follow(), name=f"turn clock {self.match_id}")
        return self

    async def _follow(self) -> None:
        async with client_channel(self.address) as channel:  # the local referee's
            stub = spectator_service_grpc.SpectatorServiceStub(channel)
            request = spectator_service.WatchMatchRequest(match_id=self.match_id)
            with contextlib.suppress(grpc.aio.AioRpcError):
                async for item in stub.WatchMatch(request):
                    self._on(item.event)

    def _on(self, event: common.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "turn_started":
            seat = event.turn_started.seat
            now = self._cpu_ns(seat)
            if now is not None:
                self._started[seat] = now
        elif kind == "played" or kind == "passed":
            ev = event.played if kind == "played" else event.passed
            start = self._started.pop(ev.seat, None)
            if start is None or ev.default_cause:
                return
            now = self._cpu_ns(ev.seat)
            if now is None:
                return
            used = max(0, now - start)
            clock = self.seats.setdefault(ev.seat, SeatClock())
            clock.turns += 1
            clock.total_ns += used
            clock.max_ns = max(clock.max_ns, used)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def turns_ms(self, seat: int) -> tuple[float, float] | None:
        """The seat's CPU time within its turns, in total and in its longest turn."""
        clock = self.seats.get(seat)
        if clock is None or not clock.turns:
            return None
        return clock.total_ns / 1e6, clock.max_ns / 1e6


__all__ = ["TurnClock"]
