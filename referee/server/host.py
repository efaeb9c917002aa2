"""The async shell around one match: one task that queues commands, arms the machine's
timer, appends each decision to the log, then adopts its state and delivers it.

Nothing here decides anything: ``referee.match.machine`` does. What each seat and
spectator is sent is computed by ``referee.match.observer`` from the events and the state
at each event. A log write that fails ends the match cleanly (streams closed with
UNAVAILABLE, the failure kept for GetMatch); a reader that falls behind is cut off.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import time
from collections.abc import Callable

import grpc
import structlog

from referee.log.writer import EventLogWriter, LogWriteError
from referee.match import observer
from referee.match.machine import Decision, decide
from referee.match.state import MachineState
from referee.protocol import SUPPORTED_PROTOCOL_VERSIONS, common, play_service
from referee.server.metrics import MatchMetrics
from referee.server.sessions import Session, Spectator, StreamEnd

log = structlog.get_logger("referee.match")

DEFAULT_MAX_LOG_BYTES = 64 * 1024 * 1024
DRAIN_WAIT_S = 2.0
"""How long a backlogged reader has to catch up before a decision no bot waits for."""


class Clock:
    """Microseconds on the wall clock's scale that never go back (monotonic since start)."""

    def __init__(self) -> None:
        self._wall = time.time_ns() // 1000
        self._mono = time.monotonic_ns() // 1000

    def now(self) -> int:
        return self._wall + time.monotonic_ns() // 1000 - self._mono


@dataclasses.dataclass(slots=True)
class Inbound:
    """A command for the match, when it arrived, and the stream it came on (if any)."""

    command: common.Command
    at: int
    session: Session | None = None


TIMER = common.Command(timer=common.TimerCommand())


def cancel_command(reason: str) -> common.Command:
    return common.Command(cancel=common.CancelCommand(reason=reason))


def refusal(
    reason: play_service.RefusalReason.ValueType, message: str
) -> play_service.PlayResponse:
    return play_service.PlayResponse(
        refusal=play_service.Refusal(
            reason=reason, message=message, supported_versions=list(SUPPORTED_PROTOCOL_VERSIONS)
        )
    )


class _Plan:
    """The messages of one decision, built as the machine makes each event and sent only
    once the decision is in the log."""

    def __init__(self, host: MatchHost, inbound: Inbound) -> None:
        self.host = host
        self.inbound = inbound
        self.sessions = list(host.sessions)
        self.sends: list[tuple[Session, play_service.PlayResponse]] = []
        self.public: list[tuple[int, common.Event]] = []
        self.closing: list[tuple[Session, StreamEnd]] = []

    def __call__(self, event: common.Event, state: MachineState) -> None:
        kind = event.WhichOneof("kind")
        if kind == "seat_connected":
            seat = event.seat_connected.seat
            new = self.inbound.session
            assert new is not None
            self.sessions[seat] = new
            self.sends.append(
                (
                    new,
                    play_service.PlayResponse(
                        welcome=observer.welcome(state, seat, event.seat_connected.reconnect)
                    ),
                )
            )
            self.sends.append(
                (new, play_service.PlayResponse(snapshot=observer.snapshot(state, seat)))
            )
        elif kind == "seat_disconnected":
            seat = event.seat_disconnected.seat
            gone = self.sessions[seat]
            if gone is not None:
                self.closing.append((gone, StreamEnd()))
            self.sessions[seat] = None
        elif kind == "turn_started":
            ts = event.turn_started
            target = self.sessions[ts.seat]
            if target is not None and state.turn is not None:
                prompt = observer.prompt(state, state.turn, ts)
                self.sends.append((target, play_service.PlayResponse(prompt=prompt)))
        result = observer.action_result(state, event)
        if result is not None and kind != "action_rejected":
            self._send_result(*result)
        shared = None  # one message for every seat that sees the event as it is
        for seat, session in enumerate(self.sessions):
            if session is None:
                continue
            visible = observer.for_seat(event, seat)
            if visible is None:
                continue
            if visible is not event:
                self.sends.append((session, play_service.PlayResponse(event=visible)))
                continue
            if shared is None:
                shared = play_service.PlayResponse(event=event)
            self.sends.append((session, shared))
        if result is not None and kind == "action_rejected":
            self._send_result(*result)
        public = observer.for_spectator(event)
        if public is not None:
            self.public.append((state.seq, public))

    def _send_result(self, seat: int, result: play_service.ActionResult) -> None:
        target = self.sessions[seat]
        if target is not None:
            self.sends.append((target, play_service.PlayResponse(result=result)))


