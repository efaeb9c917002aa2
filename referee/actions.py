"""Seat actions as the referee receives them: parse, check, and the default action.

Shared by the server (live) and by ``verify`` (after the fact), so both reach the
same verdict for the same action in the same state.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules import PASS, Action, HandState, IllegalActionError, MatchState, parse_cards
from referee.rules.errors import InvalidCardsError


def parse_action(cards: Sequence[str] | None) -> Action:
    """An Action from the cards a bot sent (None: a pass); raises InvalidCardsError."""
    if cards is None:
        return PASS
    return Action(parse_cards(list(cards)))


def check_action(
    match: MatchState, seat: int, cards: Sequence[str] | None
) -> tuple[Action | None, IllegalActionError | InvalidCardsError | None]:
    """The parsed action and None when legal, else the error saying why not."""
    try:
        action = parse_action(cards)
    except InvalidCardsError as err:
        return None, err
    return action, match.check(seat, action)


def default_action(hand: HandState) -> Action:
    """What the referee plays for a seat: pass, or on a lead its lowest legal play."""
    plays = hand.legal_plays()
    if plays.can_pass:
        return PASS
    return Action(plays.masks[0])
