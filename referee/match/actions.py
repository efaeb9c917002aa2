"""Seat actions as the referee receives them: parse, check, and the default action.

Shared by the server (live) and by ``verify`` (after the fact), so both reach the
same verdict for the same action in the same state.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.rules import (
    HAND_SIZE,
    PASS,
    Action,
    HandState,
    IllegalActionError,
    MatchState,
    parse_cards,
)
from referee.rules.errors import InvalidCardsError

# The longest card a bot can mean, with room to spare: "10♦" is 3 characters.
MAX_CARD_TEXT = 8


def is_oversized(cards: Sequence[str]) -> bool:
    """More cards than a hand holds, or a card string longer than any card's name.

    Such a play is no play at all; the referee treats it as a malformed action so that a
    bot cannot make it log (and send back) megabytes of text.
    """
    return len(cards) > HAND_SIZE or any(len(c) > MAX_CARD_TEXT for c in cards)


def is_sha256_hex(text: str) -> bool:
    """64 lower-case hex digits: the one form of a trace line's hash (Action.trace_sha256).

    >>> is_sha256_hex("ab" * 32), is_sha256_hex("AB" * 32), is_sha256_hex("ab")
    (True, False, False)
    """
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


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
