"""Following a match as a spectator does: the one reader of ``SpectatorService.WatchMatch``.

Three parts of the house follow a match's public events from elsewhere: the organiser's
``wait_over`` (woken at each event that may change ``GetMatch``'s answer), a table's
``TurnGate`` for a referee in another process (each turn), and the ladder's web (a
worker's match relayed to its viewers). Each hears the events through ``follow_match``;
only spectators' events are ever on this stream (no card of a hand before it ends).
"""

from __future__ import annotations

from collections.abc import Callable

import grpc

from referee.protocol import common, spectator_service, spectator_service_grpc

OnEvent = Callable[[int, common.Event], bool | None]
"""Hears each event (its sequence number, the event); False stops the following."""


async def follow_match(
    channel: grpc.aio.Channel, match_id: str, on_event: OnEvent, *, from_start: bool = False
) -> None:
    """Hand each public event of ``match_id`` to ``on_event`` as the referee sends it
    (``from_start``: the match's earlier events first), until the stream ends, breaks
    (the referee went away or forgot the match) or ``on_event`` returns False."""
    stub = spectator_service_grpc.SpectatorServiceStub(channel)
    request = spectator_service.WatchMatchRequest(match_id=match_id, from_start=from_start)
    call = stub.WatchMatch(request)
    try:
        async for item in call:
            if on_event(item.seq, item.event) is False:
                return
    except grpc.aio.AioRpcError:
        pass
    finally:
        call.cancel()


__all__ = ["OnEvent", "follow_match"]
