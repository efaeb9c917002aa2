"""What a seat or a spectator may see: the one place where hidden cards are removed.

Every message the referee sends (events, prompts, snapshots) and every public view of a
log is computed here from the events and the match state, for one seat or for the public.
A seat sees its own cards and public facts; the public sees no card before its hand ends.
"""

from __future__ import annotations

from referee.match.state import MachineState, TurnState
from referee.protocol import PROTOCOL_VERSION, common, play_service
from referee.protocol.convert import KIND_TO_PB, card_list, fill_play, play_cards
from referee.rules import SEATS, card_text


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


def public_entry(entry: common.LogEntry) -> common.LogEntry | None:
    """A log entry as the public may read it (no hidden card, no bot input), or None."""
    event = for_spectator(entry.event)
    if event is None:
        return None
    out = common.LogEntry(
        match_id=entry.match_id,
        seq=entry.seq,
        prev_hash=entry.prev_hash,
        schema_version=entry.schema_version,
        event=event,
    )
    out.time.CopyFrom(entry.time)
    return out


def hand_cards(state: MachineState, seat: int) -> list[str]:
    """A seat's own cards, or nothing between hands."""
    hand = state.rules.hand
    if hand is None:
        return []
    return card_list(hand.hands[seat], state.settings.rules.suit_order)


def public_state(state: MachineState, out: common.PublicState | None = None) -> common.PublicState:
    """Everything every seat may know now (filled into ``out`` when given: a prompt's
    or a snapshot's own field, so that nothing is built twice)."""
    if out is None:
        out = common.PublicState()
    match = state.rules
    hand = match.hand
    order = state.settings.rules.suit_order
    out.match_id = state.match_id
    out.hand_number = match.hand_number
    out.totals.extend(match.totals)
    out.hands_won.extend(match.hands_won)
    out.strikes.extend([seat.strikes for seat in state.seats])
    if hand is None:
        out.card_counts.extend([0] * SEATS)
        out.locked_out.extend([False] * SEATS)
        return out
    if hand.turn is not None:
        out.turn = hand.turn
    table = hand.table
    if table is not None:
        fill_play(out.table, table.mask, table.kind, order)
        if hand.table_seat is not None:
            out.table_seat = hand.table_seat
    out.card_counts.extend(hand.card_counts())
    out.locked_out.extend(hand.locked)
    if hand.must_include:
        out.must_include = card_text(hand.must_include.bit_length() - 1)
    out.revolution = hand.revolution
    out.lone_two_rule = hand.lone_two_rule
    out.played_cards.extend(card_list(state.played_mask, order))
    for entry in state.trick:
        trick_play = out.trick.add(seat=entry.seat)
        if entry.cards:
            fill_play(trick_play.play, entry.cards, entry.kind, order)
        else:
            setattr(trick_play, "pass", True)
    return out


def welcome(state: MachineState, seat: int, reconnect: bool) -> play_service.Welcome:
    return play_service.Welcome(
        seat=seat,
        match_id=state.match_id,
        config=state.settings.config_pb(),
        protocol_version=PROTOCOL_VERSION,
        reconnect=reconnect,
        seed_commitment=state.commitment,
    )


def snapshot(state: MachineState, seat: int) -> play_service.Snapshot:
    out = play_service.Snapshot(hand=hand_cards(state, seat))
    public_state(state, out.state)
    return out


def prompt(
    state: MachineState, turn: TurnState, started: common.TurnStarted
) -> play_service.TurnPrompt:
    """The prompt of a turn: enough for a bot to answer from this message alone."""
    hand = state.rules.hand
    assert hand is not None
    settings = state.settings
    order = settings.rules.suit_order
    plays = hand.legal_plays(turn.seat)
    seat = state.seats[turn.seat]
    out = play_service.TurnPrompt(
        turn_id=turn.turn_id,
        seat=turn.seat,
        turn_time_ms=settings.turn_time_for(turn.seat),
        time_bank_ms=started.time_bank_ms,
        hand=card_list(hand.hands[turn.seat], order),
        can_pass=plays.can_pass,
        attempts_left=settings.max_rejections_per_turn,
        is_lead=hand.table is None,
    )
    public_state(state, out.state)
    out.deadline.CopyFrom(started.deadline)
    if seat.want_legal_plays:
        add = out.legal_plays.add
        for c in plays:
            add(cards=play_cards(c.mask, order), combination=KIND_TO_PB[c.kind])
    return out


def action_result(
    state: MachineState, event: common.Event
) -> tuple[int, play_service.ActionResult] | None:
    """The answer to a seat's own action that ``event`` records: (seat, result), or None."""
    kind = event.WhichOneof("kind")
    if kind == "action_rejected":
        rj = event.action_rejected
        left = 0
        if rj.attempt:
            left = max(0, state.settings.max_rejections_per_turn - rj.attempt)
        return rj.seat, play_service.ActionResult(
            turn_id=rj.turn_id,
            accepted=False,
            reason=rj.reason,
            message=rj.message,
            attempts_left=left,
        )
    if kind in ("played", "passed"):
        body = event.played if kind == "played" else event.passed
        if body.default_cause == common.DEFAULT_CAUSE_UNSPECIFIED:
            return body.seat, play_service.ActionResult(turn_id=body.turn_id, accepted=True)
    return None
