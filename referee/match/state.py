"""The state of one match, and ``evolve``: how each logged event changes it.

The state of a match is always the fold of its log: ``fold`` over the entries gives the
state the server had after writing them. Times are integer microseconds since the Unix
epoch (the entries' times); nothing here reads a clock.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable
from typing import TypeVar

from referee.match.settings import MatchSettings, SettingsError, settings_from_config
from referee.protocol import common
from referee.protocol.convert import ts_us
from referee.rules import (
    SEATS,
    Action,
    HandResult,
    InvalidCardsError,
    Kind,
    MatchState,
    Outcome,
    RulesError,
    parse_cards,
)

STRIKE_CAUSES = (common.DEFAULT_CAUSE_TIMEOUT, common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS)


class Phase(enum.Enum):
    WAITING = "waiting"
    """Created; the seats are connecting."""
    PLAYING = "playing"
    OVER = "over"


class EvolveError(ValueError):
    """An event that cannot follow the state (only a damaged or forged log has one)."""


@dataclasses.dataclass(slots=True)
class SeatState:
    """What the machine knows of one seat."""

    connected: bool = False
    ever_connected: bool = False
    bot_name: str = ""
    want_legal_plays: bool = False
    batch_events: bool = False
    disconnected_at: int | None = None
    """When its last stream ended; None if it never connected or is connected."""
    gone: bool = False
    """Its bot is gone for good (its process exited): not waited for, no grace."""
    strikes: int = 0
    benched: bool = False
    """Past the strike limit: every later turn of this seat is played by default."""
    bank_us: int = 0
    prompts: int = 0
    last_prompt: int = 0
    """Turn id of the seat's last prompt."""
    timed_out_turn: int = 0
    """Turn id of the seat's last prompt that ended in a timeout (a later answer is late)."""
    out_of_turn: int = 0
    """Actions answering no prompt since the seat's last prompt."""


@dataclasses.dataclass(slots=True)
class TurnState:
    """The turn in force. ``prompted``: the seat was sent a prompt (turn_started);
    otherwise the seat is absent and the turn waits for it (a grace) or its default."""

    turn_id: int
    seat: int
    began: int
    prompted: bool = False
    started: int = 0
    deadline: int = 0
    rejections: int = 0


@dataclasses.dataclass(slots=True)
class TrickEntry:
    seat: int
    cards: int
    kind: Kind | None


@dataclasses.dataclass(slots=True)
class MachineState:
    """One match, as the machine sees it; owned by one task, changed only by ``evolve``."""

    match_id: str
    settings: MatchSettings
    commitment: str
    token_salt: str
    token_hashes: tuple[str, ...]
    created_at: int
    connect_deadline: int
    rules: MatchState
    seats: list[SeatState]
    phase: Phase = Phase.WAITING
    status: common.MatchStatus.ValueType = common.MATCH_STATUS_WAITING
    cancel_reason: str = ""
    turn: TurnState | None = None
    turn_counter: int = 0
    trick: list[TrickEntry] = dataclasses.field(default_factory=list)
    played_mask: int = 0
    resume_until: int = 0
    clock: int = 0
    """The time of the last event: decisions never go back in time."""
    seq: int = 0
    """Events folded so far."""

    def clone(self) -> MachineState:
        """An independent copy (the machine decides on one, every decision)."""
        other = _copy(self)
        other.rules = self.rules.clone()
        other.seats = [_copy(s) for s in self.seats]
        other.turn = _copy(self.turn) if self.turn is not None else None
        other.trick = list(self.trick)
        return other

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    def due(self) -> int | None:
        """When the machine next needs a timer command (µs), or None.

        Deadlines are inclusive: an answer at the deadline's very microsecond is in time,
        so a timer is due one microsecond after it.
        """
        if self.phase is Phase.WAITING:
            return self.connect_deadline + 1
        if self.phase is not Phase.PLAYING or self.turn is None:
            return None
        turn = self.turn
        if turn.prompted:
            return turn.deadline + self.seats[turn.seat].bank_us + 1
        return self.pending_due(turn)

    def pending_due(self, turn: TurnState) -> int:
        """When an absent seat's turn is played by default: at once for a benched seat, one
        whose bot is gone, or one with no grace left, else after its reconnect grace (or
        the resume grace), waiting at most one turn time."""
        seat = self.seats[turn.seat]
        if seat.benched or seat.gone:
            return turn.began
        grace_end = self.resume_until
        if seat.disconnected_at is not None:
            grace = self.settings.reconnect_grace_ms * 1000
            grace_end = max(grace_end, seat.disconnected_at + grace)
        wait_until = min(grace_end, turn.began + self.settings.turn_time_for(turn.seat) * 1000)
        return turn.began if wait_until <= turn.began else wait_until + 1


