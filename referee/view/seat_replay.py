"""``referee replay --seat N``: one seat's view of a match as text.

What the seat knew at each moment: its own cards, every public play, and at each of its
turns its legal plays, what it chose, the time it took, its rejected attempts and any
default action. Other seats' cards appear only when a hand ends (the log reveals them to
everyone then). Built on the viewer's ops, so the legal plays are the engine's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from referee import text
from referee.log.replay import Retold, by_seat
from referee.protocol.names import cause_phrase
from referee.view.fold import Op


def terminal_text(value: object) -> str:
    """Text safe for a terminal: control and direction characters become escapes.

    >>> terminal_text("bot\\x1b[2J")
    'bot\\\\x1b[2J'
    """
    return text.printable(str(value))


def _cards(cards: Sequence[str]) -> str:
    return terminal_text(" ".join(cards)) or "(no cards)"


def _decode(bits: int, cards: Sequence[str]) -> list[str]:
    return [c for i, c in enumerate(cards) if bits >> i & 1]


class _Names(list[str]):
    def __call__(self, seat: object) -> str:
        return self[seat] if isinstance(seat, int) and 0 <= seat < len(self) else "seat ?"


def seat_lines(ops: Sequence[Op], seat: int, hand: int | None = None) -> Iterator[str]:
    """The text of ``seat``'s view; only hand number ``hand`` when it is given."""
    text = SeatText(seat, hand)
    for op in ops:
        text.visit(op)
    return iter(text.lines)


class SeatText:
    """A visitor of the viewer's ops (``referee.view.fold``, over the one log reader) that
    writes one seat's view as text: ``lines`` so far."""

    def __init__(self, seat: int, hand: int | None = None) -> None:
        self.seat = seat
        self.hand = hand
        self.lines: list[str] = []
        self.names = _Names(f"seat {s}" for s in range(4))
        self.cards: list[str] = []
        self.trick = 1
        self.showing = hand is None
        self.pending: list[Op] = []
        self._retold = Retold()

    def visit(self, op: Op) -> None:
        if _is_connection(op):
            if op.get("on"):
                self._retold.connect(op["seat"])
            else:
                at = len(self.lines) if self.showing else -1
                first = self._retold.disconnect(op["seat"], at)
                if first is not None:  # told again, with the reason: shown once, with it
                    if first >= 0:
                        cause = terminal_text(op.get("cause"))
                        self.lines[first] = f"  [{self.names(op['seat'])} disconnected: {cause}]"
                    return
        self.lines.extend(self._text(op))

    def _text(self, op: Op) -> Iterator[str]:
        seat, hand = self.seat, self.hand
        names, cards, trick, showing = self.names, self.cards, self.trick, self.showing
        pending = self.pending
        t = op.get("t")
        if t == "match":
            names = self.names = _Names(
                f"{s}:{terminal_text(n)}" for s, n in enumerate(op["seats"])
            )
            yield f"Match {terminal_text(op['id'])} ({terminal_text(op['profile'])})"
            yield f"  seats: {', '.join(names)}"
            yield f"  the view of seat {names[seat]}: its cards, public plays, its legal plays"
            yield f"  seed commitment: {terminal_text(op['commitment'])}"
        elif t == "deal":
            showing = self.showing = hand is None or op["hand"] == hand
            dealt = op.get("cards")
            cards = self.cards = list(dealt[seat]) if dealt else []
            self.pending = []
            self.trick = 1
            if showing:
                yield ""
                yield f"Hand {op['hand']}"
                yield f"  your cards: {_cards(cards) if dealt else '(not in the log)'}"
                must = f", the first play must include {op['must']}" if op.get("must") else ""
                yield f"  {names(op['leader'])} leads{must}"
                yield "  Trick 1"
        elif t == "reject":
            if op.get("seat") == seat:
                pending.append(op)
        elif t == "move":
            if showing:
                yield from _move_lines(op, seat, names, cards, pending)
            self.pending = []
            if not op.get("pass"):
                played = set(op.get("cards", []))
                if op["seat"] == seat:
                    self.cards = [c for c in cards if c not in played]
        elif t == "clear" and showing:
            trick = self.trick = trick + 1
            yield f"    -> {names(op['leader'])} wins the trick and leads"
            yield f"  Trick {trick}"
        elif t == "hand_end" and showing:
            yield f"  {names(op['winner'])} goes out and wins hand {op['hand']}"
            for s, left in enumerate(op["cards"]):
                if s != op["winner"]:
                    yield f"  {names[s]:>14}: {len(left):2d} left  {_cards(left)}"
            yield f"  scores: {by_seat(names, op['scores'])}"
            yield f"  totals: {by_seat(names, op['totals'])}"
        elif t == "seat" and showing and _is_connection(op):
            what = (
                "connected" if op.get("on") else f"disconnected: {terminal_text(op.get('cause'))}"
            )
            yield f"  [{names(op['seat'])} {what}]"
        elif t == "end":
            status = terminal_text(op["status"])
            yield ""
            yield f"Match {status}" + (
                f": {terminal_text(op['reason'])}" if op.get("reason") else ""
            )
            for st in op["standings"]:
                who = " + ".join(names(s) for s in st["seats"])
                yield f"  {st['place']}. {who}  total {st['total']}, hands won {st['won']}"
            yield f"  seed: {terminal_text(op['seed'])}"
        elif t == "restart" and showing:
            yield f"  [the referee restarted here ({terminal_text(op['software'])})]"
        elif t in ("other", "bad") and showing:
            yield f"  [line {op['seq']}: {terminal_text(op.get('kind') or op.get('problem'))}]"


def _is_connection(op: Op) -> bool:
    return op.get("t") == "seat" and isinstance(op.get("seat"), int)


def _move_lines(
    op: Op, seat: int, names: _Names, cards: list[str], rejects: list[Op]
) -> Iterator[str]:
    who = names(op["seat"])
    cause = op.get("cause")
    note = f"  [default: {cause_phrase(cause)}]" if cause else ""
    if op.get("pass"):
        what = "passes" + (" (forced: a lone 2 cannot go out)" if op.get("forced") else "")
    else:
        what = f"plays {_cards(op['cards'])} ({op['label']}), {op['left']} left"
    if op["seat"] != seat:
        yield f"    {who} {what}, {op['ms']} ms{note}"
        return
    yield f"    Your turn: {_cards(cards)}"
    legal = op.get("legal")
    if legal is None:
        yield "      legal plays: not known (the log breaks the rules earlier in this hand)"
    else:
        plays = [
            _cards(_decode(bits, cards)) for group in legal["plays"].values() for bits in group
        ]
        if not plays:
            yield "      no legal play: pass" if legal["pass"] else "      no legal play"
        else:
            head = f"{len(plays)} legal play{'s' * (len(plays) != 1)}"
            yield f"      {head}{', or pass' if legal['pass'] else ''}: {' | '.join(plays)}"
    for rj in rejects:
        tried = "pass" if rj.get("pass") else _cards(rj.get("cards", []))
        yield (
            f"      tried {tried}: rejected, {terminal_text(rj['reason']).replace('_', ' ')} "
            f"({terminal_text(rj['message'])}), {rj['ms']} ms"
        )
    yours = what.replace("plays", "play", 1).replace("passes", "pass", 1)
    yield f"      you {yours}, {op['ms']} ms{note}"
    if op.get("illegal"):
        yield f"      (the rules engine does not accept this move: {terminal_text(op['illegal'])})"
