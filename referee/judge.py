"""The reference judge: JSON requests in, verdicts out, for bot authors in any language.

Each request is one JSON object; each answer is one JSON object. A request that cannot
be read gets ``{"error": ...}`` and the next one is still answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from referee.rules import (
    HAND_SIZE,
    Context,
    LegalPlays,
    Rules,
    RulesError,
    context_for,
    format_cards,
    parse_card,
    parse_cards,
)


class RequestError(ValueError):
    """A request that is not a valid judge or moves request."""


def _rules(req: Mapping[str, Any]) -> Rules:
    profile = req.get("profile")
    if not isinstance(profile, str):
        raise RequestError('"profile" is required: pusoy-dos, pusoy-dos-chips or big-two')
    options = req.get("options") or {}
    if not isinstance(options, Mapping):
        raise RequestError('"options" must be an object')
    return Rules.for_profile(profile, options)


def _cards_field(req: Mapping[str, Any], name: str, *, required: bool = False) -> int | None:
    value = req.get(name)
    if value is None:
        if required:
            raise RequestError(f'"{name}" is required')
        return None
    if not isinstance(value, str):
        raise RequestError(f'"{name}" must be a string of cards such as "3D 3C"')
    return parse_cards(value, allow_empty=(name == "hand"))


def _view(req: Mapping[str, Any], *, hand_required: bool) -> tuple[Context, LegalPlays]:
    rules = _rules(req)
    revolution = req.get("revolution", False)
    if not isinstance(revolution, bool):
        raise RequestError('"revolution" must be true or false')
    ctx = context_for(rules, revolution)
    hand = _cards_field(req, "hand", required=hand_required)
    if hand is not None and hand.bit_count() > HAND_SIZE:
        raise RequestError(f'"hand" holds {hand.bit_count()} cards; a hand has at most {HAND_SIZE}')
    table_mask = _cards_field(req, "table")
    if hand is not None and table_mask is not None and hand & table_mask:
        raise RequestError(
            f'"hand" and "table" share cards: {format_cards(hand & table_mask, ctx.order)}'
        )
    table = None
    if table_mask is not None:
        table = ctx.classify(table_mask)
        if table is None:
            raise RequestError(f'"table" is not a play: {format_cards(table_mask, ctx.order)}')
    must = 0
    lead_card = req.get("lead_must_include")
    if lead_card is not None:
        if not isinstance(lead_card, str):
            raise RequestError('"lead_must_include" must be one card such as "3D"')
        must = 1 << parse_card(lead_card)
        if hand is not None and table_mask is None and not hand & must:
            raise RequestError(f'"lead_must_include" ({lead_card}) is not in "hand"')
    lone_two = rules.no_finish_on_lone_two
    return ctx, LegalPlays(ctx, hand, table, must if table is None else 0, lone_two)


def judge(req: Mapping[str, Any]) -> dict[str, Any]:
    """Whether one play (or ``"pass"``) is legal, with the reason and the combination."""
    play = req.get("play")
    if not isinstance(play, str):
        raise RequestError('"play" is required: cards such as "9S 9D", or "pass"')
    ctx, plays = _view(req, hand_required=False)
    if play.strip().lower() == "pass":
        err = plays.why_not_pass()
        if err is None:
            return {"legal": True}
        return {"legal": False, "reason": err.reason.value, "message": err.message}
    try:
        mask = parse_cards(play)
    except RulesError as exc:
        reason = getattr(exc, "reason", None)
        return {
            "legal": False,
            "reason": reason.value if reason else "unparseable_card",
            "message": str(exc),
        }
    combo = ctx.classify(mask)
    out: dict[str, Any] = {}
    err = plays.why_not(mask)
    out["legal"] = err is None
    if err is not None:
        out["reason"] = err.reason.value
        out["message"] = err.message
    if combo is not None:
        out["combination"] = combo.kind.value
    return out


def moves(req: Mapping[str, Any]) -> dict[str, Any]:
    """Every legal play in stable order, and whether a pass is legal."""
    _, plays = _view(req, hand_required=True)
    return {"moves": plays.texts(), "can_pass": plays.can_pass}


def run_lines(
    handler: Callable[[Mapping[str, Any]], dict[str, Any]], lines: Iterable[str], out: TextIO
) -> int:
    """Answer each non-blank line; return how many lines got an error."""
    errors = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, Mapping):
                raise RequestError("each line must be one JSON object")
            answer = handler(req)
        except (json.JSONDecodeError, RequestError, RulesError) as exc:
            errors += 1
            answer = {
                "error": f"line is not valid JSON: {exc}"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            }
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()
    return errors
