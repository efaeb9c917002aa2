"""The bot interface: one method to write, a few hooks to override if useful."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable

from pusoy_client.prompt import PASS, Choice, Prompt, Rejection, fallback
from pusoy_client.protocol import common, play_service


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How the match ended for this bot."""

    seat: int
    match_id: str
    ended: common.MatchEnded | None
    """The match_ended event; None when the match ended while the bot was disconnected."""

    @property
    def place(self) -> int:
        """The seat's place (1 = first), or 0 when unknown."""
        if self.ended is None:
            return 0
        for st in self.ended.standings:
            if self.seat in st.seats:
                return st.place
        return 0


MatchOutcome = Outcome
"""The former name of ``Outcome``."""


class Bot:
    """Subclass and implement ``choose``.

    Every method runs on the bot's own worker thread, one call at a time, in the order
    the referee's messages arrived (docs/kits.md): no locking is needed. An exception in
    any of them is reported on stderr and the match goes on.
    """

    name: str = "python-bot"
    want_legal_plays: bool = True
    use_time_bank: bool = True
    """Whether the time budget may use the seat's time bank (docs/kits.md, section 2)."""

    def choose(self, prompt: Prompt) -> Choice | Awaitable[Choice]:
        """The cards to play for this prompt, or PASS; due by ``prompt.budget``.

        May be ``async def``: it is then cancelled when the budget runs out. A synchronous
        ``choose`` that runs late is not stopped, but its answer is dropped and the
        fallback sent on time.
        """
        raise NotImplementedError

    def on_rejected(self, prompt: Prompt, rejection: Rejection) -> Choice | Awaitable[Choice]:
        """What to send after a rejection (attempts are left); by default the fallback."""
        return fallback(prompt)

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        """The referee gave the bot its seat (again, after a reconnect)."""

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        """The seat's view after every welcome: rebuild your state from it."""

    def on_event(self, event: common.Event) -> None:
        """Every event the seat receives (its own deal included)."""


__all__ = ["PASS", "Bot", "Choice", "MatchOutcome", "Outcome"]
