"""The bot interface: one method to write, a few hooks to override if useful."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Sequence

from referee.protocol import common, play_service

Choice = Sequence[str] | None
"""Cards to play, such as ``["3D", "3C"]``, or ``PASS`` (None)."""

PASS: Choice = None


@dataclasses.dataclass(frozen=True)
class MatchOutcome:
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


class Bot:
    """Subclass and implement ``choose``; ask for legal plays with ``want_legal_plays``."""

    name: str = "python-bot"
    want_legal_plays: bool = True

    def choose(self, prompt: play_service.TurnPrompt) -> Choice | Awaitable[Choice]:
        """Return the cards to play for this prompt, or PASS. May be a coroutine."""
        raise NotImplementedError

    def on_rejected(
        self, prompt: play_service.TurnPrompt, result: play_service.ActionResult
    ) -> Choice:
        """What to send after a rejection; by default the safest legal answer."""
        return self.fallback(prompt)

    def fallback(self, prompt: play_service.TurnPrompt) -> Choice:
        """A pass when allowed, else the weakest legal play (when the prompt lists them)."""
        if prompt.can_pass:
            return PASS
        if prompt.legal_plays:
            return list(prompt.legal_plays[0].cards)
        return PASS

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        """Called when the referee accepts the seat (again, after a reconnect)."""

    def on_event(self, event: common.Event) -> None:
        """Called for every public event (and the seat's own deal)."""
