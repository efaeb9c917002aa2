"""The match machine: ``decide(state, command, now) -> Decision``, pure and total.

Every input of a match (a bot connecting or leaving, an action, a timer firing, a cancel,
a restart) is a ``common.Command``; the machine answers with the events it causes and the
state after them (the fold of those events, built with ``evolve``). It owns turn ids, the
deadlines, the time bank, strikes, the out-of-turn limit, default actions and their causes,
hand and match end. It reads no clock and does no I/O: ``now`` (microseconds) is given,
and the timers it needs are read from ``state.due()`` by whoever runs it.

The server logs each decision's command and events before it acts on them; ``verify``
decides every logged command again and checks that the log holds exactly these events.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from collections.abc import Callable, Sequence

from referee.match.actions import MAX_CARD_TEXT, check_action, default_action
from referee.match.settings import MatchSettings
from referee.match.state import (
    STRIKE_CAUSES,
    EvolveError,
    MachineState,
    Phase,
    TurnState,
    evolve,
    initial_state,
)
from referee.protocol import common, play_service
from referee.protocol.convert import (
    KIND_TO_PB,
    REASON_TO_PB,
    card_list,
    seat_cards,
    set_ts,
    standings_pb,
)
from referee.rules import HAND_SIZE, SEATS, Action, Reason, card_text, deal, seed_commitment

MAX_REASON_CHARS = 500
"""Cancel reasons and disconnect causes are cut to this length."""
MAX_BOT_NAME_CHARS = 100
MAX_ELAPSED_MS = 2**32 - 1


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """A connect the machine did not accept; nothing is logged for it."""

    reason: play_service.RefusalReason.ValueType
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """What one command caused: the events (to log, in order) and the state after them."""

    command: common.Command
    now: int
    events: tuple[common.Event, ...]
    state: MachineState
    refusal: Refusal | None = None


def token_hash(salt: str, token: str) -> str:
    """The logged form of a seat token (never the token itself)."""
    return hashlib.sha256((salt + token).encode("utf-8")).hexdigest()


def create(
    match_id: str,
    settings: MatchSettings,
    now: int,
    tokens: Sequence[str],
    *,
    software_version: str,
    protocol_version: int,
    salt: str | None = None,
) -> Decision:
    """The first decision of a match: its match_created event and the state after it."""
    salt = salt if salt is not None else secrets.token_hex(16)
    event = common.Event(
        match_created=common.MatchCreated(
            config=settings.config_pb(),
            seed_commitment=seed_commitment(settings.seed),
            software_version=software_version,
            protocol_version=protocol_version,
            token_salt=salt,
            token_hashes=[token_hash(salt, t) for t in tokens],
        )
    )
    state = initial_state(match_id, event.match_created, now, settings.seed)
    command = common.Command(create=common.CreateCommand())
    return Decision(command, now, (event,), state)


Observer = Callable[[common.Event, MachineState], None]
"""Called with each event of a decision and the state right after it (to build messages)."""


def decide(
    state: MachineState, command: common.Command, now: int, observe: Observer | None = None
) -> Decision:
    """The events ``command`` causes at time ``now`` (never earlier than the last event).

    A timer that is due fires first (one per command), so an answer that arrives after
    its deadline is judged after the timeout it came too late for; a restart voids the
    timers instead (the referee was down, not the bots). ``state`` is left as
    it was; ``observe`` sees each event with the state right after it.
    """
    now = max(now, state.clock)
    d = _Decider(state.clone(), now, observe)
    kind = command.WhichOneof("kind")
    if kind != "restart":  # the referee was down: no seat is late for that
        d.fire_due()
    if kind == "connect":
        d.connect(command.connect)
    elif kind == "disconnect":
        d.disconnect(command.disconnect.seat, command.disconnect.cause, command.disconnect.gone)
    elif kind == "action":
        d.action(command.action)
    elif kind == "cancel":
        d.cancel(command.cancel.reason)
    elif kind == "restart":
        d.restart(command.restart)
    elif kind != "timer":
        raise ValueError(f"the machine takes no {kind} command here")
    return Decision(command, now, tuple(d.events), d.s, d.refusal)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Decider:
    """Builds one decision: each event is evolved into the working state as it is made."""

    def __init__(self, state: MachineState, now: int, observe: Observer | None) -> None:
        self.s = state
        self.now = now
        self.observe = observe
        self.events: list[common.Event] = []
        self.refusal: Refusal | None = None

    def emit(self, event: common.Event) -> None:
        self.events.append(event)
        evolve(self.s, event, self.now)
        if self.observe is not None:
            self.observe(event, self.s)

    # -- timers -----------------------------------------------------------------

    def fire_due(self) -> None:
        due = self.s.due()
        if due is None or due > self.now:
            return
        if self.s.phase is Phase.WAITING:
            self.connect_limit_passed()
            return
        turn = self.s.turn
        assert turn is not None
        if turn.prompted:
            self.default(common.DEFAULT_CAUSE_TIMEOUT)
        elif self.s.seats[turn.seat].benched:
            self.default(common.DEFAULT_CAUSE_STRIKE_LIMIT)
        else:
            self.default(common.DEFAULT_CAUSE_DISCONNECTED)

    def connect_limit_passed(self) -> None:
        if not any(seat.ever_connected for seat in self.s.seats):
            self.end(
                common.MATCH_STATUS_CANCELLED,
                "no bot connected within the connect time limit",
            )
            return
        self.deal()

    # -- the flow of a match ----------------------------------------------------

    def deal(self) -> None:
        rules = self.s.rules
        number = rules.hand_number + 1
        hands = deal(self.s.settings.seed, number)
        leader, must = rules.leader_for(hands)
        order = self.s.settings.rules.suit_order
        self.emit(
            common.Event(
                hand_dealt=common.HandDealt(
                    hand_number=number,
                    hands=seat_cards(hands, order),
                    leader=leader,
                    must_include=card_text(must.bit_length() - 1) if must else "",
                )
            )
        )
        self.begin_turn()

    def begin_turn(self) -> None:
        """The turn just moved (the state holds it as pending): prompt a present seat."""
        turn = self.s.turn
        if turn is None:
            return
        seat = self.s.seats[turn.seat]
        if seat.connected and not seat.benched:
            self.prompt(turn)

    def prompt(self, turn: TurnState) -> None:
        seat = self.s.seats[turn.seat]
        started = common.TurnStarted(
            turn_id=turn.turn_id, seat=turn.seat, time_bank_ms=seat.bank_us // 1000
        )
        set_ts(started.deadline, self.now + self.s.settings.turn_time_for(turn.seat) * 1000)
        self.emit(common.Event(turn_started=started))
        drill = self.s.settings.drill_disconnect_after_prompts
        if drill and seat.prompts == drill:
            self.disconnect(turn.seat, "drill: the referee closed the stream on purpose")

    def default(self, cause: common.DefaultCause.ValueType) -> None:
        hand = self.s.rules.hand
        assert hand is not None
        self.apply(default_action(hand), cause)

    def apply(self, action: Action, cause: common.DefaultCause.ValueType) -> None:
        """Log a legal action of the seat to act, then what follows from it."""
        turn = self.s.turn
        assert turn is not None
        since = turn.started if turn.prompted else turn.began
        elapsed = min(MAX_ELAPSED_MS, max(0, (self.now - since) // 1000))
        seat = turn.seat
        order = self.s.settings.rules.suit_order
        if action.is_pass:
            event = common.Event(
                passed=common.Passed(
                    turn_id=turn.turn_id, seat=seat, elapsed_ms=elapsed, default_cause=cause
                )
            )
        else:
            event = common.Event(
                played=common.Played(
                    turn_id=turn.turn_id,
                    seat=seat,
                    play=common.Play(cards=card_list(action.cards, order)),
                    elapsed_ms=elapsed,
                    default_cause=cause,
                )
            )
        self.events.append(event)
        applied = evolve(self.s, event, self.now)
        assert applied is not None
        outcome, result = applied.outcome, applied.result
        strikes = self.s.seats[seat].strikes
        hand = self.s.rules.hand
        assert hand is not None
        if action.is_pass:
            event.passed.strikes = strikes
            event.passed.forced_lead_pass = outcome.forced_lead_pass
        else:
            pl = event.played
            assert outcome.kind is not None
            pl.play.combination = KIND_TO_PB[outcome.kind]
            pl.strikes = strikes
            pl.revolution = hand.revolution
            pl.cards_left = hand.hands[seat].bit_count()
        if self.observe is not None:
            self.observe(event, self.s)
        if outcome.trick_cleared:
            cleared = common.TrickCleared(leader=outcome.next_seat or 0)
            self.emit(common.Event(trick_cleared=cleared))
        if result is None:
            self.begin_turn()
            return
        self.emit(
            common.Event(
                hand_ended=common.HandEnded(
                    hand_number=result.hand_number,
                    winner=result.winner,
                    hands=seat_cards(result.cards_left, order),
                    scores=list(result.scores),
                    totals=list(result.totals),
                )
            )
        )
        if self.s.rules.over:
            self.end(common.MATCH_STATUS_FINISHED, "")
        else:
            self.deal()

    def end(self, status: common.MatchStatus.ValueType, reason: str) -> None:
        rules = self.s.rules
        self.emit(
            common.Event(
                match_ended=common.MatchEnded(
                    status=status,
                    standings=standings_pb(rules.standings()),
                    seed=self.s.settings.seed,
                    totals=list(rules.totals),
                    cancel_reason=reason,
                    strikes=[seat.strikes for seat in self.s.seats],
                )
            )
        )

    # -- commands ---------------------------------------------------------------

    def connect(self, cmd: common.ConnectCommand) -> None:
        if not 0 <= cmd.seat < SEATS:
            raise EvolveError(f"no seat {cmd.seat}")
        seat = self.s.seats[cmd.seat]
        if self.s.phase is Phase.OVER:
            self.refusal = Refusal(play_service.REFUSAL_REASON_MATCH_OVER, "the match is over")
            return
        if seat.connected:
            self.refusal = Refusal(
                play_service.REFUSAL_REASON_SEAT_TAKEN,
                f"seat {cmd.seat} is held by another connection",
            )
            return
        self.emit(
            common.Event(
                seat_connected=common.SeatConnected(
                    seat=cmd.seat,
                    reconnect=seat.ever_connected,
                    bot_name=_clip(cmd.bot_name, MAX_BOT_NAME_CHARS),
                    want_legal_plays=cmd.want_legal_plays,
                    batch_events=cmd.batch_events,
                )
            )
        )
        if self.s.phase is Phase.WAITING:
            self.deal_if_all_there()
            return
        turn = self.s.turn
        if turn is not None and turn.seat == cmd.seat and not turn.prompted and not seat.benched:
            self.prompt(turn)

    def disconnect(self, seat_no: int, cause: str, gone: bool = False) -> None:
        """A stream that ended; ``gone``: the seat's bot is gone for good, which is news
        also when the seat is not connected."""
        if not 0 <= seat_no < SEATS or self.s.phase is Phase.OVER:
            return
        seat = self.s.seats[seat_no]
        if not seat.connected and not (gone and not seat.gone):
            return
        self.emit(
            common.Event(
                seat_disconnected=common.SeatDisconnected(
                    seat=seat_no, cause=_clip(cause, MAX_REASON_CHARS), gone=gone
                )
            )
        )
        turn = self.s.turn
        if turn is not None and turn.prompted and turn.seat == seat_no:
            self.default(common.DEFAULT_CAUSE_DISCONNECTED)
        elif gone and self.s.phase is Phase.WAITING:
            self.deal_if_all_there()

    def deal_if_all_there(self) -> None:
        """While connecting: deal once every seat is connected or its bot is gone (and
        one is connected); a match whose every bot is gone ends at once."""
        seats = self.s.seats
        if not all(s.connected or s.gone for s in seats):
            return
        if any(s.connected for s in seats):
            self.deal()
        else:
            self.end(common.MATCH_STATUS_CANCELLED, "no bot connected: every seat's bot is gone")

    def action(self, cmd: common.ActionCommand) -> None:
        if self.s.phase is Phase.OVER or not 0 <= cmd.seat < SEATS:
            return
        turn = self.s.turn
        if turn is not None and turn.prompted and turn.seat == cmd.seat:
            self.answer(turn, cmd)
        else:
            self.stray(cmd)

    def answer(self, turn: TurnState, cmd: common.ActionCommand) -> None:
        """The acting seat's action: legal, or a rejected attempt."""
        reason: common.RejectionReason.ValueType
        passed: bool = getattr(cmd, "pass")
        cards = None if passed else list(cmd.cards)
        if cmd.turn_id != turn.turn_id:
            reason = common.REJECTION_REASON_STALE_TURN
            message = f"turn {cmd.turn_id} is not the current turn ({turn.turn_id})"
        elif cmd.malformed:
            reason = common.REJECTION_REASON_MALFORMED_ACTION
            message = (
                f"send a play or a pass (a play has at most {HAND_SIZE} cards, "
                f"each named in at most {MAX_CARD_TEXT} characters)"
            )
        else:
            action, error = check_action(self.s.rules, cmd.seat, cards)
            if error is None and action is not None:
                self.apply(action, common.DEFAULT_CAUSE_UNSPECIFIED)
                return
            assert error is not None
            reason, message = REASON_TO_PB[error.reason], error.message
        self.reject(cmd, reason, message, attempt=turn.rejections + 1, since=turn.started)
        limit = self.s.settings.max_rejections_per_turn
        if self.s.turn is not None and self.s.turn.rejections >= limit:
            self.default(common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS)

    def stray(self, cmd: common.ActionCommand) -> None:
        """An action that answers no prompt in force."""
        seat = self.s.seats[cmd.seat]
        limit = self.s.settings.max_actions_out_of_turn
        if seat.out_of_turn >= limit:
            self.disconnect(
                cmd.seat,
                f"too many actions out of turn (more than {limit} since the last prompt)",
            )
            return
        hand = self.s.rules.hand
        late = False
        if cmd.turn_id and cmd.turn_id == seat.last_prompt == seat.timed_out_turn:
            reason = common.REJECTION_REASON_STALE_TURN
            message = f"turn {cmd.turn_id} timed out before this answer arrived"
            late = True
        elif hand is not None and hand.locked[cmd.seat]:
            reason = REASON_TO_PB[Reason.LOCKED_OUT]
            message = "you are locked out until the next lead"
        elif cmd.turn_id and cmd.turn_id == seat.last_prompt:
            reason = common.REJECTION_REASON_STALE_TURN
            message = f"turn {cmd.turn_id} is over; wait for your next prompt"
        else:
            turn = self.s.turn
            whose = f"seat {turn.seat}'s" if turn is not None else "no one's"
            reason, message = REASON_TO_PB[Reason.NOT_YOUR_TURN], f"it is {whose} turn"
        self.reject(cmd, reason, message, attempt=0, since=None, late=late)

    def reject(
        self,
        cmd: common.ActionCommand,
        reason: common.RejectionReason.ValueType,
        message: str,
        *,
        attempt: int,
        since: int | None,
        late: bool = False,
    ) -> None:
        elapsed = 0 if since is None else min(MAX_ELAPSED_MS, max(0, (self.now - since) // 1000))
        rejected = common.ActionRejected(
            turn_id=cmd.turn_id,
            seat=cmd.seat,
            cards=[] if cmd.malformed else list(cmd.cards),
            reason=reason,
            message=message,
            elapsed_ms=elapsed,
            attempt=attempt,
            late=late,
        )
        passed: bool = getattr(cmd, "pass")
        setattr(rejected, "pass", passed and not cmd.malformed)
        self.emit(common.Event(action_rejected=rejected))

    def cancel(self, reason: str) -> None:
        if self.s.phase is Phase.OVER:
            return
        self.end(common.MATCH_STATUS_CANCELLED, _clip(reason or "cancelled", MAX_REASON_CHARS))

    def restart(self, cmd: common.RestartCommand) -> None:
        if self.s.phase is Phase.OVER:
            return
        self.emit(
            common.Event(
                referee_restarted=common.RefereeRestarted(
                    software_version=cmd.software_version,
                    torn_bytes=cmd.torn_bytes,
                    cut_entries=cmd.cut_entries,
                )
            )
        )


__all__ = ["STRIKE_CAUSES", "Decision", "Refusal", "create", "decide", "token_hash"]
