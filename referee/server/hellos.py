"""The rates of hellos, shared by PlayService and LobbyService (``HelloGuard``): a
client that fails its hellos, or a bot reconnecting in a loop, is refused before it
reaches a match."""

from __future__ import annotations

import grpc

from referee.server.limits import ServerLimits
from referee.server.rpc import Context
from referee.service.rates import LimitedLog, WindowCounter, limited_log, peer_host


class HelloGuard:
    """The rates of hellos, shared by PlayService and LobbyService: failed hellos per
    client address, and hellos per seat."""

    def __init__(self, limits: ServerLimits) -> None:
        self.failed = WindowCounter(limits.max_failed_hellos_per_minute)
        self.per_seat = WindowCounter(limits.max_reconnects_per_minute)
        self.log: LimitedLog = limited_log("referee.hello")

    async def failed_hello(self, context: Context, what: str) -> None:
        """Count a failed hello; abort with RESOURCE_EXHAUSTED when its address is over
        the limit (else return, and the caller sends its refusal)."""
        peer = context.peer()
        host = peer_host(peer)
        if self.failed.hit(host):
            self.log.warning(host, "hello refused", peer=peer, why=what)
            return
        wait = self.failed.retry_after(host)
        self.log.warning(host, "failed hellos throttled", peer=peer, why=what)
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"too many failed hellos from this address; wait {wait:.0f} s",
        )

    async def seat_hello(self, context: Context, match_id: str, seat: int) -> None:
        """Count a hello for a seat; abort with RESOURCE_EXHAUSTED past the seat's rate
        (a bot reconnecting in a loop), before it reaches the match."""
        key = (match_id, seat)
        if self.per_seat.hit(key):
            return
        wait = self.per_seat.retry_after(key)
        self.log.warning(key, "reconnects throttled", peer=context.peer(), seat=seat)
        await context.abort(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"seat {seat} said Hello more than {self.per_seat.limit} times in the last "
            f"minute; wait {wait:.0f} s",
        )
