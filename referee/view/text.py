"""``referee replay --seat N``: one seat's view of a match as text.

What the seat knew at each moment: its own cards, every public play, and at each of its
turns its legal plays, what it chose, the time it took, its rejected attempts and any
default action. Other seats' cards appear only when a hand ends (the log reveals them to
everyone then). Built on the viewer's ops, so the legal plays are the engine's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from referee import text
from referee.log.replay import by_seat, merged_disconnects
from referee.protocol.names import cause_phrase
from referee.view.fold import Op


def printable(value: object) -> str:
    """Text safe for a terminal: control and direction characters become escapes.

    >>> printable("bot\\x1b[2J")
    'bot\\\\x1b[2J'
    """
    return text.printable(str(value))


def _cards(cards: Sequence[str]) -> str:
    return printable(" ".join(cards)) or "(no cards)"


def _decode(bits: int, cards: Sequence[str]) -> list[str]:
    return [c for i, c in enumerate(cards) if bits >> i & 1]


class _Names(list[str]):
    def __call__(self, seat: object) -> str:
        return self[seat] if isinstance(seat, int) and 0 <= seat < len(self) else "seat ?"


def seat_lines(ops: Sequence[Op], seat: int, hand: int | None = None) -> Iterator[str]:
    """The text of ``seat``'s view; only hand number ``hand`` when it is given."""
    names = _Names(f"seat {s}" for s in range(4))
    cards: list[str] = []
    trick = 1
    showing = hand is None
    pending: list[Op] = []
    told = merged_disconnects(
        [(op["seat"], bool(op.get("on"))) if _is_connection(op) else None for op in ops]
    )
    retold = set(told.values())
    for i, op in enumerate(ops):
        t = op.get("t")
        if t == "match":
            names = _Names(f"{s}:{printable(n)}" for s, n in enumerate(op["seats"]))
            yield f"Match {printable(op['id'])} ({printable(op['profile'])})"
            yield f"  seats: {', '.join(names)}"
            yield f"  the view of seat {names[seat]}: its cards, public plays, its legal plays"
            yield f"  seed commitment: {printable(op['commitment'])}"
        elif t == "deal":
            showing = hand is None or op["hand"] == hand
            dealt = op.get("cards")
            cards = list(dealt[seat]) if dealt else []
            pending = []
            trick = 1
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
            pending = []
            if not op.get("pass"):
                played = set(op.get("cards", []))
                if op["seat"] == seat:
                    cards = [c for c in cards if c not in played]
        elif t == "clear" and showing:
            trick += 1
            yield f"    -> {names(op['leader'])} wins the trick and leads"
            yield f"  Trick {trick}"
        elif t == "hand_end" and showing:
            yield f"  {names(op['winner'])} goes out and wins hand {op['hand']}"
            for s, left in enumerate(op["cards"]):
                if s != op["winner"]:
                    yield f"  {names[s]:>14}: {len(left):2d} left  {_cards(left)}"
            yield f"  scores: {by_seat(names, op['scores'])}"
            yield f"  totals: {by_seat(names, op['totals'])}"
        elif t == "seat" and showing and _is_connection(op) and i not in retold:
            cause = ops[told[i]].get("cause") if i in told else op.get("cause")
            what = "connected" if op.get("on") else f"disconnected: {printable(cause)}"
            yield f"  [{names(op['seat'])} {what}]"
        elif t == "end":
            status = printable(op["status"])
            yield ""
            yield f"Match {status}" + (f": {printable(op['reason'])}" if op.get("reason") else "")
            for st in op["standings"]:
                who = " + ".join(names(s) for s in st["seats"])
                yield f"  {st['place']}. {who}  total {st['total']}, hands won {st['won']}"
            yield f"  seed: {printable(op['seed'])}"
        elif t == "restart" and showing:
            yield f"  [the referee restarted here ({printable(op['software'])})]"
        elif t in ("other", "bad") and showing:
            yield f"  [line {op['seq']}: {printable(op.get('kind') or op.get('problem'))}]"


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
            f"      tried {tried}: rejected, {printable(rj['reason']).replace('_', ' ')} "
            f"({printable(rj['message'])}), {rj['ms']} ms"
        )
    yours = what.replace("plays", "play", 1).replace("passes", "pass", 1)
    yield f"      you {yours}, {op['ms']} ms{note}"
    if op.get("illegal"):
        yield f"      (the rules engine does not accept this move: {printable(op['illegal'])})"
