"""Who may see what: the one place where hidden cards are removed from events."""

from __future__ import annotations

from referee.protocol import common


def for_seat(event: common.Event, seat: int) -> common.Event | None:
    """The event as ``seat`` may receive it, or None when it is not for that seat."""
    kind = event.WhichOneof("kind")
    if kind == "hand_dealt":
        out = common.Event()
        out.CopyFrom(event)
        for hand in out.hand_dealt.hands:
            if hand.seat != seat:
                del hand.cards[:]
        return out
    if kind == "action_rejected":
        return event if event.action_rejected.seat == seat else None
    if kind == "turn_started":
        # The seat to act gets its prompt; the others learn of the turn from its action.
        # Not sending it halves the messages a move costs each bot.
        return None
    return event


def for_spectator(event: common.Event) -> common.Event | None:
    """The event as a spectator may receive it: no card before its hand ends."""
    kind = event.WhichOneof("kind")
    if kind == "hand_dealt":
        out = common.Event()
        out.CopyFrom(event)
        for hand in out.hand_dealt.hands:
            del hand.cards[:]
        return out
    if kind == "action_rejected":
        return None
    return event
