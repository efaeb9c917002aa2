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
    card_text,
    context_for,
    format_cards,
    parse_card,
    parse_cards,
)


class RequestError(ValueError):
    """A request that is not a valid judge or moves request."""


FIELDS = (
    "profile",
    "options",
    "hand",
    "table",
    "lead_must_include",
    "play",
    "revolution",
    "lone_two_rule",
    "about",
)
"""The fields a request may have; ``about`` is the caller's own and is ignored."""

_CARDS_HINT = 'one string such as "3D 3C" or a list such as ["3D", "3C"]'


def _check_fields(req: Mapping[str, Any]) -> None:
    unknown = [str(k) for k in req if k not in FIELDS]
    if unknown:
        names = ", ".join(f'"{k}"' for k in unknown)
        raise RequestError(f"unknown field {names}; known fields: {', '.join(FIELDS)}")


def _rules(req: Mapping[str, Any]) -> Rules:
    profile = req.get("profile")
    if not isinstance(profile, str):
        raise RequestError('"profile" is required: pusoy-dos, pusoy-dos-chips or big-two')
    options = req.get("options") or {}
    if not isinstance(options, Mapping):
        raise RequestError('"options" must be an object')
    return Rules.for_profile(profile, options)


def card_tokens(value: object, name: str) -> str | list[str]:
    """Cards as the request gave them: one string, or a list of one-card strings.

    A list is read as the protocol's ``cards`` fields are: each entry must be exactly one
    card, so ``["3D 3C"]`` is an unreadable card, not two.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for i, item in enumerate(value, start=1):
            if not isinstance(item, str):
                raise RequestError(
                    f'"{name}": entry {i} is {json.dumps(item)}, not a card such as "3D"'
                )
        return value
    raise RequestError(f'"{name}" must be cards: {_CARDS_HINT}')


def _cards_field(req: Mapping[str, Any], name: str, *, required: bool = False) -> int | None:
    value = req.get(name)
    if value is None:
        if required:
            raise RequestError(f'"{name}" is required')
        return None
    return parse_cards(card_tokens(value, name), allow_empty=(name == "hand"))


def _flag(req: Mapping[str, Any], name: str, default: bool) -> bool:
    value = req.get(name, default)
    if not isinstance(value, bool):
        raise RequestError(f'"{name}" must be true or false')
    return value


def _view(req: Mapping[str, Any], *, hand_required: bool) -> tuple[Context, LegalPlays]:
    """The position a request describes; a position no hand can reach is an error."""
    _check_fields(req)
    rules = _rules(req)
    revolution = _flag(req, "revolution", False)
    if revolution and not (rules.revolution and rules.five_card_hands):
        why = "is off" if not rules.revolution else "cannot trigger without five-card hands"
        raise RequestError(f'"revolution" is true, but the revolution option {why}')
    lone_two = _flag(req, "lone_two_rule", rules.no_finish_on_lone_two)
    if lone_two and not rules.no_finish_on_lone_two:
        raise RequestError('"lone_two_rule" is true, but the no_finish_on_lone_two option is off')
    ctx = context_for(rules, revolution)
    hand = _cards_field(req, "hand", required=hand_required)
    if hand is not None and not hand:
        raise RequestError(
            '"hand" is empty: a player without cards has gone out and the hand is over'
        )
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
    must = _opening_card(req, rules, hand, table_mask, revolution, lone_two)
    return ctx, LegalPlays(ctx, hand, table, must, lone_two)


def _opening_card(
    req: Mapping[str, Any],
    rules: Rules,
    hand: int | None,
    table: int | None,
    revolution: bool,
    lone_two: bool,
) -> int:
    """The mask of ``lead_must_include`` (0 when absent), checked against the position."""
    lead_card = req.get("lead_must_include")
    if lead_card is None:
        return 0
    if not isinstance(lead_card, str):
        raise RequestError('"lead_must_include" must be one card such as "3D"')
    must = 1 << parse_card(lead_card)
    opening = card_text(rules.opening_card)
    if must != 1 << rules.opening_card:
        raise RequestError(
            f'"lead_must_include" is {card_text(must.bit_length() - 1)}, but only the opening '
            f"card ({opening} under {rules.suit_order.value}) can be required"
        )
    if table is not None:
        raise RequestError(
            '"lead_must_include" is for the first play of a hand, which has no "table"'
        )
    if revolution or lone_two != rules.no_finish_on_lone_two:
        field = "revolution" if revolution else "lone_two_rule"
        raise RequestError(
            f'"lead_must_include" is for the first play of a hand, where "{field}" '
            "cannot have changed yet"
        )
    if hand is not None and not hand & must:
        raise RequestError(f'"lead_must_include" ({lead_card}) is not in "hand"')
    return must


def judge(req: Mapping[str, Any]) -> dict[str, Any]:
    """Whether one play (or ``"pass"``) is legal, with the reason and the combination."""
    play = req.get("play")
    if play is None:
        raise RequestError('"play" is required: cards such as "9S 9D" or ["9S", "9D"], or "pass"')
    tokens = card_tokens(play, "play")
    ctx, plays = _view(req, hand_required=False)
    if isinstance(tokens, str) and tokens.strip().lower() == "pass":
        err = plays.why_not_pass()
        if err is None:
            return {"legal": True}
        return {"legal": False, "reason": err.reason.value, "message": err.message}
    try:
        mask = parse_cards(tokens)
    except RulesError as exc:
        reason = getattr(exc, "reason", None)
        return {
            "legal": False,
            "reason": reason.value if reason else "unparseable_card",
            "message": str(exc),
        }
    if plays.table is not None and mask & plays.table.mask:
        shared = format_cards(mask & plays.table.mask, ctx.order)
        raise RequestError(f'"play" and "table" share cards: {shared}')
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
