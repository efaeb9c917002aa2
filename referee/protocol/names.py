"""The names the house writes for the protocol's enums, derived once from common.proto.

A value is written as its enum name in lower case without the enum's prefix
(``DEFAULT_CAUSE_ILLEGAL_ATTEMPTS`` -> ``illegal_attempts``): in replays, positions,
the viewer's ops, the dataset's rows, metrics labels and the command line's
``--status``. Deriving the names here, rather than listing them wherever one is
shown, keeps every reader in step when the proto gains a value.

>>> MATCH_STATUS.text(common.MATCH_STATUS_CANCELLED), MATCH_STATUS.text(0)
('cancelled', 'unspecified')
>>> DEFAULT_CAUSE.text(99)  # a number no version of the protocol defines
'99'
>>> DEFAULT_CAUSE.number("DEFAULT_CAUSE_TIMEOUT"), DEFAULT_CAUSE.number("DEFAULT_CAUSE_X")
(1, None)
>>> MATCH_STATUS.from_text("running"), MATCH_STATUS.from_text("bogus")
(2, None)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from referee.protocol import common, play_service


@dataclasses.dataclass(frozen=True, slots=True)
class EnumNames:
    """One enum's names; ``names`` leaves out the zero value (``..._UNSPECIFIED``)."""

    prefix: str
    names: Mapping[int, str]
    """Every value but the zero one, by number: ``{1: "timeout", ...}``."""
    _numbers: Mapping[str, int]

    @classmethod
    def of(cls, items: Iterable[tuple[str, int]], prefix: str) -> EnumNames:
        items = list(items)
        names = {n: name.removeprefix(prefix).lower() for name, n in items if n}
        return cls(prefix, names, {name: n for name, n in items})

    def text(self, value: int) -> str:
        """The value's name; the zero value's is ``unspecified``; a number no version of
        the protocol defines is written as the number."""
        if value == 0:
            return "unspecified"
        return self.names.get(value, str(value))

    def json_text(self, value: Any) -> str:
        """``text`` of a value as the JSON mapping of a message holds it (a full name, or a
        number); a name this version does not know is shown as written; "" for anything
        that is neither."""
        if isinstance(value, int) and not isinstance(value, bool):
            return self.text(value)
        if isinstance(value, str):
            return value.removeprefix(self.prefix).lower()
        return ""

    def from_text(self, text: str) -> int | None:
        """The number ``text`` writes (the inverse of ``text``); None for a name this
        version does not know."""
        if text == "unspecified":
            return 0
        return self._numbers.get(self.prefix + text.upper())

    def number(self, value: Any) -> int | None:
        """The number of a value as the JSON mapping of a message holds it: its full name
        (``DEFAULT_CAUSE_TIMEOUT``) or a number; None for anything else."""
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            return self._numbers.get(value)
        return None


MATCH_STATUS = EnumNames.of(common.MatchStatus.items(), "MATCH_STATUS_")
DEFAULT_CAUSE = EnumNames.of(common.DefaultCause.items(), "DEFAULT_CAUSE_")
REJECTION_REASON = EnumNames.of(common.RejectionReason.items(), "REJECTION_REASON_")
COMBINATION = EnumNames.of(common.Combination.items(), "COMBINATION_")
REFUSAL_REASON = EnumNames.of(play_service.RefusalReason.items(), "REFUSAL_REASON_")

CAUSE_PHRASES: Mapping[str, str] = {
    "timeout": "timed out",
    "illegal_attempts": "too many rejected attempts",
    "disconnected": "not connected",
    "strike_limit": "strike limit reached",
}
"""Why the referee acted for a seat, as the text replays say it, by ``DEFAULT_CAUSE``
name (a test keeps the two in step)."""


def cause_phrase(name: str) -> str:
    """A default cause's phrase; a name with none (a newer log's) is shown as it is.

    >>> cause_phrase("timeout"), cause_phrase("bored")
    ('timed out', 'bored')
    """
    return CAUSE_PHRASES.get(name, name)