@dataclasses.dataclass(eq=False)
class MatchHost:
    """Hosts one match until it is over; ``start`` its task, ``submit`` commands."""

    state: MachineState
    writer: EventLogWriter
    _: dataclasses.KW_ONLY
    clock: Clock
    max_log_bytes: int = DEFAULT_MAX_LOG_BYTES
    on_closed: Callable[[MatchHost], None] | None = None
    metrics: MatchMetrics | None = None

    def __post_init__(self) -> None:
        self.sessions: list[Session | None] = [None] * len(self.state.seats)
        self.spectators: set[Spectator] = set()
        self.queue: collections.deque[Inbound] = collections.deque()
        self._wake = asyncio.Event()
        self.failure = ""
        """Why the match stopped without its end in the log (a log write failed)."""
        self.task: asyncio.Task[None] | None = None
        self.done = asyncio.Event()
        self.on_turn: Callable[[int | None, bool], None] | None = None
        """Told of each change of turn (the seat, and whether the match is over) before
        the decision's messages are sent: the table runs a jailed bot on its turn only."""
        self._turn_heard: tuple[int | None, bool] = (None, False)

    @property
    def match_id(self) -> str:
        return self.state.match_id

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"match {self.match_id}")
        self.task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        # A task cancelled before its first step never runs its own ``finally``: close
        # here, or a server stopped right after start waits for ``done`` forever.
        if not self.done.is_set():
            self._close()

    def submit(self, command: common.Command, session: Session | None = None) -> None:
        self.queue.append(Inbound(command, self.clock.now(), session))
        self._wake.set()

    def submit_inbound(self, inbound: Inbound) -> None:
        self.queue.append(inbound)
        self._wake.set()

    def is_over(self) -> bool:
        return self.state.over or self.done.is_set()

    def suspend(self) -> None:
        """Stop the task without logging an end: the match resumes at the next start on
        this log folder (an upgrade, or a crash as far as the log can tell)."""
        if self.done.is_set() or self.state.over:
            return
        self.failure = "the referee stopped; the match resumes when it starts again"
        if self.task is not None:
            self.task.cancel()

    # -- the task -------------------------------------------------------------------

    async def _run(self) -> None:
        structlog.contextvars.bind_contextvars(match_id=self.match_id)
        try:
            while not self.state.over:
                inbound = await self._next()
                self.step(inbound)
        except LogWriteError as exc:
            self.failure = f"the match is stopped: {exc}"
            log.error("match stopped: its log cannot be written", error=str(exc))
        except asyncio.CancelledError:
            self._last_words("server stopped")
            raise
        except Exception:
            log.exception("match failed")
            self._last_words("internal error")
        finally:
            self._close()

    def _last_words(self, reason: str) -> None:
        """Log the match's end before the task goes (a stopping server, a bug)."""
        if self.state.over or self.failure:
            return
        try:
            self.step(
                Inbound(
                    common.Command(cancel=common.CancelCommand(reason=reason)), self.clock.now()
                )
            )
        except Exception as exc:  # the log itself is gone: a restart resumes the match
            self.failure = f"could not log the end of the match: {exc}"

    async def _next(self) -> Inbound:
        """The next queued command, or a timer command once the machine's timer is due."""
        while True:
            if self.queue:
                return self.queue.popleft()
            due = self.state.due()
            if due is not None:
                delay = (due - self.clock.now()) / 1_000_000
                if delay <= 0:
                    await self._pace()
                    if self.queue:
                        return self.queue.popleft()
                    return Inbound(TIMER, self.clock.now())
            self._wake.clear()
            timer = None
            if due is not None:  # wake at the due time, or earlier for a command
                timer = asyncio.get_running_loop().call_later(delay, self._wake.set)
            try:
                await self._wake.wait()
            finally:
                if timer is not None:
                    timer.cancel()

    async def _pace(self) -> None:
        """Before a decision no bot waits for (a default for an absent or benched seat),
        let the readers catch up: a match whose seats are all away would otherwise run
        faster than any stream can carry it. A reader that does not drain its backlog
        within DRAIN_WAIT_S is cut off."""
        await asyncio.sleep(0)  # let the other matches and streams run first
        seats = [s for s in self.sessions if s is not None and s.outbox.backlogged]
        watchers = [w for w in self.spectators if w.outbox.backlogged]
        if not seats and not watchers:
            return
        waits = [s.outbox.drained() for s in seats] + [w.outbox.drained() for w in watchers]
        tasks = [asyncio.ensure_future(w) for w in waits]
        _, pending = await asyncio.wait(tasks, timeout=DRAIN_WAIT_S)
        for task in pending:
            task.cancel()
        for session in seats:
            if session.outbox.backlogged and session.seated:
                self._cut_off(session)
        for watcher in watchers:
            if watcher.outbox.backlogged:
                self._drop(watcher)

    def _drop(self, spectator: Spectator) -> None:
        self.spectators.discard(spectator)
        spectator.outbox.close(
            StreamEnd(grpc.StatusCode.RESOURCE_EXHAUSTED, "too far behind the match")
        )

    def step(self, inbound: Inbound) -> Decision | None:
        """Decide one command, log it, adopt the state, deliver. Raises LogWriteError."""
        cmd = inbound.command
        kind = cmd.WhichOneof("kind")
        session = inbound.session
        if kind in ("action", "disconnect") and session is not None:
            seat = cmd.action.seat if kind == "action" else cmd.disconnect.seat
            if self.sessions[seat] is not session:
                if kind == "action":  # a stream that was replaced or never seated
                    session.send(
                        play_service.PlayResponse(
                            result=play_service.ActionResult(
                                turn_id=cmd.action.turn_id,
                                accepted=False,
                                reason=common.REJECTION_REASON_NOT_SEAT_HOLDER,
                                message="this stream holds no seat: send a Hello first",
                            )
                        )
                    )
                return None
        plan = _Plan(self, inbound)
        decision = decide(self.state, cmd, inbound.at, plan)
        if decision.refusal is not None and session is not None:
            session.send(refusal(decision.refusal.reason, decision.refusal.message))
            session.close()
            if self.metrics is not None:
                self.metrics.refused(decision.refusal.reason)
        if not decision.events:
            return decision
        started = time.perf_counter()
        self.writer.append(decision.events, decision.now, cmd)
        appended = time.perf_counter()
        self.state = decision.state
        self._deliver(plan)
        if self.metrics is not None:
            since = (self.clock.now() - inbound.at) / 1_000_000
            self.metrics.decided(decision, appended - started, since)
        if not self.state.over and self.writer.size > self.max_log_bytes:
            self.queue.appendleft(
                Inbound(
                    cancel_command(
                        f"the match log reached its size limit ({self.max_log_bytes} bytes)"
                    ),
                    decision.now,
                )
            )
        return decision

    def _deliver(self, plan: _Plan) -> None:
        for seat, session in enumerate(plan.sessions):
            if session is not None and self.sessions[seat] is not session:
                session.seated = True
        self.sessions = plan.sessions
        if self.on_turn is not None:
            self._tell_turn(self.on_turn)
        for session, msg in plan.sends:
            if not session.send(msg) and session.seated:
                self._cut_off(session)
        for session, end in plan.closing:
            session.close(end)
        for seq, event in plan.public:
            for spectator in list(self.spectators):
                if not spectator.outbox.put((seq, event)):
                    self._drop(spectator)
        if self.state.over:
            for session in self.sessions:
                if session is not None:
                    session.close()
            self.sessions = [None] * len(self.sessions)

    def _tell_turn(self, on_turn: Callable[[int | None, bool], None]) -> None:
        turn = self.state.turn
        heard = (turn.seat if turn is not None else None, self.state.over)
        if heard == self._turn_heard:
            return
        self._turn_heard = heard
        try:
            on_turn(*heard)
        except Exception:
            log.exception("the turn listener failed", match_id=self.match_id)

    def _cut_off(self, session: Session) -> None:
        """A seat that does not read its stream: close it, and log its disconnect."""
        session.seated = False
        session.close(
            StreamEnd(grpc.StatusCode.RESOURCE_EXHAUSTED, "the stream was not read: too far behind")
        )
        cause = f"not reading its stream ({session.outbox.limit} messages waiting)"
        disconnect = common.Command(
            disconnect=common.DisconnectCommand(seat=session.seat, cause=cause)
        )
        self.queue.appendleft(Inbound(disconnect, self.clock.now(), session))

    def _close(self) -> None:
        end = StreamEnd(grpc.StatusCode.UNAVAILABLE, self.failure) if self.failure else StreamEnd()
        for session in self.sessions:
            if session is not None:
                session.close(end)
        self.sessions = [None] * len(self.sessions)
        for spectator in self.spectators:
            spectator.outbox.close(end)
        self.spectators.clear()
        for inbound in self.queue:  # hellos that raced with the end
            if inbound.session is not None and inbound.command.HasField("connect"):
                inbound.session.send(
                    refusal(play_service.REFUSAL_REASON_MATCH_OVER, "the match is over")
                )
                inbound.session.close()
                if self.metrics is not None:
                    self.metrics.refused(play_service.REFUSAL_REASON_MATCH_OVER)
        self.queue.clear()
        if self.on_closed is not None:
            try:
                self.on_closed(self)
            except Exception:
                log.exception("closing the match log failed")
        self.writer.close()
        self.done.set()
        log.info(
            "match ended",
            status=common.MatchStatus.Name(self.state.status),
            totals=list(self.state.rules.totals),
            reason=self.state.cancel_reason or self.failure or None,
        )
