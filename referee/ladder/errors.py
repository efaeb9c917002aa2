"""The ladder's errors, by cause: each message is for the person who caused it (an
organiser, an entrant) and says what to do."""

from __future__ import annotations


class LadderError(Exception):
    """Anything the ladder refuses; the message says why."""


class NotFound(LadderError):
    """No team, bot, version or match by that name or id."""


class Conflict(LadderError):
    """A name already taken, or a change the current state does not allow (a rejected
    version made active, a retired one pending again)."""


class LeaseLost(LadderError):
    """A worker recorded or renewed a match it no longer holds: its lease ran out and
    another worker claimed the match, or the match was already recorded or cancelled.
    The worker drops what it has; the match is (or was) played by the holder."""


class QuotaExceeded(LadderError):
    """An upload over a team's limits (uploads per hour, disk); ``retry_after``: seconds
    until the hour's count allows one more, None when waiting does not help (disk)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class KeyRefused(LadderError):
    """An API key that is not a team's key (or not a key at all)."""


class TooManyGuesses(KeyRefused):
    """Refused keys from one address over the limit: wait ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ArchiveError(LadderError):
    """An upload that is not a safe, well-formed archive within the limits."""


class ManifestError(ArchiveError):
    """An archive whose manifest (``bot.toml``) is missing or wrong."""
