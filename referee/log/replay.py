"""A match log as readable text: hand by hand, trick by trick."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from referee.log.reader import LogLine, LogRead, walk
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


class ReplayText:
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
        self.lines.extend(self._text(line))

    def _text(self, line: LogLine) -> Iterator[str]:
        names, trick, showing, hand = self.names, self.trick, self.showing, self.hand
        show_rejections = self.show_rejections
        ev = line.entry.event
        kind = ev.WhichOneof("kind")
        if kind == "hand_dealt":
            showing = self.showing = hand is None or ev.hand_dealt.hand_number == hand
        if not showing and kind not in ("match_created", "match_ended"):
            return
        if kind == "match_created":
            mc = ev.match_created
            names = self.names = [f"{i}:{n}" for i, n in enumerate(mc.config.seat_names)] or names
            rules = mc.config.rules
            yield f"Match {line.entry.match_id} ({rules.profile}, ends after {rules.match_end})"
            yield f"  seats: {', '.join(names)}"
            yield f"  seed commitment: {mc.seed_commitment}"
            yield f"  referee {mc.software_version}, protocol {mc.protocol_version}"
        elif kind == "seat_connected":
            sc = ev.seat_connected
            again = "reconnected" if sc.reconnect else "connected"
            yield f"  [{_name(names, sc.seat)} {again}{f' ({sc.bot_name})' if sc.bot_name else ''}]"
        elif kind == "seat_disconnected":
            sd = ev.seat_disconnected
            yield f"  [{_name(names, sd.seat)} disconnected: {sd.cause}]"
        elif kind == "referee_restarted":
            rr = ev.referee_restarted
            n = rr.cut_entries
            cut = f", {n} {'entry' if n == 1 else 'entries'} of an unfinished decision cut off"
            cut = cut if n else ""
            torn = f", {rr.torn_bytes} bytes of a torn line cut off" if rr.torn_bytes else ""
            yield (
                f"  [the referee restarted ({rr.software_version}{cut}{torn}): "
                "every seat reconnects]"
            )
        elif kind == "hand_dealt":
            hd = ev.hand_dealt
            trick = self.trick = 1
            yield ""
            yield f"Hand {hd.hand_number}"
            for dealt in hd.hands:
                yield f"  {_name(names, dealt.seat):>12}: {' '.join(dealt.cards)}"
            must = f", must include {hd.must_include}" if hd.must_include else ""
            yield f"  {_name(names, hd.leader)} leads{must}"
            yield f"  Trick {trick}"
        elif kind == "action_rejected" and show_rejections:
            rj = ev.action_rejected
            what = "pass" if getattr(rj, "pass") else " ".join(rj.cards) or "(nothing)"
            reason = REJECTION_REASON.text(rj.reason)
            who = _name(names, rj.seat)
            yield f"    {who} tried {what}: rejected, {reason} ({rj.message})"
        elif kind == "played":
            pl = ev.played
            note = _default(pl.default_cause)
            rev = "  [revolution]" if pl.revolution else ""
            yield (
                f"    {_name(names, pl.seat)} plays {' '.join(pl.play.cards)} ({_combo(pl.play)}), "
                f"{pl.cards_left} left, {pl.elapsed_ms} ms{note}{rev}"
            )
        elif kind == "passed":
            ps = ev.passed
            note = _default(ps.default_cause)
            forced = " (forced: lone 2)" if ps.forced_lead_pass else ""
            yield f"    {_name(names, ps.seat)} passes{forced}, {ps.elapsed_ms} ms{note}"
        elif kind == "trick_cleared":
            trick = self.trick = trick + 1
            yield f"    -> {_name(names, ev.trick_cleared.leader)} wins the trick"
            yield f"  Trick {trick}"
        elif kind == "hand_ended":
            he = ev.hand_ended
            yield f"  {_name(names, he.winner)} goes out and wins hand {he.hand_number}"
            for left in he.hands:
                if left.seat != he.winner:
                    cards = " ".join(left.cards)
                    yield f"  {_name(names, left.seat):>12}: {len(left.cards):2d} left  {cards}"
            yield f"  scores: {by_seat(names, he.scores)}"
            yield f"  totals: {by_seat(names, he.totals)}"
        elif kind == "match_ended":
            me = ev.match_ended
            status = MATCH_STATUS.text(me.status)
            yield ""
            yield f"Match {status}" + (f": {me.cancel_reason}" if me.cancel_reason else "")
            for st in me.standings:
                who = " + ".join(_name(names, s) for s in st.seats)
                yield f"  {st.place}. {who}  total {st.total}, hands won {st.hands_won}"
            if any(me.strikes):
                yield f"  strikes: {list(me.strikes)}"
            yield f"  seed: {me.seed}"
