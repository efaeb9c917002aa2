"""Connect a Bot to a referee and play its seat to the end of the match (docs/kits.md).

The stream is read on the asyncio loop that called ``run_bot``; the bot's code runs on a
worker thread of its own, one call at a time, so a slow or blocking ``choose`` never
stops the reading, and the fallback goes out when the budget runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import random
import sys
import threading
import time
import traceback
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

import grpc

from pusoy_client.bot import Bot, Outcome
from pusoy_client.options import (
    RECONNECT_WINDOW_S,
    Options,
    UsageError,
    from_command_line,
)
from pusoy_client.prompt import Budget, Choice, Prompt, Rejection, as_cards, fallback
from pusoy_client.protocol import PROTOCOL_VERSION, common, play_service, play_service_grpc

T = TypeVar("T")

RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)
RETRIED_REFUSALS = frozenset(
    {play_service.REFUSAL_REASON_SEAT_TAKEN, play_service.REFUSAL_REASON_SHUTTING_DOWN}
)
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 1.0
DRAIN_S = 2.0
"""At the match's end, how long the bot's last hooks may take before run_bot returns."""


class Refused(Exception):
    """The referee refused the seat (exit 2)."""

    def __init__(self, refusal: play_service.Refusal) -> None:
        name = play_service.RefusalReason.Name(refusal.reason)
        super().__init__(f"{name}: {refusal.message}")
        self.refusal = refusal


class Unreachable(ConnectionError):
    """No seat within the reconnect window (exit 3)."""


class RpcFailed(Exception):
    """The stream failed in a way a reconnect cannot fix (exit 4)."""


BotRefused = Refused
"""The former name of ``Refused``."""


def _log(name: str, text: str) -> None:
    print(f"{name}: {text}", file=sys.stderr, flush=True)


RAISED_MARKER = "PUSOY_BOT_RAISED"
"""The first word of the line a kit writes when the bot's own code raised on a turn and
the kit fell back (docs/kits.md, section 5): ``referee match`` and ``referee view`` find
it in the bot's output and name it."""
RAISED_MAX_CHARS = 200
"""Of what was raised (its type and message), the characters the marker line keeps."""


def raised_line(turn_id: int, call: str, exc: BaseException) -> str:
    """The marker line for ``exc``, raised by the bot's ``call`` (``choose`` or
    ``on_rejected``) on turn ``turn_id``: one line, whatever the message holds.

    >>> raised_line(14, "choose", ZeroDivisionError("division by zero"))
    'PUSOY_BOT_RAISED turn=14 call=choose error=ZeroDivisionError: division by zero'
    >>> raised_line(3, "on_rejected", KeyError())
    'PUSOY_BOT_RAISED turn=3 call=on_rejected error=KeyError'
    >>> raised_line(2, "choose", ValueError("two\\nlines\\x1b[2J"))
    'PUSOY_BOT_RAISED turn=2 call=choose error=ValueError: two lines [2J'
    """
    said = str(exc)
    error = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    error = "".join(c if c.isprintable() else " " for c in error)[:RAISED_MAX_CHARS]
    return f"{RAISED_MARKER} turn={turn_id} call={call} error={error}"


def _action(turn_id: int, choice: Choice) -> play_service.PlayRequest:
    cards = as_cards(choice)
    action = play_service.Action(turn_id=turn_id)
    if cards is None:
        getattr(action, "pass").SetInParent()
    else:
        action.play.cards.extend(cards)
    return play_service.PlayRequest(action=action)


