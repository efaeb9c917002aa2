"""A turn as the bot sees it: the prompt, its time budget, a refusal, and the safe answer.

Pure: no network. The budget is computed on the monotonic clock (docs/kits.md, section 2).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from pusoy_client.protocol import common, play_service

Choice = Sequence[str] | None
"""Cards to play, such as ``["3D", "3C"]``, or ``PASS`` (None)."""

PASS: Choice = None

DEFAULT_TURN_S = 5.0
"""The turn time assumed for a prompt that carries neither a deadline nor a turn time."""


class Budget:
    """The time left to answer a prompt, on ``time.monotonic()``.

    >>> b = Budget(time.monotonic() + 1.0)
    >>> 0.9 < b.remaining() <= 1.0 and not b.expired()
    True
    """

    __slots__ = ("deadline",)

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        """When the answer is due, in ``time.monotonic()`` seconds."""

    def remaining(self) -> float:
        """Seconds left (0 once expired)."""
        return max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    @classmethod
    def for_prompt(
        cls,
        prompt: play_service.TurnPrompt,
        *,
        received: float,
        wall_now: float,
        safety_margin_s: float = 0.05,
        use_time_bank: bool = True,
    ) -> Budget:
        """min(deadline, receipt + turn time) + bank - margin, with ``received`` the
        monotonic time of receipt and ``wall_now`` the wall clock (epoch seconds) then.

        The deadline is read as epoch nanoseconds (a Timestamp is UTC): reading it through
        a naive datetime would shift it by the local time zone's offset.
        """
        turn_s = prompt.turn_time_ms / 1000 if prompt.turn_time_ms else None
        if prompt.HasField("deadline"):
            until = max(0.0, prompt.deadline.ToNanoseconds() / 1e9 - wall_now)
            span = min(until, turn_s) if turn_s is not None else until
        else:
            span = turn_s if turn_s is not None else DEFAULT_TURN_S
        bank = prompt.time_bank_ms / 1000 if use_time_bank else 0.0
        return cls(received + span + bank - safety_margin_s)


class Prompt:
    """A ``TurnPrompt`` with its budget. The fields keep the message's names."""

    __slots__ = ("budget", "message")

    def __init__(self, message: play_service.TurnPrompt, budget: Budget | None = None) -> None:
        self.message = message
        """The message as received."""
        self.budget = budget if budget is not None else Budget(float("inf"))
        """When the answer is due; ``choose`` should return before ``budget.expired()``."""

    turn_id = property(lambda self: self.message.turn_id, doc="The id the answer names.")
    seat = property(lambda self: self.message.seat, doc="The bot's seat, 0..3.")
    turn_time_ms = property(lambda self: self.message.turn_time_ms)
    time_bank_ms = property(lambda self: self.message.time_bank_ms)
    deadline = property(lambda self: self.message.deadline)
    attempts_left = property(lambda self: self.message.attempts_left)
    can_pass = property(lambda self: self.message.can_pass, doc="Whether a pass is legal.")
    is_lead = property(lambda self: self.message.is_lead, doc="The table is empty.")

    @property
    def state(self) -> common.PublicState:
        """The public state: table, trick, card counts, played cards, scores."""
        return self.message.state

    @property
    def hand(self) -> Sequence[str]:
        """The bot's cards, ascending in card order."""
        return self.message.hand

    @property
    def legal_plays(self) -> Sequence[common.Play]:
        """Every legal play, weakest first (``.cards``, ``.combination``). Empty when a
        pass is the only legal action (or when the bot asked for none)."""
        return self.message.legal_plays

    @property
    def hand_number(self) -> int:
        return self.message.state.hand_number

    @property
    def table(self) -> Sequence[str]:
        """The cards to beat (empty on a lead)."""
        return self.message.state.table.cards

    def __repr__(self) -> str:
        return f"Prompt(turn_id={self.turn_id}, hand={list(self.hand)}, can_pass={self.can_pass})"


class Rejection:
    """A refused answer (an ``ActionResult`` with ``accepted`` false)."""

    __slots__ = ("message",)

    def __init__(self, message: play_service.ActionResult) -> None:
        self.message = message

    turn_id = property(lambda self: self.message.turn_id)
    reason = property(lambda self: self.message.reason, doc="A RejectionReason value.")
    text = property(lambda self: self.message.message, doc="The referee's explanation.")
    attempts_left = property(lambda self: self.message.attempts_left)

    @property
    def reason_name(self) -> str:
        """For example ``REJECTION_REASON_DOES_NOT_BEAT``."""
        return common.RejectionReason.Name(self.message.reason)

    def __repr__(self) -> str:
        return f"Rejection({self.reason_name}: {self.text!r}, attempts_left={self.attempts_left})"


def fallback(prompt: Prompt | play_service.TurnPrompt) -> Choice:
    """The safe answer (docs/kits.md, section 4): a pass when allowed, else the weakest
    legal play, else the opening card or the lowest card of the hand, else a pass.

    >>> p = play_service.TurnPrompt(can_pass=False, hand=["5D", "9S"])
    >>> fallback(p)
    ['5D']
    """
    if prompt.can_pass:
        return PASS
    if prompt.legal_plays:
        return list(prompt.legal_plays[0].cards)
    must = prompt.state.must_include
    if must and must in prompt.hand:
        return [must]
    if prompt.hand:
        return [prompt.hand[0]]
    return PASS


def as_cards(choice: object) -> list[str] | None:
    """A bot's answer as a card list (None: a pass); ValueError when it is no answer.

    A single string is read as cards separated by spaces, so ``"9D 9S"`` works too.
    """
    if choice is None:
        return None
    if isinstance(choice, str):
        return choice.split() or None
    if isinstance(choice, Sequence) and all(isinstance(c, str) for c in choice):
        return list(choice) or None
    raise ValueError(f"not cards or PASS: {choice!r}")


__all__ = ["PASS", "Budget", "Choice", "Prompt", "Rejection", "as_cards", "fallback"]
