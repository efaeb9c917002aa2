"""Following a log's hands through the rules engine: the one place that re-applies the
moves a log records to a ``HandState``.

Readers that need more than the log says (a seat's position for the reference judge,
the legal plays the viewer shows at each move) rebuild the hand from its recorded deal
and apply each play or pass as the engine would. A log is input like any other: a deal
or a move the engine does not accept is a ``HandError``, and the hand is unknown from
then until the next deal. Judging the log is ``verify``'s job (it re-decides whole
commands with the match machine); this is only a reader's view of the hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from referee.rules import (
    PASS,
    SEATS,
    Action,
    HandState,
    IllegalActionError,
    Rules,
    RulesError,
    parse_card,
    parse_cards,
)


class HandError(ValueError):
    """A recorded deal or move that the rules engine does not accept; ``message`` says
    why, in the engine's words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class HandTracker:
    """The current hand of a log, as the engine sees it: ``deal`` at each ``hand_dealt``,
    ``move`` at each ``played`` or ``passed``, ``end`` at ``hand_ended``. ``hand`` is
    None before the first deal, after a hand ends, and after a deal or move the engine
    refused."""

    def __init__(self) -> None:
        self.hand: HandState | None = None

    def deal(
        self, rules: Rules, hands: Iterable[tuple[int, Sequence[str]]], leader: int, must: str
    ) -> HandState:
        """Start a hand from its recorded deal: (seat, cards) for each seat (a seat not
        listed holds no card), the leader and the card the first play must include."""
        self.hand = None
        masks = [0] * SEATS
        try:
            for seat, cards in hands:
                if not 0 <= seat < SEATS:
                    raise HandError(f"no seat {seat}")
                masks[seat] = parse_cards(list(cards), allow_empty=True)
            must_mask = 1 << parse_card(must) if must else 0
            self.hand = HandState(rules, masks, leader, must_mask)
        except (RulesError, ValueError) as exc:
            raise HandError(str(exc)) from None
        return self.hand

    def move(self, seat: int, cards: Sequence[str], *, is_pass: bool) -> None:
        """Apply one recorded play (``cards``) or pass; HandError when the engine refuses
        it (the hand is unknown from then on). Nothing happens while the hand is unknown."""
        hand = self.hand
        if hand is None:
            return
        self.hand = None  # until the engine accepts the move
        if not 0 <= seat < SEATS:
            raise HandError(f"no seat {seat}")
        try:
            action = PASS if is_pass else Action(parse_cards(list(cards)))
        except RulesError:
            raise HandError("the cards cannot be read") from None
        try:
            hand.apply(seat, action)
        except IllegalActionError as exc:
            raise HandError(exc.message) from None
        except (RulesError, ValueError) as exc:
            raise HandError(str(exc)) from None
        self.hand = hand

    def end(self) -> None:
        self.hand = None
