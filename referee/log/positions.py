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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from referee.log.hands import HandError, HandTracker
from referee.log.reader import EventVisitor, LogLine, LogRead, read_log, walk
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


class PositionFinder(EventVisitor):
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

    def match_created(self, line: LogLine, body: common.MatchCreated) -> None:
        self.rules = _rules(line, body.config.rules)
        self.options = _overrides(self.rules)
        self.match_id = line.entry.match_id

    def hand_dealt(self, line: LogLine, body: common.HandDealt) -> None:
        _deal(line, self.rules, self.tracker, body)
        self.hand_number = body.hand_number

    def turn_started(self, line: LogLine, body: common.TurnStarted) -> None:
        seat, rules = self.seat, self.rules
        if body.seat != seat:
            return
        hand = self.tracker.hand
        if hand is None or rules is None or hand.turn != seat:
            raise PositionsError(line.number, f"seat {seat} is prompted out of turn")
        request = _request(rules, self.options, hand, seat)
        request["about"] = {
            "match_id": self.match_id,
            "hand_number": self.hand_number,
            "turn_id": body.turn_id,
            "seat": seat,
        }
        self.open_turn = _Open(request, body.turn_id, [])

    def action_rejected(self, line: LogLine, body: common.ActionRejected) -> None:
        open_turn = self.open_turn
        if open_turn is not None and body.seat == self.seat and body.turn_id == open_turn.turn_id:
            assert self.rules is not None
            answer: dict[str, Any] = {}
            text = _answer(self.rules, list(body.cards), getattr(body, "pass"))
            if text is not None:
                answer["play"] = text
            answer["legal"] = False
            answer["reason"] = PB_TO_REASON[body.reason].value if body.reason else "unknown"
            open_turn.answers.append(answer)

    def move(
        self, line: LogLine, body: common.Played | common.Passed, cards: Sequence[str] | None
    ) -> None:
        rules, tracker, open_turn = self.rules, self.tracker, self.open_turn
        kind = line.kind
        if tracker.hand is None or rules is None:
            raise PositionsError(line.number, f"{kind} before any deal")
        played = list(cards) if cards is not None else []
        if open_turn is not None and body.turn_id == open_turn.turn_id:
            self.found.append(_close(rules, open_turn, played, cards is None, body.default_cause))
            self.open_turn = None
        try:
            tracker.move(body.seat, played, is_pass=cards is None)
        except HandError as exc:
            raise PositionsError(
                line.number, f"seat {body.seat}'s action does not follow the rules: {exc}"
            ) from None

    def hand_ended(self, line: LogLine, body: common.HandEnded) -> None:
        self.tracker.end()

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