class Worker:
    """The bot's thread: runs its calls one at a time, in the order they are given.

    An ``async def`` method runs on the worker's own event loop, cancelled at its budget.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=f"bot:{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while (job := self._jobs.get()) is not None:
                job()
        finally:
            self._loop.close()

    def close(self) -> None:
        self._jobs.put(None)

    def call(
        self,
        what: str,
        fn: Callable[[], Any],
        *,
        budget: Budget | None = None,
        skip: Callable[[], bool] = lambda: False,
    ) -> asyncio.Future[Any]:
        """Run ``fn`` on the worker; the future (of the caller's loop) gets its result, or
        the exception it raised, reported once here. ``skip`` is asked when the worker
        reaches the call: a call no longer wanted is not made."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            if fut.done():
                return
            if error is not None:
                fut.set_exception(error)
            else:
                fut.set_result(result)

        def job() -> None:
            result: Any = None
            error: BaseException | None = None
            if skip():
                error = _Skipped()
            else:
                try:
                    result = fn()
                    if inspect.isawaitable(result):
                        timeout = None if budget is None else budget.remaining()
                        result = self._loop.run_until_complete(
                            asyncio.wait_for(_awaited(result), timeout)
                        )
                except TimeoutError as exc:
                    error = exc
                except Exception as exc:
                    _log(self.name, f"{what} failed: {''.join(traceback.format_exception(exc))}")
                    error = exc
            loop.call_soon_threadsafe(settle, result, error)

        self._jobs.put(job)
        return fut


def _caller(fn: Callable[[Any], T], arg: Any) -> Callable[[], T]:
    """``fn(arg)`` later (the turn's prompt for a ``_Turn``)."""
    value = arg.prompt if isinstance(arg, _Turn) else arg
    return lambda: fn(value)


def _same(a: list[str] | None, b: list[str] | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and sorted(a) == sorted(b))


async def _awaited(aw: Any) -> Any:
    return await aw


class _Skipped(Exception):
    """The worker reached a call that was no longer wanted."""


class _Turn:
    """The open turn: its prompt, the attempt being answered and what was sent."""

    def __init__(self, prompt: Prompt) -> None:
        self.prompt = prompt
        self.attempt = 0
        self.closed = False
        self.sent: list[list[str] | None] = []


class _Session:
    """What survives a reconnect."""

    def __init__(self) -> None:
        self.seat = -1
        self.match_id = ""
        self.welcomed = False  # on the current stream


class _Stream:
    def __init__(self) -> None:
        self.outgoing: asyncio.Queue[play_service.PlayRequest | None] = asyncio.Queue()

    async def requests(self) -> AsyncIterator[play_service.PlayRequest]:
        while (msg := await self.outgoing.get()) is not None:
            yield msg

    def send(self, msg: play_service.PlayRequest) -> None:
        self.outgoing.put_nowait(msg)

    def close(self) -> None:
        self.outgoing.put_nowait(None)


class _Player:
    """Plays the seat over one stream at a time; the bot's code runs on ``worker``."""

    def __init__(self, bot: Bot, options: Options, worker: Worker) -> None:
        self.bot = bot
        self.options = options
        self.worker = worker
        self.session = _Session()
        self.turn: _Turn | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    def hook(self, name: str, fn: Callable[[], object]) -> None:
        fut = self.worker.call(name, fn)
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def answer(
        self, stream: _Stream, turn: _Turn, attempt: int, what: str, fn: Callable[[], object]
    ) -> None:
        """Ask the bot (``choose`` or ``on_rejected``) and send its answer for ``attempt``
        of ``turn``, or the fallback when it is late or fails."""
        prompt = turn.prompt
        fut = self.worker.call(
            what,
            fn,
            budget=prompt.budget,
            skip=lambda: turn.closed or turn.attempt != attempt or prompt.budget.expired(),
        )
        cards: list[str] | None
        try:
            got = await asyncio.wait_for(asyncio.shield(fut), prompt.budget.remaining())
        except (TimeoutError, _Skipped):
            if not fut.done():
                _log(self.bot.name, f"{what} is past its budget (turn {prompt.turn_id}): fallback")
            cards = as_cards(fallback(prompt))
            fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        except Exception as exc:  # the bot's code raised (its traceback is on stderr)
            print(raised_line(prompt.turn_id, what, exc), file=sys.stderr, flush=True)
            cards = as_cards(fallback(prompt))
        else:
            try:
                cards = as_cards(got)
            except ValueError as exc:  # an answer that is no cards
                _log(self.bot.name, f"{what} answered {exc}: fallback")
                cards = as_cards(fallback(prompt))
        if turn.closed or turn.attempt != attempt or self.turn is not turn:
            return  # too late: the turn moved on
        if attempt > 0 and turn.sent and _same(cards, turn.sent[-1]):
            return  # the fallback was just rejected: the referee acts at its deadline
        turn.sent.append(cards)
        stream.send(_action(prompt.turn_id, cards))

    def spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def play_once(self, stub: play_service_grpc.PlayServiceAsyncStub) -> Outcome | None:
        """One stream: the outcome at the match's end, None when the stream ended first."""
        bot, session = self.bot, self.session
        stream = _Stream()
        hello = play_service.Hello(
            protocol_version=PROTOCOL_VERSION,
            token=self.options.token,
            want_legal_plays=bot.want_legal_plays,
            bot_name=bot.name,
            batch_events=self.options.batch_events,
        )
        stream.send(play_service.PlayRequest(hello=hello))
        call = stub.Play(stream.requests())
        try:
            async for msg in call:
                kind = msg.WhichOneof("kind")
                if kind == "prompt":
                    received, wall = time.monotonic(), time.time()
                    for event in msg.prompt.events:  # batched: the hooks see them first
                        self.deliver(event)
                    budget = Budget.for_prompt(
                        msg.prompt,
                        received=received,
                        wall_now=wall,
                        safety_margin_s=self.options.safety_margin_s,
                        use_time_bank=bot.use_time_bank,
                    )
                    if self.turn is not None:
                        self.turn.closed = True
                    turn = self.turn = _Turn(Prompt(msg.prompt, budget))
                    self.spawn(self.answer(stream, turn, 0, "choose", _caller(bot.choose, turn)))
                elif kind == "result":
                    self.on_result(stream, msg.result)
                elif kind == "event" or kind == "batch":
                    events = [msg.event] if kind == "event" else msg.batch.events
                    for event in events:
                        self.deliver(event)
                        if event.HasField("match_ended"):
                            await self.drain()
                            return Outcome(session.seat, session.match_id, event.match_ended)
                elif kind == "welcome":
                    session.seat, session.match_id = msg.welcome.seat, msg.welcome.match_id
                    session.welcomed = True
                    self.hook("on_welcome", _caller(bot.on_welcome, msg.welcome))
                elif kind == "snapshot":
                    self.hook("on_snapshot", _caller(bot.on_snapshot, msg.snapshot))
                elif kind == "refusal":
                    if (
                        session.seat >= 0
                        and msg.refusal.reason == play_service.REFUSAL_REASON_MATCH_OVER
                    ):
                        return Outcome(session.seat, session.match_id, None)  # ended while away
                    raise Refused(msg.refusal)
        finally:
            if self.turn is not None:
                self.turn.closed = True
            stream.close()
            call.cancel()
        return None

    def on_result(self, stream: _Stream, result: play_service.ActionResult) -> None:
        turn = self.turn
        if turn is None or turn.closed or result.turn_id != turn.prompt.turn_id:
            return  # a result for another turn (a stale answer) changes nothing
        if result.accepted:
            turn.closed = True
            return
        if result.attempts_left <= 0:
            turn.closed = True
            return
        turn.attempt += 1
        rejection = Rejection(result)
        bot, prompt = self.bot, turn.prompt
        self.spawn(
            self.answer(
                stream,
                turn,
                turn.attempt,
                "on_rejected",
                lambda: bot.on_rejected(prompt, rejection),
            )
        )

    def deliver(self, event: common.Event) -> None:
        """One event to the bot's ``on_event``, live or batched alike."""
        self.hook("on_event", _caller(self.bot.on_event, event))
        self.close_turn_on(event)

    def close_turn_on(self, event: common.Event) -> None:
        turn = self.turn
        kind = event.WhichOneof("kind")
        if turn is None or kind not in ("played", "passed"):
            return
        body = event.played if kind == "played" else event.passed
        if body.turn_id == turn.prompt.turn_id:
            turn.closed = True

    async def drain(self) -> None:
        """Let the worker finish the calls queued so far (the last events), within DRAIN_S."""
        with_done = self.worker.call("drain", lambda: None)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(with_done), DRAIN_S)


