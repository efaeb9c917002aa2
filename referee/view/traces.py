"""A language-model seat's trace in the replay: what the model saw, said and played.

``referee view`` embeds the traces it finds beside a log (``MATCH.seatN.trace.ndjson``:
released once the match's deal group is over, ``referee.llm.trace``). Each move of a
model seat gets the trace lines of its turn, one per action the seat sent (a rejected
move, then the next): the source (the model's, or the seat's fallback), the fault if
any, and each call to the model: what it was shown last (the state, or why its last move
did not count), its answer, the reasoning the endpoint returned, how the answer was read,
tokens and latency. Everything is bounded and travels as JSON, set with ``textContent``;
a seat's trace holds its cards, so a page shows it in that seat's view and the
all-cards view only, as it does a bot's output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.log.traces import TraceError, read_trace, trace_path
from referee.rules import SEATS
from referee.view.fold import Op, text, whole

MAX_SHOWN = 4000
"""Characters of a message, an answer or a reasoning shown (the trace keeps all)."""
MAX_LINES = 2000
"""Trace lines embedded per seat."""
MAX_CALLS = 8
"""Calls shown per trace line (a line's calls are its retries)."""


def traces_beside(log: Path) -> dict[int, Path]:
    """The released traces of a log's model seats."""
    return {s: trace_path(log, s) for s in range(SEATS) if trace_path(log, s).is_file()}


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    messages = call.get("messages")
    saw = ""
    if isinstance(messages, list) and messages and isinstance(messages[-1], Mapping):
        saw = text(messages[-1].get("content", ""), MAX_SHOWN)
    out: dict[str, Any] = {
        "saw": saw,
        "said": text(call.get("answer", ""), MAX_SHOWN),
        "thought": text(call.get("reasoning", ""), MAX_SHOWN),
        "parse": text(call.get("parse", ""), 20),
        "fault": text(
            call.get("parse_fault") or call.get("provider_error") or call.get("paused") or "", 300
        ),
        "tokens": [whole(call.get("prompt_tokens")), whole(call.get("completion_tokens"))],
        "ms": whole(call.get("latency_ms")),
    }
    return {k: v for k, v in out.items() if v not in ("", [0, 0], 0)}


def _line(record: Mapping[str, Any]) -> dict[str, Any]:
    action = record.get("action")
    cards = action.get("play") if isinstance(action, Mapping) else None
    calls = record.get("calls")
    calls = calls if isinstance(calls, list) else []
    return {
        "source": text(record.get("source", ""), 20),
        "fault": text(record.get("fault", ""), 20),
        "model": text(record.get("model", ""), 80),
        "move": [text(c, 8) for c in cards[:13]] if isinstance(cards, list) else [],
        "calls": [_call(c) for c in calls[:MAX_CALLS] if isinstance(c, Mapping)],
        "cost": record.get("cost") if isinstance(record.get("cost"), int | float) else 0,
    }


def _summary(log: Path | None, seat: int, trace: Path) -> dict[str, Any] | None:
    """The seat's results clean beside raw, and its faults (``referee.log.model_report``)."""
    if log is None:
        return None
    from referee.log.model_report import model_report

    report = model_report(log, seat, trace)
    if report is None:
        return None
    out = dataclasses.asdict(report)
    out["model"] = text(report.model, 80)
    out["cost"] = round(report.cost, 6)
    return out


def trace_data(
    files: Mapping[int, Path], ops: Sequence[Op], log: Path | None = None
) -> dict[str, Any] | None:
    """The page's ``traces`` data: per seat, its trace lines grouped by the move (the op's
    ``seq``) of their turn, and (given the ``log``) its results clean beside raw; None
    when no file can be read."""
    moves: dict[tuple[int, int], int] = {}
    for op in ops:
        if op.get("t") == "move" and isinstance(op.get("seat"), int):
            moves[(op["seat"], whole(op.get("turn")))] = int(op["seq"])
    seats: list[dict[str, Any] | None] = [None] * SEATS
    for seat, path in sorted(files.items()):
        if not 0 <= seat < SEATS:
            continue
        by_move: dict[int, list[dict[str, Any]]] = {}
        try:
            for n, line in enumerate(read_trace(path)):
                if n >= MAX_LINES:
                    break
                seq = moves.get((seat, whole(line.record.get("turn_id"))))
                if seq is not None:
                    by_move.setdefault(seq, []).append(_line(line.record))
        except (TraceError, OSError):
            continue
        seats[seat] = {
            "file": text(path.name, 120),
            "moves": [[seq, lines] for seq, lines in sorted(by_move.items())],
            "summary": _summary(log, seat, path),
        }
    return {"seats": seats} if any(seats) else None
