"""A match log as readable text: hand by hand, trick by trick."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from referee.log.reader import LogRead
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


def merged_disconnects(connections: Sequence[tuple[int, bool] | None]) -> dict[int, int]:
    """A bot that dies is told twice: its stream closes (a disconnect, "stream closed by
    the bot"), then whoever seated it reports the exit (a second disconnect, its bot gone:
    "its bot exited with status 1"). Maps the position of each such first disconnect to
    that of the second, whose cause says why; the second is not shown again.

    ``connections``: per item, (seat, connected) for a connect or disconnect, else None.

    >>> merged_disconnects([(0, False), None, (0, False), (1, False), (1, True), (1, False)])
    {0: 2}
    """
    merged: dict[int, int] = {}
    last_disconnect: dict[int, int] = {}
    for i, item in enumerate(connections):
        if item is None:
            continue
        seat, connected = item
        first = last_disconnect.pop(seat, None)
        if connected:
            continue
        if first is not None:
            merged[first] = i  # no connect in between: the same loss, told again
        else:
            last_disconnect[seat] = i
    return merged


def replay_lines(
    read: LogRead, *, show_rejections: bool = True, hand: int | None = None
) -> Iterator[str]:
    """The lines of the text replay of a log (only hand number ``hand`` when given), safe
    to print: names, causes and reasons come from bots and organisers, so control
    characters are shown as escapes."""
    for line in _replay_lines(read, show_rejections=show_rejections, hand=hand):
        yield printable(line)


def _connection(ev: common.Event) -> tuple[int, bool] | None:
    if ev.HasField("seat_connected"):
        return ev.seat_connected.seat, True
    if ev.HasField("seat_disconnected"):
        return ev.seat_disconnected.seat, False
    return None


def _replay_lines(read: LogRead, *, show_rejections: bool, hand: int | None) -> Iterator[str]:
    names = [f"seat {i}" for i in range(4)]
    trick = 0
    showing = True
    told = merged_disconnects([_connection(line.entry.event) for line in read.lines])
    retold = set(told.values())
    for i, line in enumerate(read.lines):
        ev = line.entry.event
        kind = ev.WhichOneof("kind")
        if kind == "hand_dealt":
            showing = hand is None or ev.hand_dealt.hand_number == hand
        if not showing and kind not in ("match_created", "match_ended"):
            continue
        if kind == "match_created":
            mc = ev.match_created
            names = [f"{i}:{n}" for i, n in enumerate(mc.config.seat_names)] or names
            rules = mc.config.rules
            yield f"Match {line.entry.match_id} ({rules.profile}, ends after {rules.match_end})"
            yield f"  seats: {', '.join(names)}"
            yield f"  seed commitment: {mc.seed_commitment}"
            yield f"  referee {mc.software_version}, protocol {mc.protocol_version}"
        elif kind == "seat_connected":
            sc = ev.seat_connected
            again = "reconnected" if sc.reconnect else "connected"
            yield f"  [{_name(names, sc.seat)} {again}{f' ({sc.bot_name})' if sc.bot_name else ''}]"
        elif kind == "seat_disconnected" and i not in retold:
            sd = ev.seat_disconnected
            why = read.lines[told[i]].entry.event if i in told else ev
            cause = why.seat_disconnected.cause
            yield f"  [{_name(names, sd.seat)} disconnected: {cause}]"
        elif kind == "referee_restarted":
            rr = ev.referee_restarted
            torn = f", {rr.torn_bytes} bytes of a torn line cut off" if rr.torn_bytes else ""
            yield f"  [the referee restarted ({rr.software_version}{torn}): every seat reconnects]"
        elif kind == "hand_dealt":
            hd = ev.hand_dealt
            trick = 1
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
            trick += 1
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
    if not read.complete:
        yield ""
        yield f"({read.status()})"
