"""Fold a match's events into the viewer's data: one small JSON "op" per event.

The page is a renderer with no rules engine of its own. Whatever needs the rules is
worked out here, once, with the engine: the legal plays of the acting seat at each move
(only when the deal is known, so never from a spectator's public stream), the name of a
combination ("full house, kings"), which pass locks a seat out, whether the revealed seed
matches the commitment. The same folder serves a whole log (``referee view``) and a live
match's public events (``referee serve --http``), so both pages read the same ops.

The folder is lenient: it reads the JSON mapping of events, not the protobuf classes, so
that fields it does not know are ignored and an event kind it does not know becomes a
generic ``other`` op; an event that breaks the rules still becomes an op (the engine just
stops being consulted for the rest of that hand). Judging the log is ``verify``'s job.

Ops (``t`` is the type; every op has ``seq``, the event's sequence number or line):

- ``match``: id, profile, rules, seats (names), time, faults, drills, commitment, software
- ``seat``: seat, on (connected or not), reconnect, bot, cause, gone (its bot ended: the
  cause says how, "its bot exited with status 1")
- ``deal``: hand, cards (four lists, or null when hidden), counts, leader, must
- ``turn``: seat, turn, bank (a prompt; its time bank), deadline (ms since the epoch, the
  turn's end before the bank), turn_ms (the turn time)
- ``reject``: seat, turn, cards, pass, reason, message, ms, attempt, late
- ``move``: seat, turn, pass, cards, kind, label, ms, cause, strikes, rev, left, forced,
  locks, bank (the seat's time bank after the move, as the machine charges it), legal
  ({pass, plays: {kind: [subset of the seat's cards as index bits]}} or null), illegal
  (what the engine said, for a move that breaks the rules)
- ``clear``: leader (the trick is over)
- ``hand_end``: hand, winner, cards (four lists), scores, totals
- ``end``: status, standings, seed, seed_ok, totals, reason, strikes
- ``restart``: software, torn, cut (the referee restarted and resumed the match here)
- ``trailer``: algorithm, key, lines, final_hash (the signature line after the log)
- ``other``: kind, text (an event kind this version does not know)
- ``bad``: problem (a line that is not an event at all)
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from referee.log.fastjson import json_int
from referee.log.hands import HandError, HandTracker
from referee.log.reader import BadLine, LooseLine, TrailerLine, read_lenient, walk
from referee.match.settings import DEFAULT_TURN_TIME_MS
from referee.protocol import common
from referee.protocol.convert import rules_from_pb
from referee.protocol.names import (
    COMBINATION,
    DEFAULT_CAUSE,
    MATCH_STATUS,
    REJECTION_REASON,
    EnumNames,
)
from referee.rules import (
    SEATS,
    Context,
    Rules,
    RulesError,
    context_for,
    parse_card,
    parse_cards,
)
from referee.view.labels import KIND_NAMES, play_label

Op = dict[str, Any]

MAX_TEXT = 300
"""Display strings from a log (names, messages) are cut to this many characters."""
MAX_CARD_TEXT = 16
MAX_CARDS = 52


def text(value: Any, limit: int = MAX_TEXT) -> str:
    """A display string of at most ``limit`` characters (more is cut and marked)."""
    out = value if isinstance(value, str) else ""
    if value is not None and not isinstance(value, str):
        out = json.dumps(value, ensure_ascii=False)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def whole(value: Any, default: int = 0) -> int:
    """An integer field of the JSON mapping (uint64 arrive as strings)."""
    if isinstance(value, bool):
        return int(value)
    number = json_int(value)
    return default if number is None else number


def _enum(value: Any, names: EnumNames) -> str:
    """An enum value of the JSON mapping (a name, or a number) as the house writes it."""
    return text(names.json_text(value), 60)


def _four(values: Any) -> list[int]:
    """Per-seat numbers (proto3 JSON leaves trailing zeros in place; missing ones are 0)."""
    seq = values if isinstance(values, list) else []
    out = [whole(v) for v in seq[:SEATS]]
    return out + [0] * (SEATS - len(out))


def _cards(values: Any) -> list[str]:
    seq = values if isinstance(values, list) else []
    return [text(c, MAX_CARD_TEXT) for c in seq[:MAX_CARDS]]


def unix_us(value: Any) -> int | None:
    """An RFC 3339 time of the JSON mapping (``2026-12-01T10:15:00.123456Z``) as µs since
    the epoch; None when it is not one.

    >>> unix_us("1970-01-01T00:00:01.5Z"), unix_us("soon")
    (1500000, None)
    """
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    delta = when - datetime.fromisoformat("1970-01-01T00:00:00+00:00")
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _seat(value: Any) -> int | None:
    seat = whole(value)
    return seat if 0 <= seat < SEATS else None


def _scalars(values: Any) -> dict[str, Any]:
    """A settings message as a flat table of display values."""
    if not isinstance(values, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, value in list(values.items())[:64]:
        if isinstance(value, bool | int | float):
            out[text(key, 60)] = value
        else:
            out[text(key, 60)] = text(value, 120)
    return out


def _clocks(values: Any) -> dict[str, Any]:
    """The time control as display values, each seat's own clock in words."""
    out = _scalars(values)
    clocks = values.get("seat_clocks") if isinstance(values, Mapping) else None
    if isinstance(clocks, list):
        words = []
        for c in clocks[:4]:
            if isinstance(c, Mapping):
                bank = whole(c.get("time_bank_ms"))
                words.append(
                    f"seat {whole(c.get('seat'))}: {whole(c.get('turn_time_ms'))} ms a turn"
                    + (f", bank {bank} ms" if bank else "")
                )
        out["seat_clocks"] = "; ".join(words)
    return out


