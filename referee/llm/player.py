"""A language model at a seat: prompts in, the model's moves out, every step traced.

The seat plays through the one Python seat client (``referee.client.seat``), like the
built-in bots: it is the house's code, run beside the referee outside the bots' jail so
that it can reach the model's endpoint. Each turn:

1. the seat's own view (the Welcome's rules, the TurnPrompt) is rendered for the model
   (``referee.llm.prompt``) and the endpoint asked, within the turn's time;
2. an answer the parser cannot read is asked again with the reason (``parse_retries``
   times: parse faults, counted); provider failures are retried by the endpoint
   (``referee.llm.endpoint``) and counted apart;
3. a readable move goes to the referee, whatever its legality: the referee judges it,
   and a rejection's reason (``ActionResult.message``: "does not beat ...") goes back to
   the model while the match's ``max_rejections_per_turn`` leaves attempts; after the
   last the referee plays its default action;
4. when the model gives no readable move in time (or the tokens run out), the seat
   sends the default move itself (pass, or on a lead the lowest legal play), marked
   ``fallback`` in its trace.

Every action carries the SHA-256 of its trace line (``referee.llm.trace``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from referee.client.seat import SeatClient, SeatPlayer
from referee.llm.answer import (
    ModelAnswer,
    ParseFault,
    format_schema,
    move_schema,
    parse_model_answer,
    strip_reasoning,
)
from referee.llm.endpoint import Endpoint, ProviderError
from referee.llm.prompt import TEMPLATE_VERSION, Message, retry_messages, turn_messages
from referee.llm.settings import ModelSettings
from referee.llm.trace import TraceWriter
from referee.protocol import common, play_service

TRACE_VERSION = 1
SAFETY_MARGIN_S = 0.3
"""The seat's own answer must reach the referee before the turn ends: this is kept back
from the turn's time for it (and at most a tenth of a short turn)."""


def _action(turn_id: int, cards: Sequence[str] | None, trace: str) -> play_service.Action:
    action = play_service.Action(turn_id=turn_id, trace_sha256=trace)
    if cards:
        action.play.cards.extend(cards)
    else:
        getattr(action, "pass").SetInParent()
    return action


@dataclasses.dataclass
class EndpointPause:
    """A dead endpoint costs every move its retries (seconds each, the turn's whole time
    when it hangs): after ``after`` questions in a row that it failed, the seat stops
    asking for ``seconds`` and plays its own default at once; then it asks again, and one
    more failure pauses it again. ``after`` 0: never pause."""

    after: int
    seconds: float
    failed: int = 0
    """Questions in a row the endpoint failed (each after its retries)."""
    until: float = 0.0

    def paused(self, now: float) -> bool:
        return now < self.until

    def note(self, failed: bool, now: float) -> bool:
        """One question's end; True when it starts a pause."""
        if not failed:
            self.failed = 0
            return False
        self.failed += 1
        if self.after and self.failed >= self.after:
            self.until = now + self.seconds
            return True
        return False


def fallback_move(prompt: play_service.TurnPrompt) -> list[str] | None:
    """The referee's own default: pass, or on a lead the lowest legal play."""
    if prompt.can_pass or not prompt.legal_plays:
        return None
    return list(prompt.legal_plays[0].cards)


