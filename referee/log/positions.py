"""The positions a seat met in a match log, as reference-judge requests.

One request per prompt the seat received (a ``turn_started`` for that seat), holding what
the judge needs to rebuild the position (rules, hand, table, opening card, revolution,
lone-2 state) and, as ``play``, the answer the bot gave. Everything else about the turn
(match, hand, turn id, every answer with its verdict, a default action) goes under
``about``, which the judge ignores. A bot author feeds the lines to ``referee rules
judge`` or ``referee rules moves`` to test a move generator on positions the bot met.

The log is folded through the rules engine from the deals it records. Fields and event
kinds this version does not know are skipped, so newer logs can be read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.log.hands import HandError, HandTracker
from referee.log.reader import LogLine, LogRead, read_log, walk
from referee.protocol import common
from referee.protocol.convert import PB_TO_REASON, rules_from_pb
from referee.protocol.names import DEFAULT_CAUSE
from referee.rules import (
    PROFILES,
    HandState,
    Rules,
    RulesError,
    card_text,
    format_cards,
    parse_cards,
)


class PositionsError(ValueError):
    """A log that cannot be followed: its events contradict the rules or each other."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclasses.dataclass
class _Open:
    """A prompt of the seat whose turn is not over yet."""

    request: dict[str, Any]
    turn_id: int
    answers: list[dict[str, Any]]


# The options that can change the judge's verdict; the others (direction, lock-out,
# scoring, match end, ...) act through the turn order and the score, which a position
# already reflects.
_JUDGE_OPTIONS = (
    "suit_order",
    "five_card_categories",
    "straights",
    "five_card_hands",
    "lowest_straight_beats_straights",
    "no_finish_on_lone_two",
    "revolution",
    "bomb",
)


def _overrides(rules: Rules) -> dict[str, Any]:
    """The options that matter to the judge and differ from the profile's values."""
    base = PROFILES[rules.profile].options()
    now = rules.options()
    return {k: now[k] for k in _JUDGE_OPTIONS if base[k] != now[k]}


def _answer(rules: Rules, cards: list[str], is_pass: bool) -> str | None:
    """An action as judge text: canonical cards or "pass"; None when it had no cards."""
    if is_pass:
        return "pass"
    if not cards:
        return None
    try:
        return format_cards(parse_cards(cards), rules.suit_order)
    except RulesError:
        return " ".join(cards)  # unreadable as sent: keep it so the judge says why


def positions(read: LogRead, seat: int) -> Iterator[dict[str, Any]]:
    """Every position ``seat`` was prompted in, in log order, as a judge request."""
    finder = PositionFinder(seat)
    walk(read.lines, finder)
    return iter(finder.finish())