def _seat_lists(hands: Any) -> list[list[str]] | None:
    """Four seats' cards from a list of SeatCards, or None when any is missing."""
    out: list[list[str] | None] = [None] * SEATS
    for sc in hands if isinstance(hands, list) else []:
        if not isinstance(sc, Mapping):
            continue
        seat = _seat(sc.get("seat"))
        if seat is not None and sc.get("cards"):
            out[seat] = _cards(sc.get("cards"))
    if any(h is None for h in out):
        return None
    return [h for h in out if h is not None]


def _counts(hands: Any) -> list[int]:
    counts = [0] * SEATS
    for sc in hands if isinstance(hands, list) else []:
        if isinstance(sc, Mapping):
            seat = _seat(sc.get("seat"))
            if seat is not None:
                counts[seat] = whole(sc.get("count")) or len(_cards(sc.get("cards")))
    return counts


def _mask(cards: Sequence[str]) -> int | None:
    try:
        return parse_cards(list(cards))
    except RulesError:
        return None


class Folder:
    """Turns (seq, event) pairs into ops, in order; one instance per match."""

    def __init__(self, match_id: str = "") -> None:
        self.match_id = match_id
        self.rules: Rules | None = None
        self.ctx: Context | None = None
        self.commitment = ""
        self.tracker = HandTracker()
        """The engine's view of the current hand; None when unknown or after a bad move."""
        self.cards: list[list[str]] | None = None
        """Each seat's cards now, as the page tracks them (the deal less the plays)."""
        self.turn_ms = [DEFAULT_TURN_TIME_MS] * SEATS
        """Each seat's time per turn (ms): the match's, or the seat's own clock's."""
        self.banks = [0] * SEATS
        """Each seat's time bank (ms), as the last prompt said and its moves since spent."""

    def feed(self, seq: int, event: Any) -> Op:
        """The op of one event (the ``event`` object of a log entry)."""
        if not isinstance(event, Mapping) or len(event) != 1:
            return {"t": "bad", "seq": seq, "problem": "the entry holds no single event"}
        ((kind, payload),) = event.items()
        if not isinstance(payload, Mapping):
            payload = {}
        handler = getattr(self, f"_on_{kind}", None) if kind in _KINDS else None
        if handler is None:
            return {"t": "other", "seq": seq, "kind": text(kind, 60), "text": text(payload)}
        op: Op = handler(payload)
        op["seq"] = seq
        return op

    # -- events -------------------------------------------------------------------

    def _on_match_created(self, p: Mapping[str, Any]) -> Op:
        config = p.get("config") if isinstance(p.get("config"), Mapping) else {}
        assert isinstance(config, Mapping)
        raw_rules = config.get("rules")
        if not isinstance(raw_rules, Mapping):
            raw_rules = {}
        try:
            msg = json_format.ParseDict(dict(raw_rules), common.Rules(), ignore_unknown_fields=True)
            self.rules = rules_from_pb(msg)
            self.ctx = context_for(self.rules)
        except (json_format.ParseError, RulesError, ValueError, TypeError):
            self.rules = self.ctx = None
        rules: dict[str, Any] = _scalars(raw_rules)
        if self.rules is not None:
            rules = {"profile": self.rules.profile, **self.rules.options()}
        names = config.get("seat_names")
        names = names if isinstance(names, list) else []
        seats = [text(names[s]) if s < len(names) else f"seat {s}" for s in range(SEATS)]
        self.commitment = text(p.get("seed_commitment"), 128)
        clocks = config.get("time_control")
        clocks = clocks if isinstance(clocks, Mapping) else {}
        self.turn_ms = [whole(clocks.get("turn_time_ms")) or DEFAULT_TURN_TIME_MS] * SEATS
        self.banks = [max(0, whole(clocks.get("time_bank_ms")))] * SEATS
        self._seat_clocks(clocks.get("seat_clocks"))
        return {
            "t": "match",
            "id": text(self.match_id, 100),
            "profile": text(rules.get("profile", ""), 60),
            "rules": rules,
            "seats": seats,
            "time": _clocks(config.get("time_control")),
            "faults": _scalars(config.get("fault_policy")),
            "drills": _scalars(config.get("drills")),
            "commitment": self.commitment,
            "software": text(p.get("software_version"), 60),
            "protocol": whole(p.get("protocol_version")),
        }

    def _seat_clocks(self, clocks: object) -> None:
        """Seats with clocks of their own (``time_control.seat_clocks``)."""
        for clock in clocks if isinstance(clocks, list) else []:
            if not isinstance(clock, Mapping):
                continue
            seat = _seat(clock.get("seat", 0))
            if seat is not None:
                self.turn_ms[seat] = whole(clock.get("turn_time_ms")) or self.turn_ms[seat]
                self.banks[seat] = max(0, whole(clock.get("time_bank_ms")))

    def _on_seat_connected(self, p: Mapping[str, Any]) -> Op:
        return {
            "t": "seat",
            "seat": _seat(p.get("seat")),
            "on": True,
            "reconnect": bool(p.get("reconnect")),
            "bot": text(p.get("bot_name", "")),
        }

    def _on_seat_disconnected(self, p: Mapping[str, Any]) -> Op:
        return {
            "t": "seat",
            "seat": _seat(p.get("seat")),
            "on": False,
            "cause": text(p.get("cause", "")),
            "gone": bool(p.get("gone")),
        }

    def _on_hand_dealt(self, p: Mapping[str, Any]) -> Op:
        hands = p.get("hands")
        cards = _seat_lists(hands)
        leader = _seat(p.get("leader")) or 0
        must = text(p.get("must_include", ""), MAX_CARD_TEXT)
        self.cards = [list(h) for h in cards] if cards is not None else None
        self.tracker.end()
        if cards is not None and self.rules is not None:
            with contextlib.suppress(HandError):  # the hand stays unknown
                self.tracker.deal(self.rules, enumerate(cards), leader, must)
        return {
            "t": "deal",
            "hand": whole(p.get("hand_number")),
            "cards": cards,
            "counts": _counts(hands),
            "leader": leader,
            "must": must,
        }

    def _on_turn_started(self, p: Mapping[str, Any]) -> Op:
        seat = _seat(p.get("seat"))
        bank = max(0, whole(p.get("time_bank_ms")))
        if seat is not None:
            self.banks[seat] = bank
        deadline = unix_us(p.get("deadline"))
        return {
            "t": "turn",
            "seat": seat,
            "turn": whole(p.get("turn_id")),
            "bank": bank,
            "deadline": deadline // 1000 if deadline is not None else None,
            "turn_ms": self.turn_ms[seat] if seat is not None else self.turn_ms[0],
        }

    def _on_action_rejected(self, p: Mapping[str, Any]) -> Op:
        return {
            "t": "reject",
            "seat": _seat(p.get("seat")),
            "turn": whole(p.get("turn_id")),
            "cards": _cards(p.get("cards")),
            "pass": bool(p.get("pass")),
            "reason": _enum(p.get("reason"), REJECTION_REASON),
            "message": text(p.get("message", "")),
            "ms": whole(p.get("elapsed_ms")),
            "attempt": whole(p.get("attempt")),
            "late": bool(p.get("late")),
        }

    def _on_played(self, p: Mapping[str, Any]) -> Op:
        return self._move(p, is_pass=False)

    def _on_passed(self, p: Mapping[str, Any]) -> Op:
        return self._move(p, is_pass=True)

    def _move(self, p: Mapping[str, Any], *, is_pass: bool) -> Op:
        seat = _seat(p.get("seat"))
        if seat is None:
            return {"t": "other", "kind": "played" if not is_pass else "passed", "text": text(p)}
        play = p.get("play") if isinstance(p.get("play"), Mapping) else {}
        assert isinstance(play, Mapping)
        cards = [] if is_pass else _cards(play.get("cards"))
        op: Op = {"t": "move", "seat": seat, "turn": whole(p.get("turn_id"))}
        if is_pass:
            op["pass"] = True
            forced = bool(p.get("forced_lead_pass"))
            if forced:
                op["forced"] = True
            elif self.rules is not None and self.rules.pass_locks_out:
                op["locks"] = True
        else:
            kind = _enum(play.get("combination"), COMBINATION)
            mask = _mask(cards)
            label = play_label(self.ctx, mask) if self.ctx and mask else ""
            op |= {
                "cards": cards,
                "kind": kind,
                "label": label or kind.replace("_", " "),
                "rev": bool(p.get("revolution")),
                "left": whole(p.get("cards_left")),
            }
        op["ms"] = whole(p.get("elapsed_ms"))
        number = DEFAULT_CAUSE.number(p.get("default_cause"))
        cause = DEFAULT_CAUSE.text(number) if number else ""
        if cause:
            op["cause"] = cause
        if cause == "timeout":
            self.banks[seat] = 0
        elif not cause and op["ms"] > self.turn_ms[seat]:
            self.banks[seat] = max(0, self.banks[seat] - (op["ms"] - self.turn_ms[seat]))
        op["bank"] = self.banks[seat]
        op["strikes"] = whole(p.get("strikes"))
        op["legal"] = self._legal(seat)
        self._apply(op, seat, cards, is_pass)
        return op

    def _legal(self, seat: int) -> Op | None:
        """The seat's legal plays before its move, as subsets of its cards (index bits)."""
        hand, cards = self.tracker.hand, self.cards
        if hand is None or cards is None or hand.is_over or hand.turn != seat:
            return None
        bit_of = {1 << parse_card(c): 1 << i for i, c in enumerate(cards[seat])}
        plays = hand.legal_plays(seat)
        classify = hand.ctx.classify
        groups: dict[str, list[int]] = {}
        for mask in plays.masks:
            bits = 0
            rest = mask
            while rest:
                low = rest & -rest
                bit = bit_of.get(low)
                if bit is None:
                    return None  # the page's cards and the engine's disagree
                bits |= bit
                rest ^= low
            n = mask.bit_count()
            name = _SMALL_KINDS.get(n)
            if name is None:
                combo = classify(mask)
                name = KIND_NAMES[combo.kind] if combo is not None else "?"
            groups.setdefault(name, []).append(bits)
        return {"pass": plays.can_pass, "plays": groups}

    def _apply(self, op: Op, seat: int, cards: list[str], is_pass: bool) -> None:
        if self.cards is not None:
            gone = set(cards)
            self.cards[seat] = [c for c in self.cards[seat] if c not in gone]
        try:
            self.tracker.move(seat, cards, is_pass=is_pass)
        except HandError as error:
            op["illegal"] = text(error.message)

    def _on_referee_restarted(self, p: Mapping[str, Any]) -> Op:
        return {
            "t": "restart",
            "software": text(p.get("software_version"), 60),
            "torn": whole(p.get("torn_bytes")),
            "cut": whole(p.get("cut_entries")),
        }

    def _on_trick_cleared(self, p: Mapping[str, Any]) -> Op:
        return {"t": "clear", "leader": _seat(p.get("leader"))}

    def _on_hand_ended(self, p: Mapping[str, Any]) -> Op:
        hands = p.get("hands")
        cards: list[list[str]] = [[] for _ in range(SEATS)]
        for sc in hands if isinstance(hands, list) else []:
            if isinstance(sc, Mapping):
                seat = _seat(sc.get("seat"))
                if seat is not None:
                    cards[seat] = _cards(sc.get("cards"))
        self.tracker.end()
        self.cards = None
        return {
            "t": "hand_end",
            "hand": whole(p.get("hand_number")),
            "winner": _seat(p.get("winner")),
            "cards": cards,
            "scores": _four(p.get("scores")),
            "totals": _four(p.get("totals")),
        }

    def _on_match_ended(self, p: Mapping[str, Any]) -> Op:
        seed = p.get("seed") if isinstance(p.get("seed"), str) else ""
        assert isinstance(seed, str)
        standings = []
        raw = p.get("standings")
        for st in raw[:SEATS] if isinstance(raw, list) else []:
            if isinstance(st, Mapping):
                seats = st.get("seats")
                standings.append(
                    {
                        "place": whole(st.get("place")),
                        "seats": [
                            s
                            for s in (_seat(x) for x in (seats if isinstance(seats, list) else []))
                            if s is not None
                        ]
                        or [0],
                        "total": whole(st.get("total")),
                        "won": whole(st.get("hands_won")),
                    }
                )
        seed_ok = None
        if seed:
            seed_ok = hashlib.sha256(seed.encode("utf-8")).hexdigest() == self.commitment
        self.tracker.end()
        return {
            "t": "end",
            "status": _enum(p.get("status"), MATCH_STATUS),
            "standings": standings,
            "seed": text(seed, 200),
            "seed_ok": seed_ok,
            "totals": _four(p.get("totals")),
            "reason": text(p.get("cancel_reason", "")),
            "strikes": _four(p.get("strikes")),
        }


