"""Profiles and house-rule options (docs/rules.md) as one frozen value.

A match is created with one ``Rules`` value: a profile's option values with any
overrides applied. Everything the engine decides reads it; nothing else configures play.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from referee.rules.cards import SuitOrder
from referee.rules.errors import OptionsError


class Direction(enum.StrEnum):
    """Turn order around the table (seats are numbered clockwise)."""

    CLOCKWISE = "clockwise"
    COUNTERCLOCKWISE = "counterclockwise"


class FirstLead(enum.StrEnum):
    """Who leads a hand and whether the opening card must be in the first play."""

    OPENING_CARD_EVERY_HAND = "opening-card-every-hand"
    OPENING_CARD_THEN_WINNER = "opening-card-then-winner"


class FiveCardCategories(enum.StrEnum):
    """Whether a higher five-card category beats a lower one."""

    RANKED = "ranked"
    LOCKED = "locked"


class Straights(enum.StrEnum):
    """Which rank sequences are straights and how they are ordered."""

    WRAP_HIGH = "wrap-high"
    """3-7 … 10-A, then A-2-3-4-5, then 2-3-4-5-6 (highest); the 2 breaks ties."""
    NONE_WITH_TWO = "none-with-two"
    """3-7 … 10-A only."""
    WRAP_LOW = "wrap-low"
    """A-2-3-4-5 (lowest), 2-3-4-5-6, then 3-7 … 10-A; the top of the sequence breaks ties."""


class MatchEnd(enum.StrEnum):
    """How a match ends: a score threshold or a fixed number of hands."""

    THRESHOLD = "threshold"
    HANDS = "hands"


class Scoring(enum.StrEnum):
    """Penalty points (lowest total wins) or zero-sum chips (highest total wins)."""

    PENALTY = "penalty"
    CHIPS = "chips"


class TieBreak(enum.StrEnum):
    """How equal totals at the end of a match are separated.

    The traditions fix this per profile (docs/rules.md); it is exposed as an option so
    that every profile value is visible in one place.
    """

    HANDS_WON_THEN_SEAT = "hands-won-then-seat"
    SHARED = "shared"


@dataclasses.dataclass(frozen=True, slots=True)
class Rules:
    """Every option in force for a match."""

    profile: str
    suit_order: SuitOrder
    direction: Direction
    first_lead: FirstLead
    pass_locks_out: bool
    five_card_categories: FiveCardCategories
    straights: Straights
    five_card_hands: bool = True
    lowest_straight_beats_straights: bool = False
    no_finish_on_lone_two: bool = False
    revolution: bool = False
    bomb: bool = False
    teams: bool = False
    multiplier_from: int = 10
    match_end: MatchEnd = MatchEnd.HANDS
    match_end_value: int = 10
    scoring: Scoring = Scoring.PENALTY
    tie_break: TieBreak = TieBreak.SHARED
    max_hands: int = 0
    """The match also ends after this many hands, whatever ``match_end`` says (0: no
    cap). Not a house rule: the referee's bound on a match nobody can finish."""

    @classmethod
    def for_profile(cls, name: str, overrides: Mapping[str, Any] | None = None) -> Rules:
        """The rules of a named profile, with option overrides (names as in docs/rules.md)."""
        try:
            base = PROFILES[name]
        except KeyError:
            raise OptionsError(
                f"unknown profile {name!r}; known profiles: {', '.join(PROFILES)}"
            ) from None
        return base.with_options(overrides or {})

    def with_options(self, overrides: Mapping[str, Any]) -> Rules:
        """A copy with options replaced; values may be given as text, as in JSON or TOML."""
        changes: dict[str, Any] = {}
        for key, raw in overrides.items():
            name = key.replace("-", "_")
            if name == "match_end" and isinstance(raw, str | Mapping):
                changes.update(_parse_match_end(raw))
                continue
            field = _FIELDS.get(name)
            if field is None or name == "profile":
                raise OptionsError(
                    f"unknown option {key!r}; known options: {', '.join(OPTION_NAMES)}"
                )
            changes[name] = _convert(name, field, raw)
        rules = dataclasses.replace(self, **changes)
        rules.check()
        return rules

    def check(self) -> None:
        """Reject combinations of values that cannot be played."""
        if not 1 <= self.multiplier_from <= 13:
            raise OptionsError("multiplier_from must be between 1 and 13")
        if self.match_end_value < 1:
            raise OptionsError("match_end needs a positive number of hands or points")
        if not 0 <= self.max_hands <= MAX_HANDS_CAP:
            raise OptionsError(f"max_hands must be from 0 (no cap) to {MAX_HANDS_CAP}")

    def options(self) -> dict[str, Any]:
        """The options as plain JSON values (the inverse of ``with_options``)."""
        out: dict[str, Any] = {}
        for name in OPTION_NAMES:
            if name == "match_end":
                out[name] = f"{self.match_end.value} {self.match_end_value}"
                continue
            value = getattr(self, name)
            out[name] = value.value if isinstance(value, enum.Enum) else value
        return out

    @property
    def opening_card(self) -> int:
        """The lowest card of the deck under the suit order: 3♣ or 3♦."""
        return 3 if self.suit_order is SuitOrder.DIAMONDS_LOW else 0

    @property
    def highest_card(self) -> int:
        """The highest card of the deck under the suit order: 2♦ or 2♠."""
        return 12 * 4 + (1 if self.suit_order is SuitOrder.DIAMONDS_LOW else 3)


