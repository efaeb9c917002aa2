"""What a model sees: the seat's own view, as a gRPC bot gets it, rendered for a model.

Everything comes from two messages the seat client already holds: the Welcome's
``MatchConfig`` (the rules in force) and the ``TurnPrompt`` (the seat's hand, the public
state of the hand, the legal plays). The referee's observer built both for this seat
alone, so no other seat's card can reach a prompt by construction. Seats are named by
number only: a bot's self-chosen name could carry instructions to the model.

The rendering is text (default) or JSON; the legal plays are listed in full, grouped by
kind, or not at all; a short primer of the rules in force may come first. Every switch
changes the system message or the state message only; the answer format is the same.
``TEMPLATE_VERSION`` names the templates, recorded with each move's trace.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from referee.protocol import common, play_service
from referee.protocol.names import COMBINATION

TEMPLATE_VERSION = "pusoy-llm-1"
"""Changes whenever a template's words change: a trace names the one its prompts used."""
FORMATS = ("text", "json")
LEGAL_PLAYS = ("full", "grouped", "none")

Message = dict[str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class PromptOptions:
    """The switches of the prompt (docs/llm.md, "What the model sees")."""

    format: str = "text"
    """``text`` or ``json``: how the state is written."""
    legal_plays: str = "full"
    """``full`` (one list), ``grouped`` (by kind) or ``none`` (the model finds them)."""
    primer: bool = True
    """A short primer of the rules in force in the system message."""
    system: str = ""
    """The organiser's own words, added to the system message."""


_KINDS = {
    "single": "singles",
    "pair": "pairs",
    "triple": "triples",
    "straight": "straights",
    "flush": "flushes",
    "full_house": "full houses",
    "four_of_a_kind": "fours of a kind",
    "straight_flush": "straight flushes",
}
_SUITS = {"clubs-low": "C < S < H < D", "diamonds-low": "D < C < H < S"}
_STRAIGHTS = {
    "wrap-high": "3-4-5-6-7 up to 10-J-Q-K-A, then A-2-3-4-5 and 2-3-4-5-6 (the highest)",
    "none-with-two": "3-4-5-6-7 up to 10-J-Q-K-A; no straight holds a 2",
    "wrap-low": "A-2-3-4-5 (the lowest), 2-3-4-5-6, then 3-4-5-6-7 up to 10-J-Q-K-A",
}


def kind_name(combination: int) -> str:
    """``COMBINATION_FULL_HOUSE`` -> ``full_house``."""
    return COMBINATION.text(combination)


def primer(rules: common.Rules) -> str:
    """The rules in force, in a few lines: what the model needs to play legally."""
    lines = [
        f"Game: {rules.profile or 'pusoy-dos'} (a climbing card game), four seats 0 to 3.",
        "Cards are rank then suit: ranks low to high 3 4 5 6 7 8 9 T J Q K A 2 (T is ten);"
        f" suits low to high {_SUITS.get(rules.suit_order, rules.suit_order)}.",
        "Plays: a single, a pair, a triple"
        + (
            ", or five cards (straight < flush < full house < four of a kind + one card < "
            "straight flush)."
            if rules.five_card_hands
            else " (no five-card hands in this match)."
        ),
        "On a lead you play any play ("
        + (
            f"the first play of every hand must hold {_opening(rules)}"
            if rules.first_lead == "opening-card-every-hand"
            else f"the first play of the match must hold {_opening(rules)}"
        )
        + "); after it each seat must play as many cards that beat the table, or pass.",
    ]
    if rules.five_card_hands:
        lines.append(f"Straights, low to high: {_STRAIGHTS.get(rules.straights, rules.straights)}.")
        if rules.five_card_categories == "locked":
            lines.append("A five-card play is beaten only by a higher one of the same kind.")
    if rules.pass_locks_out:
        lines.append("A pass locks you out until the next fresh lead.")
    else:
        lines.append("A pass skips this turn only.")
    for flag, words in (
        (rules.bomb, "a four of a kind + one card beats any play but a higher one"),
        (rules.revolution, "each four of a kind played inverts the rank order for the hand"),
        (rules.no_finish_on_lone_two, "you may not go out by leading a lone 2"),
        (rules.lowest_straight_beats_straights, "3-4-5-6-7 beats every other straight"),
        (rules.teams, "seats 0 and 2 play against seats 1 and 3"),
    ):
        if flag:
            lines.append(f"House rule: {words}.")
    goal = (
        "Win chips: the first seat out of cards collects from the others."
        if rules.scoring == "chips"
        else "Go out first: every card left in your hand costs penalty points."
    )
    lines.append(goal)
    return "\n".join(lines)


def _opening(rules: common.Rules) -> str:
    return "3C" if rules.suit_order != "diamonds-low" else "3D"


def system_message(rules: common.Rules, options: PromptOptions) -> str:
    parts = [
        "You play one seat of a card game against three other players. Each turn you get "
        "the state of the game and answer with one move.",
    ]
    if options.primer:
        parts.append(primer(rules))
    parts.append(ANSWER_FORMAT)
    if options.system:
        parts.append(options.system)
    return "\n\n".join(parts)


ANSWER_FORMAT = (
    'Answer with one JSON object and nothing after it: {"play": ["3D", "3S"]} to play '
    'those cards, or {"pass": true} to pass. Name cards as rank then suit (3D, TS, 2H).'
)


def _play_text(play: common.Play) -> str:
    return " ".join(play.cards)


def _legal(prompt: play_service.TurnPrompt, mode: str) -> list[str]:
    plays = list(prompt.legal_plays)
    if mode == "none":
        return []
    if mode == "grouped":
        groups: dict[str, list[str]] = {}
        for play in plays:
            kind = _KINDS.get(kind_name(play.combination), kind_name(play.combination))
            groups.setdefault(kind, []).append(_play_text(play))
        lines = [f"  {kind}: " + " | ".join(items) for kind, items in groups.items()]
    else:
        lines = ["  " + _play_text(play) for play in plays]
    if prompt.can_pass:
        lines.append("  pass")
    return [f"Your legal moves ({len(plays) + prompt.can_pass}):", *lines]


def state_text(prompt: play_service.TurnPrompt, options: PromptOptions) -> str:
    """The seat's view as text."""
    s = prompt.state
    me = prompt.seat
    counts = list(s.card_counts)
    lines = [
        f"You are seat {me}. Hand {s.hand_number}.",
        f"Your cards ({len(prompt.hand)}), low to high: {' '.join(prompt.hand)}",
        "Cards left: "
        + ", ".join(f"seat {i}{' (you)' if i == me else ''}: {n}" for i, n in enumerate(counts)),
    ]
    if s.HasField("table_seat") and s.table.cards:
        kind = kind_name(s.table.combination).replace("_", " ")
        lines.append(
            f"To beat: {_play_text(s.table)} (a {kind}, played by seat {s.table_seat}). "
            f"Play {len(s.table.cards)} cards that beat it, or pass."
        )
    else:
        need = f" It must hold {s.must_include}." if s.must_include else ""
        lines.append(f"You lead: the table is empty; play any play.{need}")
    if s.trick:
        moves = [
            f"seat {t.seat} passed" if t.pass_ else f"seat {t.seat} played {_play_text(t.play)}"
            for t in _trick(s)
        ]
        lines.append("This trick so far: " + "; ".join(moves))
    if any(s.locked_out):
        locked = [str(i) for i, out in enumerate(s.locked_out) if out]
        lines.append("Locked out of this trick: seat " + ", ".join(locked))
    if s.played_cards:
        lines.append(f"Played so far this hand: {' '.join(s.played_cards)}")
    if s.revolution:
        lines.append("A revolution is in force: rank order is inverted.")
    if s.totals:
        lines.append("Match totals: " + ", ".join(f"seat {i}: {t}" for i, t in enumerate(s.totals)))
    lines += _legal(prompt, options.legal_plays)
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True, slots=True)
class _TrickPlay:
    seat: int
    play: common.Play
    pass_: bool


