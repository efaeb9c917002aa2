"""One match, owned by one asyncio task.

RPC handlers never touch the match: they put commands (a Hello, an Action, a closed
stream, a cancel) on the runner's queue. The runner applies each decision to the rules
state and appends the resulting event to the log in the same step, then fans it out to
the seats and spectators with hidden cards removed. Every wait on a bot has a deadline.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from referee import __version__
from referee.actions import MAX_CARD_TEXT, check_action, default_action
from referee.log.reader import read_log
from referee.log.visibility import for_seat, for_spectator
from referee.log.writer import EventLogWriter
from referee.protocol import PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, common, play_service
from referee.protocol.convert import (
    REASON_TO_PB,
    play_pb,
    seat_cards,
    standings_pb,
)
from referee.rules import (
    HAND_SIZE,
    SEATS,
    Action,
    MatchState,
    Reason,
    card_text,
    deal,
    seed_commitment,
)
from referee.server.session import (
    ActionCmd,
    CancelCmd,
    Command,
    GoneCmd,
    HelloCmd,
    MatchCancelled,
    SeatSlot,
    Session,
    Turn,
)
from referee.server.settings import MatchSettings
from referee.server.views import hand_text, public_state, turn_prompt

__all__ = [
    "ActionCmd",
    "CancelCmd",
    "Command",
    "GoneCmd",
    "HelloCmd",
    "MatchCancelled",
    "MatchRunner",
    "Session",
]

log = structlog.get_logger("referee.match")

STRIKE_CAUSES = (common.DEFAULT_CAUSE_TIMEOUT, common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS)


class MatchRunner:
    """Plays one match to its end; the only code that changes its state."""

    def __init__(self, match_id: str, settings: MatchSettings, log_dir: Path) -> None:
        self.match_id = match_id
        self.settings = settings
        self.rules = settings.rules
        self.order = settings.rules.suit_order
        self.log_path = log_dir / f"{match_id}.jsonl"
        self.commitment = seed_commitment(settings.seed)
        self.seats = [
            SeatSlot(s, settings.seat_names[s], secrets.token_hex(24), settings.time_bank_ms)
            for s in range(SEATS)
        ]
        self.match = MatchState(self.rules)
        self.status: common.MatchStatus.ValueType = common.MATCH_STATUS_WAITING
        self.commands: asyncio.Queue[Command] = asyncio.Queue()
        self.turn: Turn | None = None
        self.turn_counter = 0
        self.trick: list[common.TrickPlay] = []
        self.played_mask = 0
        self.events: list[tuple[int, common.Event]] = []
        """Every event so far, while the match runs; once it is over, its log serves them."""
        self.spectators: list[asyncio.Queue[tuple[int, common.Event] | None]] = []
        self.standings: list[common.Standing] = []
        self.created = time.time()
        self.log: EventLogWriter | None = None
        self.task: asyncio.Task[None] | None = None
        self.done = asyncio.Event()
        self._loop_time = asyncio.get_running_loop().time

    # -- API used by the registry and the RPC handlers (no state changes) ---------

    def start(self) -> None:
        self.log = EventLogWriter(self.log_path, self.match_id)
        self._emit(
            common.Event(
                match_created=common.MatchCreated(
                    config=self.settings.config_pb(),
                    seed_commitment=self.commitment,
                    software_version=__version__,
                    protocol_version=PROTOCOL_VERSION,
                )
            )
        )
        self.task = asyncio.create_task(self._run(), name=f"match {self.match_id}")

    def submit(self, cmd: Command) -> None:
        self.commands.put_nowait(cmd)

    @property
    def tokens(self) -> list[str]:
        return [slot.token for slot in self.seats]

    def is_over(self) -> bool:
        return self.status in (common.MATCH_STATUS_FINISHED, common.MATCH_STATUS_CANCELLED)

    def subscribe(self, from_start: bool) -> asyncio.Queue[tuple[int, common.Event] | None]:
        """A queue of public events (seq, event); None marks the end of the match.

        For a match that is over, ``from_start`` reads its log: OSError or LogFormatError
        when the file is gone or damaged.
        """
        queue: asyncio.Queue[tuple[int, common.Event] | None] = asyncio.Queue()
        if from_start:
            events = self.events
            if self.is_over():
                events = [(ln.entry.seq, ln.entry.event) for ln in read_log(self.log_path).lines]
            for seq, event in events:
                public = for_spectator(event)
                if public is not None:
                    queue.put_nowait((seq, public))
        if self.is_over():
            queue.put_nowait(None)
        else:
            self.spectators.append(queue)
        return queue

    # -- the match task -----------------------------------------------------------

    async def _run(self) -> None:
        structlog.contextvars.bind_contextvars(match_id=self.match_id)
        log.info("match started", profile=self.rules.profile, log=str(self.log_path))
        status = common.MATCH_STATUS_FINISHED
        cancel_reason = ""
        try:
            await self._connect_phase()
            self.status = common.MATCH_STATUS_RUNNING
            while not self.match.over:
                await self._play_hand()
        except MatchCancelled as exc:
            status, cancel_reason = common.MATCH_STATUS_CANCELLED, exc.reason
        except asyncio.CancelledError:
            status, cancel_reason = common.MATCH_STATUS_CANCELLED, "server stopped"
            raise
        except Exception:
            log.exception("match failed")
            status, cancel_reason = common.MATCH_STATUS_CANCELLED, "internal error"
        finally:
            self._finish(status, cancel_reason)

    async def _next_command(self, until: float | None) -> Command | None:
        """The next command, or None once the loop clock passes ``until``."""
        if until is None:
            return await self.commands.get()
        timeout = until - self._loop_time()
        if timeout <= 0:
            try:
                return self.commands.get_nowait()
            except asyncio.QueueEmpty:
                return None
        try:
            return await asyncio.wait_for(self.commands.get(), timeout)
        except TimeoutError:
            return None

    async def _connect_phase(self) -> None:
        until = self._loop_time() + self.settings.connect_timeout_ms / 1000
        while not all(slot.session for slot in self.seats):
            cmd = await self._next_command(until)
            if cmd is None:
                missing = [s.seat for s in self.seats if s.session is None]
                log.warning("connect time limit passed", missing_seats=missing)
                return
            self._handle(cmd)

    async def _play_hand(self) -> None:
        number = self.match.hand_number + 1
        hands = deal(self.settings.seed, number)
        hand = self.match.start_hand(hands)
        self.trick = []
        self.played_mask = 0
        self._emit(
            common.Event(
                hand_dealt=common.HandDealt(
                    hand_number=number,
                    hands=seat_cards(hands, self.order),
                    leader=hand.turn or 0,
                    must_include=card_text(hand.must_include.bit_length() - 1)
                    if hand.must_include
                    else "",
                )
            )
        )
        while not hand.is_over:
            await self._play_turn()

    async def _play_turn(self) -> None:
        hand = self.match.hand
        assert hand is not None and hand.turn is not None
        seat = hand.turn
        slot = self.seats[seat]
        self.turn_counter += 1
        now = self._loop_time()
        turn = Turn(self.turn_counter, seat, now, now + self.settings.turn_time_ms / 1000)
        self.turn = turn
        try:
            if slot.benched or slot.session is None:
                # Yield and take queued commands first, so that a reconnect is seen and
                # other matches are served while absent seats are played by default.
                await asyncio.sleep(0)
                self._drain_commands()
                await self._grace_for_reconnect(slot, turn)
            if slot.benched or slot.session is None:
                cause = common.DEFAULT_CAUSE_STRIKE_LIMIT
                if not slot.benched:
                    cause = common.DEFAULT_CAUSE_DISCONNECTED
                self._apply_default(turn, cause)
                return
            deadline_wall = datetime.now(UTC) + timedelta(milliseconds=self.settings.turn_time_ms)
            started = common.TurnStarted(turn_id=turn.turn_id, seat=seat, time_bank_ms=slot.bank_ms)
            started.deadline.FromDatetime(deadline_wall)
            self._emit(common.Event(turn_started=started))
            slot.last_prompt = turn.turn_id
            slot.prompts += 1
            slot.out_of_turn = 0
            prompt = turn_prompt(self.match, turn, started, self.settings, slot, self._state())
            slot.session.send(play_service.PlayResponse(prompt=prompt))
            drill = self.settings.drill_disconnect_after_prompts
            if drill and slot.prompts >= drill and not slot.drilled:
                slot.drilled = True
                self._on_gone(
                    GoneCmd(slot.session, "drill: the referee closed the stream on purpose")
                )
            while slot.session is not None:
                cmd = await self._next_command(turn.deadline + slot.bank_ms / 1000)
                if cmd is None:
                    slot.bank_ms = 0
                    self._apply_default(turn, common.DEFAULT_CAUSE_TIMEOUT)
                    return
                if isinstance(cmd, ActionCmd) and cmd.session is slot.session and slot.session:
                    if self._on_turn_action(turn, slot, cmd):
                        return
                    continue
                self._handle(cmd)
            # The seat's stream closed during its turn.
            self._apply_default(turn, common.DEFAULT_CAUSE_DISCONNECTED)
        finally:
            self.turn = None

    async def _grace_for_reconnect(self, slot: SeatSlot, turn: Turn) -> None:
        """Wait a little for a seat that just lost its stream to come back."""
        if slot.benched or slot.disconnected_at is None:
            return
        grace_end = slot.disconnected_at + self.settings.reconnect_grace_ms / 1000
        until = min(grace_end, turn.deadline)
        while slot.session is None:
            cmd = await self._next_command(until)
            if cmd is None:
                return
            self._handle(cmd)
        now = self._loop_time()
        turn.started, turn.deadline = now, now + self.settings.turn_time_ms / 1000

    def _drain_commands(self) -> None:
        while True:
            try:
                cmd = self.commands.get_nowait()
            except asyncio.QueueEmpty:
                return
            self._handle(cmd)

    def _on_turn_action(self, turn: Turn, slot: SeatSlot, cmd: ActionCmd) -> bool:
        """Handle the acting seat's answer; True when the turn is over."""
        act = cmd.action
        elapsed = int((cmd.received - turn.started) * 1000)
        kind = act.WhichOneof("kind")
        cards: list[str] | None = list(act.play.cards) if kind == "play" else None
        reason: common.RejectionReason.ValueType
        if act.turn_id != turn.turn_id:
            reason, message = (
                common.REJECTION_REASON_STALE_TURN,
                f"turn {act.turn_id} is not the current turn ({turn.turn_id})",
            )
        elif kind is None:
            reason, message = (
                common.REJECTION_REASON_MALFORMED_ACTION,
                f"send a play or a pass (a play has at most {HAND_SIZE} cards, "
                f"each named in at most {MAX_CARD_TEXT} characters)",
            )
        else:
            action, error = check_action(self.match, slot.seat, cards)
            if error is None and action is not None:
                over = cmd.received - turn.deadline
                if over > 0:
                    slot.bank_ms = max(0, slot.bank_ms - int(over * 1000))
                self._send_result(
                    slot, turn.turn_id, True, common.REJECTION_REASON_UNSPECIFIED, "", turn
                )
                self._apply(turn, action, elapsed, common.DEFAULT_CAUSE_UNSPECIFIED)
                return True
            assert error is not None
            reason, message = REASON_TO_PB[error.reason], error.message
        turn.rejections += 1
        self._emit(
            common.Event(
                action_rejected=common.ActionRejected(
                    turn_id=act.turn_id,
                    seat=slot.seat,
                    cards=cards or [],
                    **{"pass": kind == "pass"},
                    reason=reason,
                    message=message,
                    elapsed_ms=max(0, elapsed),
                    attempt=turn.rejections,
                )
            )
        )
        self._send_result(slot, act.turn_id, False, reason, message, turn)
        if turn.rejections >= self.settings.max_rejections_per_turn:
            self._apply_default(turn, common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS)
            return True
        return False

    def _send_result(
        self,
        slot: SeatSlot,
        turn_id: int,
        accepted: bool,
        reason: common.RejectionReason.ValueType,
        message: str,
        turn: Turn | None,
    ) -> None:
        if slot.session is None:
            return
        left = 0
        if turn is not None and turn.seat == slot.seat:
            left = max(0, self.settings.max_rejections_per_turn - turn.rejections)
        slot.session.send(
            play_service.PlayResponse(
                result=play_service.ActionResult(
                    turn_id=turn_id,
                    accepted=accepted,
                    reason=reason,
                    message=message,
                    attempts_left=left,
                )
            )
        )

    def _apply_default(self, turn: Turn, cause: common.DefaultCause.ValueType) -> None:
        hand = self.match.hand
        assert hand is not None
        slot = self.seats[turn.seat]
        if cause in STRIKE_CAUSES:
            slot.strikes += 1
            limit = self.settings.max_strikes
            if limit and slot.strikes >= limit and not slot.benched:
                slot.benched = True
                log.warning("strike limit reached", seat=turn.seat, strikes=slot.strikes)
        elapsed = int((self._loop_time() - turn.started) * 1000)
        self._apply(turn, default_action(hand), elapsed, cause)

    def _apply(
        self, turn: Turn, action: Action, elapsed_ms: int, cause: common.DefaultCause.ValueType
    ) -> None:
        """Apply an action to the rules state and log its events, in one step."""
        seat = turn.seat
        outcome, result = self.match.apply(seat, action)
        strikes = self.seats[seat].strikes
        hand = self.match.hand
        assert hand is not None
        if action.is_pass:
            passed = common.TrickPlay(seat=seat)
            setattr(passed, "pass", True)
            self.trick.append(passed)
            self._emit(
                common.Event(
                    passed=common.Passed(
                        turn_id=turn.turn_id,
                        seat=seat,
                        elapsed_ms=max(0, elapsed_ms),
                        default_cause=cause,
                        strikes=strikes,
                        forced_lead_pass=outcome.forced_lead_pass,
                    )
                )
            )
        else:
            play = play_pb(action.cards, outcome.kind, self.order)
            self.played_mask |= action.cards
            self.trick.append(common.TrickPlay(seat=seat, play=play))
            self._emit(
                common.Event(
                    played=common.Played(
                        turn_id=turn.turn_id,
                        seat=seat,
                        play=play,
                        elapsed_ms=max(0, elapsed_ms),
                        default_cause=cause,
                        strikes=strikes,
                        revolution=hand.revolution,
                        cards_left=hand.hands[seat].bit_count(),
                    )
                )
            )
        if cause != common.DEFAULT_CAUSE_UNSPECIFIED:
            log.info("default action", seat=seat, cause=common.DefaultCause.Name(cause))
        if outcome.trick_cleared:
            self.trick = []
            self._emit(
                common.Event(trick_cleared=common.TrickCleared(leader=outcome.next_seat or 0))
            )
        if result is not None:
            self._emit(
                common.Event(
                    hand_ended=common.HandEnded(
                        hand_number=result.hand_number,
                        winner=result.winner,
                        hands=seat_cards(result.cards_left, self.order),
                        scores=list(result.scores),
                        totals=list(result.totals),
                    )
                )
            )

    # -- commands that can arrive at any time -------------------------------------

    def _handle(self, cmd: Command) -> None:
        if isinstance(cmd, HelloCmd):
            self._on_hello(cmd)
        elif isinstance(cmd, ActionCmd):
            self._on_stray_action(cmd)
        elif isinstance(cmd, GoneCmd):
            self._on_gone(cmd)
        else:
            raise MatchCancelled(cmd.reason)

    def _refuse(
        self, session: Session, reason: play_service.RefusalReason.ValueType, message: str
    ) -> None:
        session.send(
            play_service.PlayResponse(
                refusal=play_service.Refusal(
                    reason=reason,
                    message=message,
                    supported_versions=list(SUPPORTED_PROTOCOL_VERSIONS),
                )
            )
        )
        session.close()

    def _on_hello(self, cmd: HelloCmd) -> None:
        slot = self.seats[cmd.seat]
        hello = cmd.hello
        if hello.protocol_version not in SUPPORTED_PROTOCOL_VERSIONS:
            self._refuse(
                cmd.session,
                play_service.REFUSAL_REASON_VERSION_NOT_SUPPORTED,
                f"protocol version {hello.protocol_version} is not supported",
            )
            return
        if self.is_over():
            self._refuse(cmd.session, play_service.REFUSAL_REASON_MATCH_OVER, "the match is over")
            return
        if slot.session is not None:
            self._refuse(
                cmd.session,
                play_service.REFUSAL_REASON_SEAT_TAKEN,
                f"seat {slot.seat} is held by another connection",
            )
            return
        reconnect = slot.ever_connected
        slot.session = cmd.session
        slot.ever_connected = True
        slot.want_legal_plays = hello.want_legal_plays
        cmd.session.seat = slot.seat
        cmd.session.send(
            play_service.PlayResponse(
                welcome=play_service.Welcome(
                    seat=slot.seat,
                    match_id=self.match_id,
                    config=self.settings.config_pb(),
                    protocol_version=PROTOCOL_VERSION,
                    reconnect=reconnect,
                    seed_commitment=self.commitment,
                )
            )
        )
        cmd.session.send(
            play_service.PlayResponse(
                snapshot=play_service.Snapshot(
                    state=self._state(),
                    hand=hand_text(self.match, slot.seat, self.order),
                )
            )
        )
        self._emit(
            common.Event(
                seat_connected=common.SeatConnected(
                    seat=slot.seat, reconnect=reconnect, bot_name=hello.bot_name[:100]
                )
            )
        )
        log.info("seat connected", seat=slot.seat, reconnect=reconnect, bot=hello.bot_name[:100])

    def _on_gone(self, cmd: GoneCmd) -> None:
        seat = cmd.session.seat
        cmd.session.close()
        if seat is None or self.seats[seat].session is not cmd.session:
            return
        self.seats[seat].session = None
        self.seats[seat].disconnected_at = self._loop_time()
        self._emit(
            common.Event(seat_disconnected=common.SeatDisconnected(seat=seat, cause=cmd.cause))
        )
        log.info("seat disconnected", seat=seat, cause=cmd.cause)

    def _on_stray_action(self, cmd: ActionCmd) -> None:
        """An action that is not the acting seat's answer to the current prompt."""
        seat = cmd.session.seat
        act = cmd.action
        if seat is None or self.seats[seat].session is not cmd.session:
            cmd.session.send(
                play_service.PlayResponse(
                    result=play_service.ActionResult(
                        turn_id=act.turn_id,
                        accepted=False,
                        reason=common.REJECTION_REASON_NOT_SEAT_HOLDER,
                        message="this stream holds no seat: send a Hello first",
                    )
                )
            )
            return
        slot = self.seats[seat]
        if slot.out_of_turn >= self.settings.max_actions_out_of_turn:
            self._on_gone(
                GoneCmd(
                    cmd.session,
                    f"too many actions out of turn (more than "
                    f"{self.settings.max_actions_out_of_turn} since the last prompt)",
                )
            )
            return
        slot.out_of_turn += 1
        hand = self.match.hand
        if self.is_over():
            code, message = REASON_TO_PB[Reason.MATCH_OVER], "the match is over"
        elif hand is not None and hand.locked[seat]:
            code, message = (
                REASON_TO_PB[Reason.LOCKED_OUT],
                "you are locked out until the next lead",
            )
        elif act.turn_id and act.turn_id == slot.last_prompt:
            code, message = (
                common.REJECTION_REASON_STALE_TURN,
                f"turn {act.turn_id} is over; wait for your next prompt",
            )
        else:
            whose = (
                f"seat {hand.turn}'s" if hand is not None and hand.turn is not None else "no one's"
            )
            code, message = REASON_TO_PB[Reason.NOT_YOUR_TURN], f"it is {whose} turn"
        kind = act.WhichOneof("kind")
        self._emit(
            common.Event(
                action_rejected=common.ActionRejected(
                    turn_id=act.turn_id,
                    seat=seat,
                    cards=list(act.play.cards) if kind == "play" else [],
                    **{"pass": kind == "pass"},
                    reason=code,
                    message=message,
                )
            )
        )
        self._send_result(slot, act.turn_id, False, code, message, None)

    def _state(self) -> common.PublicState:
        strikes = [slot.strikes for slot in self.seats]
        return public_state(
            self.match_id, self.match, strikes, self.trick, self.played_mask, self.order
        )

    # -- events -------------------------------------------------------------------

    def _emit(self, event: common.Event) -> None:
        """Append to the log first, then send to everyone allowed to see it."""
        assert self.log is not None
        entry = self.log.append(event)
        self.events.append((entry.seq, event))
        for slot in self.seats:
            if slot.session is not None:
                visible = for_seat(event, slot.seat)
                if visible is not None:
                    slot.session.send(play_service.PlayResponse(event=visible))
        if self.spectators:
            public = for_spectator(event)
            if public is not None:
                for queue in self.spectators:
                    queue.put_nowait((entry.seq, public))

    def _finish(self, status: common.MatchStatus.ValueType, cancel_reason: str) -> None:
        standings = standings_pb(self.match.standings())
        self.standings = standings
        self.status = status
        try:
            self._emit(
                common.Event(
                    match_ended=common.MatchEnded(
                        status=status,
                        standings=standings,
                        seed=self.settings.seed,
                        totals=list(self.match.totals),
                        cancel_reason=cancel_reason,
                        strikes=[slot.strikes for slot in self.seats],
                    )
                )
            )
        finally:
            if self.log is not None:
                self.log.close()
            # A server plays thousands of matches: a finished one is served from its log.
            self.events = []
            for slot in self.seats:
                if slot.session is not None:
                    slot.session.close()
                    slot.session = None
            for queue in self.spectators:
                queue.put_nowait(None)
            self.spectators.clear()
            while not self.commands.empty():  # hellos that raced with the end
                cmd = self.commands.get_nowait()
                if isinstance(cmd, HelloCmd):
                    self._refuse(
                        cmd.session, play_service.REFUSAL_REASON_MATCH_OVER, "the match is over"
                    )
            self.done.set()
            log.info(
                "match ended",
                status=common.MatchStatus.Name(status),
                totals=list(self.match.totals),
                cancel_reason=cancel_reason or None,
            )