def _prompt_sha256(messages: Sequence[Message]) -> str:
    text = json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class ModelPlayer(SeatPlayer):
    """Plays a seat with a model; ``counts`` keeps its faults and tokens for the match."""

    def __init__(self, settings: ModelSettings, trace: TraceWriter) -> None:
        """The key must have been read (``ModelSettings.with_key``)."""
        self.settings = settings
        self.name = settings.name
        self.endpoint = Endpoint(settings.endpoint)
        self.trace = trace
        self.rules = common.Rules()
        self.results: asyncio.Queue[play_service.ActionResult] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.delivery: asyncio.Future[bool] | None = None
        """The last action's sending and its trace line's writing (``close`` waits)."""
        self.delivering = asyncio.Lock()
        """One delivery at a time: a turn cancelled by the next prompt may still be writing
        its line, and the trace's lines must stand in the order their actions were sent."""
        self.pause = EndpointPause(settings.pause_after_failures, settings.pause_s)
        self.match_id = ""
        self.hand = 0
        self.tokens = 0
        self.counts = {
            "moves": 0,
            "parse_faults": 0,
            "provider_failures": 0,
            "rejections": 0,
            "fallbacks": 0,
        }

    def stream_opened(self) -> None:
        """A dropped stream: the turn in progress is over (the referee re-prompts)."""
        if self.task is not None:
            self.task.cancel()
            self.task = None

    async def on_message(self, seat: SeatClient, message: play_service.PlayResponse) -> None:
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            self.rules.CopyFrom(message.welcome.config.rules)
            self.match_id = message.welcome.match_id
        elif kind == "prompt":
            if self.task is not None:
                self.task.cancel()
            self.results = asyncio.Queue()
            self.hand = message.prompt.state.hand_number
            self.task = asyncio.create_task(self._turn(seat, message.prompt, time.monotonic()))
        elif kind == "result":
            self.results.put_nowait(message.result)
        elif kind == "event" and message.event.HasField("match_ended"):
            await self.close()

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        if self.delivery is not None:  # its trace line is written before the file moves
            with contextlib.suppress(Exception):
                await self.delivery
        await self.endpoint.close()

    def _deadline(self, prompt: play_service.TurnPrompt, received: float) -> float:
        budget = (prompt.turn_time_ms + prompt.time_bank_ms) / 1000
        return received + budget - min(SAFETY_MARGIN_S, budget / 10)

    async def _turn(
        self, seat: SeatClient, prompt: play_service.TurnPrompt, received: float
    ) -> None:
        if self.pause.paused(time.monotonic()):
            note = {"paused": f"the endpoint failed {self.pause.failed} questions in a row"}
            await self._send(seat, prompt, fallback_move(prompt), "fallback", "paused", [note])
            return
        deadline = self._deadline(prompt, received)
        messages = turn_messages(self.rules, prompt, self.settings.prompt)
        schema = None
        if self.settings.endpoint.structured != "off":
            schema = (
                format_schema()
                if self.settings.constrain == "format"
                else move_schema([list(p.cards) for p in prompt.legal_plays], prompt.can_pass)
            )
        calls: list[dict[str, Any]] = []
        parse_left = self.settings.parse_retries
        feedback = ""
        while True:
            answer, fault, text = await self._ask(messages, schema, deadline, calls, feedback)
            if self.pause.note(fault == "provider", time.monotonic()):
                calls[-1]["pause_s"] = self.pause.seconds
            feedback = ""
            if fault == "parse" and parse_left > 0 and time.monotonic() < deadline:
                parse_left -= 1
                feedback = calls[-1]["parse_fault"]
                messages = retry_messages(messages, text, feedback, parse_left + 1)
                continue
            cards = answer.cards if answer is not None else fallback_move(prompt)
            source = "model" if answer is not None else "fallback"
            result = await self._send(seat, prompt, cards, source, fault, calls)
            calls = []
            if result is None or result.accepted:
                return
            self.counts["rejections"] += 1
            if result.attempts_left == 0 or source == "fallback":
                return  # the referee plays its default action
            parse_left = self.settings.parse_retries
            feedback = result.message
            messages = retry_messages(messages, text, feedback, result.attempts_left)

    async def _ask(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        deadline: float,
        calls: list[dict[str, Any]],
        feedback: str,
    ) -> tuple[ModelAnswer | None, str, str]:
        """One question to the model: (the move or None, the fault or "", its text)."""
        s = self.settings
        call: dict[str, Any] = {"prompt_sha256": _prompt_sha256(messages)}
        if s.keep_prompts:
            call["messages"] = messages
        if feedback:
            call["feedback"] = feedback
        calls.append(call)
        cap = s.endpoint.max_tokens
        if s.max_tokens_per_match:
            cap = min(cap, s.max_tokens_per_match - self.tokens)
            if cap <= 0:
                call["fault"] = "tokens"
                return None, "tokens", ""
        try:
            done = await self.endpoint.complete(
                messages, deadline=deadline, schema=schema, max_tokens=cap
            )
        except ProviderError as exc:
            call["provider_error"] = str(exc)
            self.counts["provider_failures"] += 1
            return None, "provider", ""
        self.tokens += done.prompt_tokens + done.completion_tokens
        self.counts["provider_failures"] += len(done.failures)
        _, inline_reasoning = strip_reasoning(done.text)
        call.update(
            answer=done.text,
            reasoning=done.reasoning or inline_reasoning,
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            latency_ms=done.latency_ms,
            finish_reason=done.finish_reason,
        )
        if done.failures:
            call["provider_failures"] = [
                {"error": f.error, "status": f.status, "ms": f.ms} for f in done.failures
            ]
        try:
            answer = parse_model_answer(done.text)
        except ParseFault as exc:
            self.counts["parse_faults"] += 1
            call["parse_fault"] = str(exc)
            return None, "parse", done.text
        call["parse"] = answer.path
        return answer, "", done.text

    async def _send(
        self,
        seat: SeatClient,
        prompt: play_service.TurnPrompt,
        cards: Sequence[str] | None,
        source: str,
        fault: str,
        calls: list[dict[str, Any]],
    ) -> play_service.ActionResult | None:
        """Trace the action, send it with its line's hash, and wait for the verdict
        (None: the stream dropped; the referee prompts again)."""
        self.counts["moves"] += 1
        if source == "fallback":
            self.counts["fallbacks"] += 1
        prompt_tokens = sum(int(c.get("prompt_tokens", 0)) for c in calls)
        completion_tokens = sum(int(c.get("completion_tokens", 0)) for c in calls)
        record: dict[str, Any] = {
            "v": TRACE_VERSION,
            "match_id": self.match_id,
            "seat": prompt.seat,
            "turn_id": prompt.turn_id,
            "hand": prompt.state.hand_number,
            "template": TEMPLATE_VERSION,
            "model": self.settings.endpoint.model,
            "action": {"play": list(cards)} if cards else {"pass": True},
            "source": source,
            "fault": fault,
            "calls": calls,
            "tokens": {"prompt": prompt_tokens, "completion": completion_tokens},
            "match_tokens": self.tokens,
            "cost": round(self.settings.cost(prompt_tokens, completion_tokens), 8),
        }
        line, digest = self.trace.encode(record)
        # Sent, then written, as one step a new prompt's cancel cannot split: a line is
        # in the trace only for an action that went out (the log binds every line).
        action = _action(prompt.turn_id, cards, digest)
        self.delivery = asyncio.ensure_future(self._deliver(seat, action, line))
        if not await asyncio.shield(self.delivery):
            return None
        while True:
            result = await self.results.get()
            if result.turn_id == prompt.turn_id:
                return result

    async def _deliver(self, seat: SeatClient, action: play_service.Action, line: bytes) -> bool:
        async with self.delivering:
            if not await seat.send(action):
                return False
            await asyncio.to_thread(self.trace.append, line)
            return True
