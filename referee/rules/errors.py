"""Errors of the rules engine, each with a stable machine-readable reason.

The reasons are the contract with bot authors: they appear in the judge's output, in
rejections sent over gRPC and in event logs, so their string values never change.
"""

from __future__ import annotations

import enum


class Reason(enum.StrEnum):
    """Why an action is illegal (docs/rules.md, "What the referee rejects"), one code per case."""

    UNPARSEABLE_CARD = "unparseable_card"
    DUPLICATE_CARD = "duplicate_card"
    EMPTY_PLAY = "empty_play"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    NOT_A_COMBINATION = "not_a_combination"
    WRONG_CARD_COUNT = "wrong_card_count"
    DOES_NOT_BEAT = "does_not_beat"
    MISSING_OPENING_CARD = "missing_opening_card"
    PASS_ON_LEAD = "pass_on_lead"
    LONE_TWO_FINISH = "lone_two_finish"
    NOT_YOUR_TURN = "not_your_turn"
    LOCKED_OUT = "locked_out"
    HAND_OVER = "hand_over"
    MATCH_OVER = "match_over"
    NOT_SEAT_HOLDER = "not_seat_holder"


class RulesError(Exception):
    """Base of every error the rules engine raises."""


class InvalidCardsError(RulesError, ValueError):
    """Card text that cannot be read: a bad token, a repeated card, an empty play."""

    def __init__(self, reason: Reason, message: str, token: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.token = token


class IllegalActionError(RulesError):
    """A well-formed action that the rules do not allow now."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message


class OptionsError(RulesError, ValueError):
    """An unknown profile, option name or option value."""
