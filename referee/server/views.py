"""What a seat is shown: the public state of a hand and a turn prompt."""

from __future__ import annotations

from collections.abc import Sequence

from referee.protocol import common, play_service
from referee.protocol.convert import card_list, play_pb
from referee.rules import SEATS, MatchState, SuitOrder, card_text
from referee.server.session import SeatSlot, Turn
from referee.server.settings import MatchSettings


def hand_text(match: MatchState, seat: int, order: SuitOrder) -> list[str]:
    """A seat's own cards, or nothing between hands."""
    hand = match.hand
    return card_list(hand.hands[seat], order) if hand is not None else []


def public_state(
    match_id: str,
    match: MatchState,
    strikes: Sequence[int],
    trick: Sequence[common.TrickPlay],
    played_mask: int,
    order: SuitOrder,
) -> common.PublicState:
    """Everything every seat may know now."""
    hand = match.hand
    state = common.PublicState(
        match_id=match_id,
        hand_number=match.hand_number,
        totals=list(match.totals),
        hands_won=list(match.hands_won),
        strikes=list(strikes),
    )
    if hand is None:
        state.card_counts.extend([0] * SEATS)
        state.locked_out.extend([False] * SEATS)
        return state
    if hand.turn is not None:
        state.turn = hand.turn
    if hand.table is not None:
        state.table.CopyFrom(play_pb(hand.table.mask, hand.table.kind, order))
        if hand.table_seat is not None:
            state.table_seat = hand.table_seat
    state.card_counts.extend(hand.card_counts())
    state.locked_out.extend(hand.locked)
    if hand.must_include:
        state.must_include = card_text(hand.must_include.bit_length() - 1)
    state.revolution = hand.revolution
    state.lone_two_rule = hand.lone_two_rule
    state.played_cards.extend(card_list(played_mask, order))
    state.trick.extend(trick)
    return state


def turn_prompt(
    match: MatchState,
    turn: Turn,
    started: common.TurnStarted,
    settings: MatchSettings,
    slot: SeatSlot,
    state: common.PublicState,
) -> play_service.TurnPrompt:
    """The prompt of a turn: enough for a bot to answer from this message alone."""
    hand = match.hand
    assert hand is not None
    order = settings.rules.suit_order
    plays = hand.legal_plays(turn.seat)
    prompt = play_service.TurnPrompt(
        turn_id=turn.turn_id,
        seat=turn.seat,
        turn_time_ms=settings.turn_time_ms,
        time_bank_ms=slot.bank_ms,
        state=state,
        hand=hand_text(match, turn.seat, order),
        can_pass=plays.can_pass,
        attempts_left=settings.max_rejections_per_turn,
        is_lead=hand.table is None,
    )
    prompt.deadline.CopyFrom(started.deadline)
    if slot.want_legal_plays:
        prompt.legal_plays.extend(play_pb(c.mask, c.kind, order) for c in plays)
    return prompt