_SMALL_KINDS = {1: "single", 2: "pair", 3: "triple"}
_KINDS = frozenset(
    {
        "match_created",
        "seat_connected",
        "seat_disconnected",
        "hand_dealt",
        "turn_started",
        "action_rejected",
        "played",
        "passed",
        "trick_cleared",
        "hand_ended",
        "match_ended",
        "referee_restarted",
    }
)


# -- a whole log file ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class FoldedLog:
    match_id: str
    ops: list[Op]
    lines: int
    truncated: bool
    raw: bytes
    times: list[int | None] = dataclasses.field(default_factory=list)
    """When each op's event was decided (µs since the epoch; None when unknown)."""


class LogFolder:
    """A visitor over the lenient reader's lines: each line becomes an op, a line that is
    not an entry a ``bad`` op, the trailer a ``trailer`` op."""

    def __init__(self) -> None:
        self.folder = Folder()
        self.ops: list[Op] = []
        self.times: list[int | None] = []

    def visit(self, line: LooseLine | TrailerLine | BadLine) -> None:
        if isinstance(line, BadLine):
            op: Op = {"t": "bad", "seq": line.number, "problem": text(line.problem)}
            when = None
        elif isinstance(line, TrailerLine):
            body = line.body
            op = {
                "t": "trailer",
                "seq": line.number,
                "algorithm": text(body.get("algorithm", ""), 40),
                "key": text(body.get("public_key", ""), 200),
                "lines": whole(body.get("lines")),
                "final_hash": text(body.get("final_hash", ""), 128),
            }
            when = None
        else:
            if line.number == 1:
                self.folder.match_id = text(line.data.get("match_id", ""), 100)
            op = self.folder.feed(line.number, line.data.get("event"))
            when = unix_us(line.data.get("time"))
        self.ops.append(op)
        self.times.append(when)


def fold_log(path: Path) -> FoldedLog:
    """Every line of a log file as ops, through the one reader (lenient: nothing in a line
    stops the fold). LogTooLarge and OSError for the file itself."""
    read = read_lenient(path)
    folder = LogFolder()
    walk(read.lines, folder)
    return FoldedLog(
        folder.folder.match_id,
        folder.ops,
        read.whole_lines,
        read.truncated,
        read.data,
        folder.times,
    )