MAX_HANDS_CAP = 1_000_000
"""The largest hands cap: with it, no total can overflow the protocol's int32."""

_FIELDS = {f.name: f for f in dataclasses.fields(Rules)}
OPTION_NAMES: tuple[str, ...] = tuple(n for n in _FIELDS if n not in ("profile", "match_end_value"))


def _convert(name: str, field: dataclasses.Field[Any], raw: Any) -> Any:
    kind = field.type
    enum_type = _ENUMS.get(str(kind))
    if enum_type is not None:
        try:
            return enum_type(str(raw).lower())
        except ValueError:
            allowed = ", ".join(v.value for v in enum_type)
            raise OptionsError(f"option {name}: {raw!r} is not one of {allowed}") from None
    if str(kind) == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "false", "yes", "no", "on", "off"):
            return raw.lower() in ("true", "yes", "on")
        raise OptionsError(f"option {name}: {raw!r} is not true or false")
    if str(kind) == "int":
        if isinstance(raw, bool):
            raise OptionsError(f"option {name}: {raw!r} is not a whole number")
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise OptionsError(f"option {name}: {raw!r} is not a whole number") from None
    raise OptionsError(f"option {name} cannot be set")  # pragma: no cover


def _parse_match_end(raw: str | Mapping[str, Any]) -> dict[str, Any]:
    """``"threshold 30"``, ``"hands 10"`` or ``{"threshold": 30}``."""
    if isinstance(raw, Mapping):
        items = list(raw.items())
    else:
        parts = raw.replace("=", " ").replace(":", " ").split()
        items = [(parts[0], parts[1])] if len(parts) == 2 else []
    if len(items) != 1:
        raise OptionsError(f"option match_end: {raw!r} should be 'threshold N' or 'hands N'")
    kind, value = items[0]
    try:
        end = MatchEnd(str(kind).lower())
        number = int(value)
    except ValueError:
        raise OptionsError(
            f"option match_end: {raw!r} should be 'threshold N' or 'hands N'"
        ) from None
    return {"match_end": end, "match_end_value": number}


_ENUMS: dict[str, type[enum.StrEnum]] = {
    "SuitOrder": SuitOrder,
    "Direction": Direction,
    "FirstLead": FirstLead,
    "FiveCardCategories": FiveCardCategories,
    "Straights": Straights,
    "MatchEnd": MatchEnd,
    "Scoring": Scoring,
    "TieBreak": TieBreak,
}

PROFILES: dict[str, Rules] = {
    "pusoy-dos": Rules(
        profile="pusoy-dos",
        suit_order=SuitOrder.CLUBS_LOW,
        direction=Direction.CLOCKWISE,
        first_lead=FirstLead.OPENING_CARD_THEN_WINNER,
        pass_locks_out=False,
        five_card_categories=FiveCardCategories.RANKED,
        straights=Straights.WRAP_HIGH,
        match_end=MatchEnd.THRESHOLD,
        match_end_value=30,
        scoring=Scoring.PENALTY,
        tie_break=TieBreak.HANDS_WON_THEN_SEAT,
    ),
    "pusoy-dos-chips": Rules(
        profile="pusoy-dos-chips",
        suit_order=SuitOrder.CLUBS_LOW,
        direction=Direction.COUNTERCLOCKWISE,
        first_lead=FirstLead.OPENING_CARD_THEN_WINNER,
        pass_locks_out=True,
        five_card_categories=FiveCardCategories.LOCKED,
        straights=Straights.NONE_WITH_TWO,
        match_end=MatchEnd.HANDS,
        match_end_value=10,
        scoring=Scoring.CHIPS,
        tie_break=TieBreak.SHARED,
    ),
    "big-two": Rules(
        profile="big-two",
        suit_order=SuitOrder.DIAMONDS_LOW,
        direction=Direction.COUNTERCLOCKWISE,
        first_lead=FirstLead.OPENING_CARD_EVERY_HAND,
        pass_locks_out=False,
        five_card_categories=FiveCardCategories.RANKED,
        straights=Straights.WRAP_LOW,
        match_end=MatchEnd.HANDS,
        match_end_value=10,
        scoring=Scoring.PENALTY,
        tie_break=TieBreak.SHARED,
    ),
}
