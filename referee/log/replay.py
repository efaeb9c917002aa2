"""A match log as readable text: hand by hand, trick by trick."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from referee.log.reader import EventVisitor, LogLine, LogRead, walk
from referee.protocol import common
from referee.protocol.names import (
    COMBINATION,
    DEFAULT_CAUSE,
    MATCH_STATUS,
    REJECTION_REASON,
    cause_phrase,
)
from referee.text import printable


def _combo(play: common.Play) -> str:
    return COMBINATION.text(play.combination).replace("_", " ")


def _default(cause: int) -> str:
    return f"  [default: {cause_phrase(DEFAULT_CAUSE.text(cause))}]" if cause else ""


def _name(names: list[str], seat: int) -> str:
    """A seat's label; a seat number no table has (a crafted log) is shown as such."""
    return names[seat] if 0 <= seat < len(names) else f"{seat}:no such seat"


def by_seat(names: Sequence[str], values: Sequence[int]) -> str:
    """Numbers of seats 0..3 labelled with their seats' names.

    >>> by_seat(["0:ann", "1:bob"], [12, 0])
    '0:ann 12, 1:bob 0'
    """
    return ", ".join(f"{_name(list(names), seat)} {value}" for seat, value in enumerate(values))


class Retold:
    """A bot that dies is told twice: its stream closes (a disconnect, "stream closed by
    the bot"), then whoever seated it reports the exit (a second disconnect, its bot gone:
    "its bot exited with status 1"). Fed every connect and disconnect in order, it says
    which disconnect retells an earlier one (no connect in between): that one is not
    shown again, and its cause, which says why, replaces the first one's.

    >>> retold = Retold()
    >>> retold.disconnect(0, "first"), retold.disconnect(0, "again"), retold.disconnect(1, "b")
    (None, 'first', None)
    >>> retold.connect(1); retold.disconnect(1, "b again") is None
    True
    """

    def __init__(self) -> None:
        self._first: dict[int, Any] = {}

    def connect(self, seat: int) -> None:
        self._first.pop(seat, None)

    def disconnect(self, seat: int, key: Any) -> Any:
        """None for a first telling (kept under ``key``), else the key of the telling this
        one repeats."""
        first = self._first.pop(seat, None)
        if first is None:
            self._first[seat] = key
        return first


def replay_lines(
    read: LogRead, *, show_rejections: bool = True, hand: int | None = None
) -> Iterator[str]:
    """The lines of the text replay of a log (only hand number ``hand`` when given), safe
    to print: names, causes and reasons come from bots and organisers, so control
    characters are shown as escapes."""
    replay = ReplayText(show_rejections=show_rejections, hand=hand)
    walk(read.lines, replay)
    for line in replay.lines:
        yield printable(line)
    if not read.complete:
        yield ""
        yield f"({read.status()})"