async def play(bot: Bot, options: Options) -> Outcome:
    """Play the seat until the match ends, reconnecting within the window (docs/kits.md)."""
    worker = Worker(bot.name)
    player = _Player(bot, options, worker)
    window_start = time.monotonic()
    retries = 0
    last_refusal: Refused | None = None
    last_error = "no answer"
    try:
        async with options.channel() as channel:
            stub = play_service_grpc.PlayServiceStub(channel)
            while True:
                player.session.welcomed = False
                try:
                    outcome = await player.play_once(stub)
                    if outcome is not None:
                        return outcome
                    last_error = "the stream ended before the match did"
                except Refused as exc:
                    if exc.refusal.reason not in RETRIED_REFUSALS:
                        raise
                    last_refusal = exc
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in RETRYABLE:
                        raise RpcFailed(f"{exc.code().name}: {exc.details()}") from None
                    last_error = f"{exc.code().name}: {exc.details()}"
                if player.session.welcomed:  # the seat was held: the window starts now
                    _log(bot.name, f"lost the stream ({last_error}); reconnecting")
                    window_start = time.monotonic()
                    retries = 0
                    last_refusal = None
                left = window_start + options.reconnect_window_s - time.monotonic()
                if left <= 0:
                    if last_refusal is not None:
                        raise last_refusal
                    raise Unreachable(
                        f"could not reach the referee at {options.address}: {last_error}"
                    )
                if retries > 0:
                    d = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** (retries - 1))
                    await asyncio.sleep(min(left, random.uniform(d / 2, d)))
                retries += 1
    finally:
        for task in list(player.tasks):
            task.cancel()
        worker.close()