class PositionFinder:
    """A log visitor that collects the positions one seat was prompted in; ``finish``
    closes a turn the log ended in. PositionsError at a line it cannot follow."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.found: list[dict[str, Any]] = []
        self.rules: Rules | None = None
        self.options: dict[str, Any] = {}
        self.match_id = ""
        self.tracker = HandTracker()
        self.hand_number = 0
        self.open_turn: _Open | None = None

    def visit(self, line: LogLine) -> None:
        seat, rules, tracker, open_turn = self.seat, self.rules, self.tracker, self.open_turn
        ev = line.entry.event
        kind = ev.WhichOneof("kind")
        if kind == "match_created":
            self.rules = _rules(line, ev.match_created.config.rules)
            self.options = _overrides(self.rules)
            self.match_id = line.entry.match_id
        elif kind == "hand_dealt":
            _deal(line, rules, tracker, ev.hand_dealt)
            self.hand_number = ev.hand_dealt.hand_number
        elif kind == "turn_started" and ev.turn_started.seat == seat:
            hand = tracker.hand
            if hand is None or rules is None or hand.turn != seat:
                raise PositionsError(line.number, f"seat {seat} is prompted out of turn")
            request = _request(rules, self.options, hand, seat)
            request["about"] = {
                "match_id": self.match_id,
                "hand_number": self.hand_number,
                "turn_id": ev.turn_started.turn_id,
                "seat": seat,
            }
            self.open_turn = _Open(request, ev.turn_started.turn_id, [])
        elif kind == "action_rejected":
            rej = ev.action_rejected
            if open_turn is not None and rej.seat == seat and rej.turn_id == open_turn.turn_id:
                assert rules is not None
                answer: dict[str, Any] = {}
                text = _answer(rules, list(rej.cards), getattr(rej, "pass"))
                if text is not None:
                    answer["play"] = text
                answer["legal"] = False
                answer["reason"] = PB_TO_REASON[rej.reason].value if rej.reason else "unknown"
                open_turn.answers.append(answer)
        elif kind in ("played", "passed"):
            done = ev.played if kind == "played" else ev.passed
            cards = list(ev.played.play.cards) if kind == "played" else []
            if tracker.hand is None or rules is None:
                raise PositionsError(line.number, f"{kind} before any deal")
            if open_turn is not None and done.turn_id == open_turn.turn_id:
                self.found.append(
                    _close(rules, open_turn, cards, kind == "passed", done.default_cause)
                )
                self.open_turn = None
            try:
                tracker.move(done.seat, cards, is_pass=kind == "passed")
            except HandError as exc:
                raise PositionsError(
                    line.number, f"seat {done.seat}'s action does not follow the rules: {exc}"
                ) from None
        elif kind == "hand_ended":
            tracker.end()

    def finish(self) -> list[dict[str, Any]]:
        """The positions found; one the log ended in is closed without an answer."""
        if self.open_turn is not None:
            self.found.append(
                _close(self.rules or PROFILES["pusoy-dos"], self.open_turn, None, False, 0)
            )
            self.open_turn = None
        return self.found


def _rules(line: LogLine, msg: common.Rules) -> Rules:
    try:
        return rules_from_pb(msg)
    except RulesError as exc:
        raise PositionsError(line.number, f"the match's rules cannot be read: {exc}") from None


def _deal(line: LogLine, rules: Rules | None, tracker: HandTracker, hd: common.HandDealt) -> None:
    if rules is None:
        raise PositionsError(line.number, "a deal before match_created")
    hands = [(sc.seat, sc.cards) for sc in hd.hands]
    try:
        tracker.deal(rules, hands, hd.leader, hd.must_include)
    except HandError as exc:
        raise PositionsError(line.number, f"the deal cannot be read: {exc}") from None


def _request(rules: Rules, options: dict[str, Any], hand: HandState, seat: int) -> dict[str, Any]:
    order = rules.suit_order
    req: dict[str, Any] = {"profile": rules.profile}
    if options:
        req["options"] = options
    req["hand"] = format_cards(hand.hands[seat], order)
    if hand.table is not None:
        req["table"] = format_cards(hand.table.mask, order)
    elif hand.must_include:
        req["lead_must_include"] = card_text(hand.must_include.bit_length() - 1)
    if hand.revolution:
        req["revolution"] = True
    if hand.lone_two_rule != rules.no_finish_on_lone_two:
        req["lone_two_rule"] = hand.lone_two_rule
    return req


def _close(
    rules: Rules, turn: _Open, cards: list[str] | None, is_pass: bool, cause: int
) -> dict[str, Any]:
    """The finished request: the bot's last answer as ``play``, the rest under ``about``."""
    about = turn.request["about"]
    if cards is not None and not cause:
        text = _answer(rules, cards, is_pass)
        turn.answers.append({"play": text, "legal": True})
    if cause:
        about["default"] = DEFAULT_CAUSE.names.get(cause, "unknown")
    about["answers"] = turn.answers
    last = next((a["play"] for a in reversed(turn.answers) if "play" in a), None)
    out = {k: v for k, v in turn.request.items() if k != "about"}
    if last is not None:
        out["play"] = last
    out["about"] = about
    return out


def read_positions(path: Path, seat: int) -> tuple[LogRead, list[dict[str, Any]]]:
    """Read a log (skipping what this version does not know) and list a seat's positions."""
    read = read_log(path, ignore_unknown=True)
    return read, list(positions(read, seat))