class ReplayText(EventVisitor):
    """A log visitor that writes the text replay: ``lines`` so far (not yet printable)."""

    def __init__(self, *, show_rejections: bool = True, hand: int | None = None) -> None:
        self.show_rejections = show_rejections
        self.hand = hand
        self.lines: list[str] = []
        self.names = [f"seat {i}" for i in range(4)]
        self.trick = 0
        self.showing = True
        self._retold = Retold()

    def visit(self, line: LogLine) -> None:
        ev = line.entry.event
        if ev.HasField("seat_connected"):
            self._retold.connect(ev.seat_connected.seat)
        elif ev.HasField("seat_disconnected"):
            sd = ev.seat_disconnected
            first = self._retold.disconnect(sd.seat, len(self.lines) if self.showing else -1)
            if first is not None:  # told again, with the reason: shown once, with it
                if first >= 0:
                    self.lines[first] = f"  [{_name(self.names, sd.seat)} disconnected: {sd.cause}]"
                return
        elif ev.HasField("hand_dealt"):
            self.showing = self.hand is None or ev.hand_dealt.hand_number == self.hand
        if self.showing or ev.HasField("match_created") or ev.HasField("match_ended"):
            super().visit(line)

    def match_created(self, line: LogLine, body: common.MatchCreated) -> None:
        names = self.names = [
            f"{i}:{n}" for i, n in enumerate(body.config.seat_names)
        ] or self.names
        rules = body.config.rules
        self.lines += [
            f"Match {line.entry.match_id} ({rules.profile}, ends after {rules.match_end})",
            f"  seats: {', '.join(names)}",
            f"  seed commitment: {body.seed_commitment}",
            f"  referee {body.software_version}, protocol {body.protocol_version}",
        ]

    def seat_connected(self, line: LogLine, body: common.SeatConnected) -> None:
        again = "reconnected" if body.reconnect else "connected"
        bot = f" ({body.bot_name})" if body.bot_name else ""
        self.lines.append(f"  [{_name(self.names, body.seat)} {again}{bot}]")

    def seat_disconnected(self, line: LogLine, body: common.SeatDisconnected) -> None:
        self.lines.append(f"  [{_name(self.names, body.seat)} disconnected: {body.cause}]")

    def referee_restarted(self, line: LogLine, body: common.RefereeRestarted) -> None:
        n = body.cut_entries
        cut = f", {n} {'entry' if n == 1 else 'entries'} of an unfinished decision cut off"
        cut = cut if n else ""
        torn = f", {body.torn_bytes} bytes of a torn line cut off" if body.torn_bytes else ""
        self.lines.append(
            f"  [the referee restarted ({body.software_version}{cut}{torn}): every seat reconnects]"
        )

    def hand_dealt(self, line: LogLine, body: common.HandDealt) -> None:
        names = self.names
        self.trick = 1
        self.lines += ["", f"Hand {body.hand_number}"]
        for dealt in body.hands:
            self.lines.append(f"  {_name(names, dealt.seat):>12}: {' '.join(dealt.cards)}")
        must = f", must include {body.must_include}" if body.must_include else ""
        self.lines += [f"  {_name(names, body.leader)} leads{must}", f"  Trick {self.trick}"]

    def action_rejected(self, line: LogLine, body: common.ActionRejected) -> None:
        if self.show_rejections:
            what = "pass" if getattr(body, "pass") else " ".join(body.cards) or "(nothing)"
            reason = REJECTION_REASON.text(body.reason)
            who = _name(self.names, body.seat)
            self.lines.append(f"    {who} tried {what}: rejected, {reason} ({body.message})")

    def played(self, line: LogLine, body: common.Played) -> None:
        note = _default(body.default_cause)
        rev = "  [revolution]" if body.revolution else ""
        self.lines.append(
            f"    {_name(self.names, body.seat)} plays {' '.join(body.play.cards)} "
            f"({_combo(body.play)}), {body.cards_left} left, {body.elapsed_ms} ms{note}{rev}"
        )

    def passed(self, line: LogLine, body: common.Passed) -> None:
        note = _default(body.default_cause)
        forced = " (forced: lone 2)" if body.forced_lead_pass else ""
        self.lines.append(
            f"    {_name(self.names, body.seat)} passes{forced}, {body.elapsed_ms} ms{note}"
        )

    def trick_cleared(self, line: LogLine, body: common.TrickCleared) -> None:
        self.trick += 1
        self.lines += [
            f"    -> {_name(self.names, body.leader)} wins the trick",
            f"  Trick {self.trick}",
        ]

    def hand_ended(self, line: LogLine, body: common.HandEnded) -> None:
        names = self.names
        self.lines.append(
            f"  {_name(names, body.winner)} goes out and wins hand {body.hand_number}"
        )
        for left in body.hands:
            if left.seat != body.winner:
                cards = " ".join(left.cards)
                self.lines.append(
                    f"  {_name(names, left.seat):>12}: {len(left.cards):2d} left  {cards}"
                )
        self.lines += [
            f"  scores: {by_seat(names, body.scores)}",
            f"  totals: {by_seat(names, body.totals)}",
        ]

    def match_ended(self, line: LogLine, body: common.MatchEnded) -> None:
        names = self.names
        status = MATCH_STATUS.text(body.status)
        reason = f": {body.cancel_reason}" if body.cancel_reason else ""
        self.lines += ["", f"Match {status}{reason}"]
        for st in body.standings:
            who = " + ".join(_name(names, s) for s in st.seats)
            self.lines.append(f"  {st.place}. {who}  total {st.total}, hands won {st.hands_won}")
        if any(body.strikes):
            self.lines.append(f"  strikes: {list(body.strikes)}")
        self.lines.append(f"  seed: {body.seed}")