async def run_bot(
    bot: Bot,
    address: str,
    token: str,
    *,
    reconnect_window_s: float = RECONNECT_WINDOW_S,
    batch_events: bool = False,
    options: Options | None = None,
) -> Outcome:
    """Play the seat of ``token`` at ``address`` (or as ``options`` say) until the match ends.

    ``batch_events`` asks for the events batched into the prompts (docs/protocol.md 3.5).
    """
    if options is None:
        options = Options(
            address=address,
            token=token,
            reconnect_window_s=reconnect_window_s,
            batch_events=batch_events,
        )
    return await play(bot, options)


def run(bot: Bot, address: str, token: str) -> Outcome:
    """Blocking form of ``run_bot``."""
    return asyncio.run(run_bot(bot, address, token))


EXIT_OK, EXIT_ERROR, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_RPC, EXIT_USAGE = 0, 1, 2, 3, 4, 64


def main(bot: Bot | Callable[[Options], Bot], argv: Sequence[str] | None = None) -> int:
    """A bot's command line (docs/kits.md, section 7): flags or PUSOY_* variables, the
    run, and the exit code."""
    name = bot.name if isinstance(bot, Bot) else "bot"
    try:
        options, _ = from_command_line(argv, description=f"Run the {name} bot against a referee.")
    except UsageError as exc:
        _log(name, f"usage: {exc}")
        return EXIT_USAGE
    instance = bot if isinstance(bot, Bot) else bot(options)
    try:
        outcome = asyncio.run(play(instance, options))
    except Refused as exc:
        _log(name, f"refused: {exc}")
        return EXIT_REFUSED
    except Unreachable as exc:
        _log(name, str(exc))
        return EXIT_UNREACHABLE
    except RpcFailed as exc:
        _log(name, f"the stream failed: {exc}")
        return EXIT_RPC
    except UsageError as exc:
        _log(name, f"usage: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception:
        _log(name, f"internal error:\n{traceback.format_exc()}")
        return EXIT_ERROR
    print(f"{name}: match {outcome.match_id} over, seat {outcome.seat} placed {outcome.place}")
    return EXIT_OK


__all__ = [
    "RAISED_MARKER",
    "BotRefused",
    "Refused",
    "RpcFailed",
    "Unreachable",
    "Worker",
    "main",
    "play",
    "raised_line",
    "run",
    "run_bot",
]