def _trick(s: common.PublicState) -> list[_TrickPlay]:
    return [_TrickPlay(t.seat, t.play, getattr(t, "pass")) for t in s.trick]


def state_json(prompt: play_service.TurnPrompt, options: PromptOptions) -> str:
    """The seat's view as one JSON object."""
    s = prompt.state
    view: dict[str, Any] = {
        "you": prompt.seat,
        "hand_number": s.hand_number,
        "your_cards": list(prompt.hand),
        "card_counts": list(s.card_counts),
        "lead": not (s.HasField("table_seat") and s.table.cards),
        "must_include": s.must_include or None,
        "trick": [
            {"seat": t.seat, "pass": True}
            if t.pass_
            else {"seat": t.seat, "play": list(t.play.cards)}
            for t in _trick(s)
        ],
        "played_this_hand": list(s.played_cards),
        "locked_out": [i for i, out in enumerate(s.locked_out) if out],
        "revolution": s.revolution,
        "totals": list(s.totals),
        "can_pass": prompt.can_pass,
    }
    if not view["lead"]:
        view["to_beat"] = {
            "cards": list(s.table.cards),
            "kind": kind_name(s.table.combination),
            "seat": s.table_seat,
        }
    if options.legal_plays == "full":
        view["legal_plays"] = [list(p.cards) for p in prompt.legal_plays]
    elif options.legal_plays == "grouped":
        grouped: dict[str, list[list[str]]] = {}
        for p in prompt.legal_plays:
            grouped.setdefault(kind_name(p.combination), []).append(list(p.cards))
        view["legal_plays"] = grouped
    return json.dumps(view, separators=(",", ":"))


def turn_messages(
    rules: common.Rules, prompt: play_service.TurnPrompt, options: PromptOptions
) -> list[Message]:
    """The conversation of one turn's first attempt: system, then the state."""
    state = state_json(prompt, options) if options.format == "json" else state_text(prompt, options)
    return [
        {"role": "system", "content": system_message(rules, options)},
        {"role": "user", "content": state + "\n\nYour move?"},
    ]


def retry_messages(
    messages: Sequence[Message], answer: str, feedback: str, attempts_left: int
) -> list[Message]:
    """The conversation again with the model's answer and why it did not count: the
    referee's rejection (``ActionResult.message``) or the seat's parse fault."""
    left = f" You have {attempts_left} more attempt{'s' if attempts_left != 1 else ''}."
    return [
        *messages,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": f"That move was not accepted: {feedback}.{left} Your move?"},
    ]
