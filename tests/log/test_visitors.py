"""The log visitor API: a typed callback per event of the protocol, each line's event
handed to it with its body, plays and passes both heard as moves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from referee.log.reader import EventVisitor, LogLine, read_log, walk
from referee.protocol import common

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "v2"


def test_every_event_of_the_protocol_has_its_callback():
    """A new event in common.proto without its callback fails here, not in a visitor."""
    kinds = [f.name for f in common.Event.DESCRIPTOR.oneofs_by_name["kind"].fields]
    missing = [kind for kind in kinds if not callable(getattr(EventVisitor, kind, None))]
    assert kinds and missing == []


class Heard(EventVisitor):
    def __init__(self) -> None:
        self.deals: list[int] = []
        self.moves: list[tuple[int, int, tuple[str, ...] | None]] = []
        self.ended = 0

    def hand_dealt(self, line: LogLine, body: common.HandDealt) -> None:
        self.deals.append(body.hand_number)

    def move(
        self, line: LogLine, body: common.Played | common.Passed, cards: Sequence[str] | None
    ) -> None:
        self.moves.append((line.number, body.seat, None if cards is None else tuple(cards)))

    def match_ended(self, line: LogLine, body: common.MatchEnded) -> None:
        self.ended += 1


def test_a_visitor_hears_each_event_once_in_order_with_its_body():
    logs = sorted(LOGS.glob("*.jsonl"))
    assert logs
    for path in logs:
        read = read_log(path)
        heard = Heard()
        walk(read.lines, heard)
        deals = [
            ln.entry.event.hand_dealt.hand_number for ln in read.lines if ln.kind == "hand_dealt"
        ]
        moves = [
            (
                ln.number,
                getattr(ln.entry.event, ln.kind).seat,
                tuple(ln.entry.event.played.play.cards) if ln.kind == "played" else None,
            )
            for ln in read.lines
            if ln.kind in ("played", "passed")
        ]
        assert heard.deals == deals and heard.moves == moves and moves
        assert heard.ended == sum(ln.kind == "match_ended" for ln in read.lines)
