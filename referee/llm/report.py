"""What a model seat's moves came to: its faults told apart from its play.

A model that breaks the rules loses hands for it, which says little of its strategy; one
that keeps them is judged on its play. So a model seat's results are given twice: raw
(every hand), and clean (only the hands in which the model made no fault: no rejected
move, no default action the referee played for it, no unreadable answer, no move the
seat had to send itself). Faults come from the log (what the referee decided) and from
the trace (what the seat saw of the model: parse faults, provider failures, fallbacks,
tokens), read back after the match.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from referee.log.reader import LogFormatError, read_log
from referee.log.traces import TraceError, read_trace


@dataclasses.dataclass(frozen=True, slots=True)
class ModelSeatReport:
    """One model seat of a match."""

    seat: int
    model: str
    moves: int = 0
    """Actions the seat sent (its traced lines)."""
    first_try: int = 0
    """Turns whose first move sent was accepted."""
    turns: int = 0
    rejections: int = 0
    """Moves the referee rejected (each sent back to the model with its reason)."""
    defaults: int = 0
    """Turns the referee played for the seat (timeouts, too many rejections)."""
    parse_faults: int = 0
    provider_failures: int = 0
    fallbacks: int = 0
    """Moves the seat sent itself: no readable answer in time, or no tokens left."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency_ms: int = 0
    """Time spent waiting for the model, in total."""
    hands: int = 0
    clean_hands: int = 0
    raw_total: int = 0
    clean_total: int = 0
    """The seat's score summed over its clean hands."""

    def line(self) -> str:
        cost = f", est. cost {self.cost:.4f}" if self.cost else ""
        return (
            f"seat {self.seat} model {self.model}: {self.moves} moves, {self.first_try}/"
            f"{self.turns} turns right first time, {self.rejections} rejected, "
            f"{self.parse_faults} unreadable, {self.fallbacks} fallbacks, {self.defaults} "
            f"defaults, {self.provider_failures} provider failures; tokens "
            f"{self.prompt_tokens} in / {self.completion_tokens} out{cost}; clean hands "
            f"{self.clean_hands}/{self.hands}: total {self.clean_total} clean, "
            f"{self.raw_total} raw"
        )


def model_report(log_path: Path, seat: int, trace: Path) -> ModelSeatReport | None:
    """The seat's report from its log and trace; None when either cannot be read."""
    try:
        read = read_log(log_path)
        lines = list(read_trace(trace))
    except (LogFormatError, TraceError, OSError):
        return None
    faulty: set[int] = set()
    model = ""
    counts = dict.fromkeys(("moves", "parse", "provider", "fallbacks", "pin", "pout"), 0)
    cost, latency = 0.0, 0
    for line in lines:
        r = line.record
        hand = _int(r.get("hand"))
        model = str(r.get("model", ""))[:80] or model
        counts["moves"] += 1
        calls = r.get("calls")
        calls = calls if isinstance(calls, list) else []
        for call in calls:
            if not isinstance(call, dict):
                continue
            counts["parse"] += "parse_fault" in call
            counts["provider"] += len(call.get("provider_failures") or []) + (
                "provider_error" in call
            )
            latency += _int(call.get("latency_ms"))
            if "parse_fault" in call:
                faulty.add(hand)
        if r.get("source") == "fallback":
            counts["fallbacks"] += 1
            faulty.add(hand)
        tokens = r.get("tokens")
        tokens = tokens if isinstance(tokens, dict) else {}
        counts["pin"] += _int(tokens.get("prompt"))
        counts["pout"] += _int(tokens.get("completion"))
        value = r.get("cost")
        cost += float(value) if isinstance(value, int | float) and value >= 0 else 0.0
    hand, rejections, defaults, turns, first_try = 0, 0, 0, 0, 0
    scores: list[int] = []
    tried: set[int] = set()
    for entry_line in read.lines:
        event = entry_line.entry.event
        kind = event.WhichOneof("kind")
        if kind == "hand_dealt":
            hand = event.hand_dealt.hand_number
        elif kind == "action_rejected" and event.action_rejected.seat == seat:
            if event.action_rejected.attempt:
                rejections += 1
                tried.add(event.action_rejected.turn_id)
                faulty.add(hand)
        elif kind in ("played", "passed"):
            move = getattr(event, kind)
            if move.seat != seat:
                continue
            turns += 1
            if move.default_cause:
                defaults += 1
                faulty.add(hand)
            elif move.turn_id not in tried:
                first_try += 1
        elif kind == "hand_ended":
            ended = event.hand_ended
            scores.append(ended.scores[seat] if seat < len(ended.scores) else 0)
    clean = [s for h, s in enumerate(scores, 1) if h not in faulty]
    return ModelSeatReport(
        seat=seat,
        model=model,
        moves=counts["moves"],
        first_try=first_try,
        turns=turns,
        rejections=rejections,
        defaults=defaults,
        parse_faults=counts["parse"],
        provider_failures=counts["provider"],
        fallbacks=counts["fallbacks"],
        prompt_tokens=counts["pin"],
        completion_tokens=counts["pout"],
        cost=cost,
        latency_ms=latency,
        hands=len(scores),
        clean_hands=len(clean),
        raw_total=sum(scores),
        clean_total=sum(clean),
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
