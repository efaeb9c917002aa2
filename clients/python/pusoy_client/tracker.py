"""A seat's view of the match, kept from the welcome, the snapshot and the events.

Feed it from the bot's hooks (``TrackingBot`` does) and read it in ``choose``. It starts
again from every snapshot, so it is right after a reconnect too. Checked against the
referee's own ``PublicState`` in recorded streams (clients/conformance/tracker_streams.jsonl).
"""

from __future__ import annotations

import dataclasses

from pusoy_client.bot import Bot
from pusoy_client.protocol import common, play_service
from pusoy_client.rules import Rules, sort_cards


@dataclasses.dataclass
class TrickEntry:
    seat: int
    cards: list[str]
    """Empty for a pass."""

    @property
    def is_pass(self) -> bool:
        return not self.cards


class Tracker:
    """Cards left per seat, cards played, the trick, the table, who is locked out."""

    def __init__(self) -> None:
        self.seat = -1
        self.rules = Rules()
        self.pass_locks_out = False
        self.hand_number = 0
        self.hand: list[str] = []
        self.card_counts = [0, 0, 0, 0]
        self.played_cards: list[str] = []
        self.trick: list[TrickEntry] = []
        self.table: list[str] = []
        self.table_seat: int | None = None
        self.locked_out = [False] * 4
        self.revolution = False
        self.totals = [0, 0, 0, 0]
        self.hands_won = [0, 0, 0, 0]

    # -- feeding -----------------------------------------------------------------

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.seat = welcome.seat
        self.rules = Rules.from_proto(welcome.config.rules)
        self.pass_locks_out = welcome.config.rules.pass_locks_out

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        st = snapshot.state
        self.hand_number = st.hand_number
        self.hand = list(snapshot.hand)
        self.card_counts = list(st.card_counts) or [0, 0, 0, 0]
        self.played_cards = list(st.played_cards)
        self.trick = [
            TrickEntry(t.seat, [] if t.pass_ else list(t.play.cards))
            for t in (_TrickView(x) for x in st.trick)
        ]
        self.table = list(st.table.cards)
        self.table_seat = st.table_seat if st.HasField("table_seat") else None
        self.locked_out = list(st.locked_out) or [False] * 4
        self.revolution = st.revolution
        self.totals = list(st.totals) or [0, 0, 0, 0]
        self.hands_won = list(st.hands_won) or [0, 0, 0, 0]

    def on_event(self, event: common.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "hand_dealt":
            d = event.hand_dealt
            self.hand_number = d.hand_number
            self.card_counts = [0, 0, 0, 0]
            for h in d.hands:
                self.card_counts[h.seat] = h.count
                if h.seat == self.seat:
                    self.hand = list(h.cards)
            self.played_cards, self.trick, self.table = [], [], []
            self.table_seat, self.revolution = None, False
            self.locked_out = [False] * 4
        elif kind == "played":
            p = event.played
            cards = list(p.play.cards)
            self.card_counts[p.seat] = p.cards_left
            self.played_cards = sort_cards(self.rules, [*self.played_cards, *cards])
            self.trick.append(TrickEntry(p.seat, cards))
            self.table, self.table_seat = cards, p.seat
            self.revolution = p.revolution
            if p.seat == self.seat:
                self.hand = [c for c in self.hand if c not in cards]
        elif kind == "passed":
            seat = event.passed.seat
            self.trick.append(TrickEntry(seat, []))
            if self.pass_locks_out and not event.passed.forced_lead_pass:
                self.locked_out[seat] = True
        elif kind == "trick_cleared":
            self.trick, self.table, self.table_seat = [], [], None
            self.locked_out = [False] * 4
        elif kind == "hand_ended":
            self.totals = list(event.hand_ended.totals)
            self.hands_won[event.hand_ended.winner] += 1

    # -- reading -----------------------------------------------------------------

    def cards_left(self, seat: int) -> int:
        return self.card_counts[seat]

    def unseen(self) -> list[str]:
        """Cards neither in the bot's hand nor played this hand: the others hold them."""
        known = set(self.hand) | set(self.played_cards)
        deck = [r + s for r in "3456789TJQKA2" for s in "CSHD"]
        return sort_cards(self.rules, [c for c in deck if c not in known])


class _TrickView:
    """A TrickPlay with its ``pass`` field under a usable name."""

    def __init__(self, t: common.TrickPlay) -> None:
        self.seat = t.seat
        self.play = t.play
        self.pass_ = getattr(t, "pass")


class TrackingBot(Bot):
    """A Bot whose ``self.tracker`` follows the match; override ``choose`` as usual.

    Call ``super()`` if you override one of the hooks.
    """

    def __init__(self) -> None:
        self.tracker = Tracker()

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.tracker.on_welcome(welcome)

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        self.tracker.on_snapshot(snapshot)

    def on_event(self, event: common.Event) -> None:
        self.tracker.on_event(event)


__all__ = ["Tracker", "TrackingBot", "TrickEntry"]