_T = TypeVar("_T")


_copiers: dict[type, Callable[[object], object]] = {}


def _copier(cls: type) -> Callable[[object], object]:
    """A copy function written out for ``cls``'s slots (one attribute read and write
    each, no loop): the machine copies its state at every decision."""
    names = cls.__slots__  # type: ignore[attr-defined]
    body = "".join(f"\n    new.{n} = obj.{n}" for n in names)
    code = f"def copy(obj):\n    new = new_of(cls){body}\n    return new"
    scope: dict[str, object] = {"new_of": object.__new__, "cls": cls}
    exec(code, scope)  # source made from the class's own slot names
    copy = scope["copy"]
    assert callable(copy)
    _copiers[cls] = copy
    return copy


def _copy(obj: _T) -> _T:
    """A shallow copy of a slots dataclass, several times cheaper than dataclasses.replace."""
    copy = _copiers.get(type(obj)) or _copier(type(obj))
    return copy(obj)  # type: ignore[return-value]


def initial_state(
    match_id: str, created: common.MatchCreated, at: int, seed: str = ""
) -> MachineState:
    """The state right after match_created; raises EvolveError for an unusable config."""
    try:
        settings = settings_from_config(created.config, seed)
    except SettingsError as exc:
        raise EvolveError(str(exc)) from None
    return MachineState(
        match_id=match_id,
        settings=settings,
        commitment=created.seed_commitment,
        token_salt=created.token_salt,
        token_hashes=tuple(created.token_hashes),
        created_at=at,
        connect_deadline=at + settings.connect_timeout_ms * 1000,
        rules=MatchState(settings.rules),
        seats=[SeatState(bank_us=settings.time_bank_for(s) * 1000) for s in range(SEATS)],
        clock=at,
        seq=1,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Applied:
    """What applying a play or pass did, for the fields of its event."""

    outcome: Outcome
    result: HandResult | None


def evolve(state: MachineState, event: common.Event, at: int) -> Applied | None:
    """Apply one logged event (at time ``at``) to ``state`` in place.

    Returns what a play or pass did (for the machine to fill the event's derived
    fields); raises EvolveError for an event that cannot follow the state.
    """
    state.seq += 1
    state.clock = max(state.clock, at)
    kind = event.WhichOneof("kind")
    handler = _HANDLERS.get(kind or "")
    if handler is None:
        raise EvolveError(f"unexpected event {kind}")
    return handler(state, event, at)


def _seat(state: MachineState, seat: int) -> SeatState:
    if not 0 <= seat < SEATS:
        raise EvolveError(f"no seat {seat}")
    return state.seats[seat]


def _on_connected(state: MachineState, event: common.Event, at: int) -> None:
    ev = event.seat_connected
    seat = _seat(state, ev.seat)
    seat.connected = True
    seat.ever_connected = True
    seat.bot_name = ev.bot_name
    seat.want_legal_plays = ev.want_legal_plays
    seat.batch_events = ev.batch_events
    seat.disconnected_at = None
    seat.gone = False


def _on_disconnected(state: MachineState, event: common.Event, at: int) -> None:
    ev = event.seat_disconnected
    seat = _seat(state, ev.seat)
    seat.connected = False
    seat.disconnected_at = at
    seat.gone = seat.gone or ev.gone


def _on_dealt(state: MachineState, event: common.Event, at: int) -> None:
    ev = event.hand_dealt
    hands = [0] * SEATS
    try:
        for sc in ev.hands:
            _seat(state, sc.seat)
            hands[sc.seat] = parse_cards(list(sc.cards))
        state.rules.start_hand(hands)
    except (ValueError, RulesError) as exc:
        raise EvolveError(f"the deal cannot be played: {exc}") from None
    state.phase = Phase.PLAYING
    state.status = common.MATCH_STATUS_RUNNING
    state.trick = []
    state.played_mask = 0
    _pending_turn(state, at)


def _pending_turn(state: MachineState, at: int) -> None:
    hand = state.rules.hand
    if hand is None or hand.is_over or hand.turn is None:
        state.turn = None
        return
    state.turn = TurnState(state.turn_counter + 1, hand.turn, began=at)


def _on_turn_started(state: MachineState, event: common.Event, at: int) -> None:
    ev = event.turn_started
    turn = state.turn
    if turn is None or turn.seat != ev.seat or turn.prompted:
        raise EvolveError(f"a prompt to seat {ev.seat} when no turn of that seat waits")
    turn.turn_id = ev.turn_id
    turn.prompted = True
    turn.started = at
    turn.deadline = ts_us(ev.deadline)
    turn.rejections = 0
    state.turn_counter = ev.turn_id
    seat = state.seats[ev.seat]
    seat.prompts += 1
    seat.last_prompt = ev.turn_id
    seat.out_of_turn = 0


def _on_rejected(state: MachineState, event: common.Event, at: int) -> None:
    ev = event.action_rejected
    seat = _seat(state, ev.seat)
    if ev.attempt:
        if state.turn is None or state.turn.seat != ev.seat:
            raise EvolveError(f"an attempt counted for seat {ev.seat} out of its turn")
        state.turn.rejections = ev.attempt
    else:
        seat.out_of_turn += 1


def _on_action(state: MachineState, event: common.Event, at: int) -> Applied:
    is_play = event.WhichOneof("kind") == "played"
    body = event.played if is_play else event.passed
    turn = state.turn
    if turn is None or turn.seat != body.seat:
        raise EvolveError(f"seat {body.seat} acted out of turn")
    try:
        cards = parse_cards(list(event.played.play.cards)) if is_play else 0
        outcome, result = state.rules.apply(body.seat, Action(cards))
    except InvalidCardsError as exc:
        raise EvolveError(f"unreadable play: {exc}") from None
    except RulesError as exc:
        raise EvolveError(f"an illegal action: {exc}") from None
    seat = state.seats[body.seat]
    cause = body.default_cause
    if cause in STRIKE_CAUSES:
        seat.strikes += 1
        limit = state.settings.max_strikes
        if limit and seat.strikes >= limit:
            seat.benched = True
    if cause == common.DEFAULT_CAUSE_TIMEOUT:
        seat.bank_us = 0
        seat.timed_out_turn = body.turn_id
    elif cause == common.DEFAULT_CAUSE_UNSPECIFIED and turn.prompted and at > turn.deadline:
        seat.bank_us = max(0, seat.bank_us - (at - turn.deadline))
    state.turn_counter = body.turn_id
    if is_play:
        state.played_mask |= cards
    state.trick.append(TrickEntry(body.seat, cards, outcome.kind))
    _pending_turn(state, at)
    return Applied(outcome, result)


def _on_trick_cleared(state: MachineState, event: common.Event, at: int) -> None:
    state.trick = []


def _on_hand_ended(state: MachineState, event: common.Event, at: int) -> None:
    state.turn = None


def _on_match_ended(state: MachineState, event: common.Event, at: int) -> None:
    ev = event.match_ended
    state.phase = Phase.OVER
    state.status = ev.status
    state.cancel_reason = ev.cancel_reason
    state.turn = None


def _on_restarted(state: MachineState, event: common.Event, at: int) -> None:
    grace = state.settings.resume_grace_ms * 1000
    for seat in state.seats:
        seat.connected = False
        seat.disconnected_at = at
    state.resume_until = at + grace
    if state.phase is Phase.WAITING:
        state.connect_deadline = max(state.connect_deadline, at + grace)
    elif state.phase is Phase.PLAYING:
        _pending_turn(state, at)


def _on_created(state: MachineState, event: common.Event, at: int) -> None:
    raise EvolveError("match_created after the first entry")


_HANDLERS: dict[str, Callable[[MachineState, common.Event, int], Applied | None]] = {
    "match_created": _on_created,
    "seat_connected": _on_connected,
    "seat_disconnected": _on_disconnected,
    "hand_dealt": _on_dealt,
    "turn_started": _on_turn_started,
    "action_rejected": _on_rejected,
    "played": _on_action,
    "passed": _on_action,
    "trick_cleared": _on_trick_cleared,
    "hand_ended": _on_hand_ended,
    "match_ended": _on_match_ended,
    "referee_restarted": _on_restarted,
}


def fold(
    match_id: str, entries: Iterable[tuple[common.Event, int]], seed: str = ""
) -> MachineState:
    """The state after a sequence of (event, time) pairs, the first being match_created."""
    it = iter(entries)
    try:
        first, at = next(it)
    except StopIteration:
        raise EvolveError("no events") from None
    if first.WhichOneof("kind") != "match_created":
        raise EvolveError("the first event must be match_created")
    state = initial_state(match_id, first.match_created, at, seed)
    for event, t in it:
        evolve(state, event, t)
    return state
