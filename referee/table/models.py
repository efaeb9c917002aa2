"""A table's model seats (``llm:SETTINGS``): their settings, clocks and traces.

A model seat is a built-in bot of the house (``referee.llm``): it plays in the table's
process through the seat client, as the strategies do. What the table adds for it is
here: its settings read once per match, with the API key (file or environment), before
the match is created, so that a bad file or a missing key stops the table at once; its
own clock (``[clock]`` of its settings) in the match's settings unless the organiser
gave that seat one; and its trace, written privately beside the log until the deal
group is over (``MatchReport.release_traces``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.client.seat import SeatOutcome
from referee.client.tls import ClientTls
from referee.llm import is_model_seat, settings_file
from referee.match.settings import MatchSettings, SeatClock
from referee.table.bots import BuiltinBot, Seat

if TYPE_CHECKING:  # without loading the settings reader at import
    from referee.llm.settings import ModelSettings


class ModelSeatError(ValueError):
    """A model seat that cannot play: its settings or its key cannot be read."""


def model_seats(seats: Sequence[Seat]) -> dict[int, ModelSettings]:
    """The settings (API key read) of each model seat, by seat; ModelSeatError."""
    if not any(isinstance(s.bot, BuiltinBot) and is_model_seat(s.bot.strategy) for s in seats):
        return {}
    from referee.llm.settings import load_model_settings
    from referee.tournament.config import ConfigError

    found = {}
    for seat, spec in enumerate(seats):
        if isinstance(spec.bot, BuiltinBot) and is_model_seat(spec.bot.strategy):
            path = settings_file(spec.bot.strategy)
            try:
                found[seat] = load_model_settings(path).with_key()
            except ConfigError as exc:
                raise ModelSeatError(f"seat {seat} ({spec.name}): {path}: {exc}") from None
    return found


def with_model_clocks(
    settings: MatchSettings, models: Mapping[int, ModelSettings]
) -> MatchSettings:
    """The match's settings with each model seat's own clock, unless the organiser gave
    that seat one already."""
    given = {c.seat for c in settings.seat_clocks}
    for seat, model in models.items():
        if seat not in given:
            clock = SeatClock(seat, model.turn_time_ms, model.time_bank_ms)
            settings = settings.with_seat_clock(clock)
    return settings


@dataclasses.dataclass(frozen=True, slots=True)
class ModelSeatPlay:
    """A model seat about to play: its private trace file and the coroutine to run."""

    trace: Path
    coro: Coroutine[Any, Any, SeatOutcome]


def model_seat_play(
    model: ModelSettings,
    seat: int,
    log_path: Path,
    address: str,
    token: str,
    tls: ClientTls | None,
) -> ModelSeatPlay:
    """The seat's player, its trace opened where no bot and no spectator looks."""
    from referee.llm.player import play_model_seat
    from referee.llm.trace import TraceWriter, pending_path

    trace = TraceWriter(pending_path(log_path, seat))
    return ModelSeatPlay(trace.path, play_model_seat(model, trace, address, token, tls=tls))
