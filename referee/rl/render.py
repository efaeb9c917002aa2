"""``render_mode="ansi"``: a seat's text replay of the hand being played.

The environments do not write logs, so this records what a log would hold, as log
events, and shows them through the one text replay (``referee replay --seat``:
``referee.view.seat_replay``, on the viewer's fold): what the seat knew, its legal plays at each
of its turns, every public play. Recording costs a protobuf event per move, so it is on
only when a render mode asks for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import json_format

from referee.match.settings import MatchSettings
from referee.protocol import common
from referee.protocol.convert import KIND_TO_PB, card_list, seat_cards, standings_pb
from referee.rules import HandResult, MatchState, Outcome, Rules, card_text, seed_commitment
from referee.view.fold import Folder, Op
from referee.view.seat_replay import seat_lines


class TextRecord:
    """The events of the match being played, folded into the text replay's ops."""

    def __init__(self, rules: Rules, names: Sequence[str] | None = None) -> None:
        self.rules = rules
        n = list(names or [f"seat_{s}" for s in range(4)])
        self.names = (n[0], n[1], n[2], n[3])
        self.folder = Folder("environment")
        self.ops: list[Op] = []
        self.hand_number = 0

    def _add(self, event: common.Event) -> None:
        data = json_format.MessageToDict(event, preserving_proto_field_name=True)
        self.ops.append(self.folder.feed(len(self.ops) + 1, data))

    def started(self, seed: str) -> None:
        self.folder = Folder("environment")
        self.ops = []
        settings = MatchSettings(rules=self.rules, seat_names=self.names)
        self._add(
            common.Event(
                match_created=common.MatchCreated(
                    config=settings.config_pb(), seed_commitment=seed_commitment(seed)
                )
            )
        )

    def dealt(self, match: MatchState, hands: Sequence[int]) -> None:
        hand = match.hand
        assert hand is not None
        self.hand_number = match.hand_number
        must = card_text(hand.must_include.bit_length() - 1) if hand.must_include else ""
        self._add(
            common.Event(
                hand_dealt=common.HandDealt(
                    hand_number=match.hand_number,
                    hands=seat_cards(hands, self.rules.suit_order),
                    leader=hand.turn or 0,
                    must_include=must,
                )
            )
        )

    def acted(self, match: MatchState, outcome: Outcome) -> None:
        order = self.rules.suit_order
        seat = outcome.seat
        if outcome.action.is_pass:
            self._add(
                common.Event(
                    passed=common.Passed(seat=seat, forced_lead_pass=outcome.forced_lead_pass)
                )
            )
        else:
            hand = match.hand
            played = common.Played(
                seat=seat,
                cards_left=hand.hands[seat].bit_count() if hand is not None else 0,
                revolution=bool(hand is not None and hand.revolution),
            )
            played.play.cards.extend(card_list(outcome.action.cards, order))
            if outcome.kind is not None:
                played.play.combination = KIND_TO_PB[outcome.kind]
            self._add(common.Event(played=played))
        if outcome.trick_cleared and outcome.next_seat is not None:
            self._add(common.Event(trick_cleared=common.TrickCleared(leader=outcome.next_seat)))

    def hand_ended(self, result: HandResult) -> None:
        self._add(
            common.Event(
                hand_ended=common.HandEnded(
                    hand_number=result.hand_number,
                    winner=result.winner,
                    hands=seat_cards(result.cards_left, self.rules.suit_order),
                    scores=list(result.scores),
                    totals=list(result.totals),
                )
            )
        )

    def match_ended(self, match: MatchState, seed: str) -> None:
        self._add(
            common.Event(
                match_ended=common.MatchEnded(
                    status=common.MATCH_STATUS_FINISHED,
                    standings=standings_pb(match.standings()),
                    seed=seed,
                    totals=list(match.totals),
                )
            )
        )

    def text(self, seat: int) -> str:
        """The seat's replay of the current hand."""
        return "\n".join(seat_lines(self.ops, seat, self.hand_number or None))


def render_ansi(render_mode: str | None, record: TextRecord | None, seat: int) -> str | None:
    """An environment's ``render()``: the text replay of the hand so far as ``seat`` saw
    it, or None (with Gymnasium's warning) when the environment was made without a
    ``render_mode``."""
    if render_mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode: pass render_mode='ansi'")
        return None
    assert record is not None
    return record.text(seat)
