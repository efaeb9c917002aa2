"""A table's model seats (``llm:SETTINGS``): their settings, clocks and traces.

A model seat is a built-in bot of the house (``referee.llm``): it plays in the table's
process through the seat client, as the strategies do. What the table adds for it is
here: its settings read once per match, with the API key (file or environment), before
the match is created, so that a bad file or a missing key stops the table at once; its
own clock (``[clock]`` of its settings) in the match's settings unless the organiser
gave that seat one; and its trace, written privately beside the log until the deal
group is over (``release_traces``, by whoever knows the group: ``referee match`` at
once, a tournament when the group's last match is over).
"""

from __future__ import annotations

import hashlib
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots import builtin_bot, play_seat
from referee.client.seat import SeatOutcome
from referee.client.tls import ClientTls
from referee.llm import is_model_seat, settings_file
from referee.match.settings import MatchSettings, SeatClock
from referee.table.bots import BuiltinBot, Seat

if TYPE_CHECKING:  # without loading the settings reader at import
    from referee.llm.settings import ModelSettings


def bot_seed(match_seed: str, seat: int) -> int:
    """A built-in random bot's seed, so that a match of built-in bots replays exactly."""
    return int.from_bytes(hashlib.sha256(f"{match_seed}:bot:{seat}".encode()).digest()[:8])


class ModelSeatError(ValueError):
    """A model seat that cannot play: its settings or its key cannot be read."""


def model_seats(seats: Sequence[Seat]) -> dict[int, ModelSettings]:
    """The settings (API key read) of each model seat, by seat; ModelSeatError."""
    if not any(isinstance(s.bot, BuiltinBot) and is_model_seat(s.bot.strategy) for s in seats):
        return {}
    from referee.llm.settings import load_model_settings
    from referee.toml_table import ConfigError

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


class HouseSeats:
    """The house's seats of one match: built-in strategies, and language models with
    their settings (key read), clocks and traces."""

    def __init__(self, seats: Sequence[Seat] = ()) -> None:
        self.models = model_seats(seats)
        self.log_path: Path | None = None
        """Where the match's log will be kept (the traces go beside it)."""
        self.traces: dict[int, Path] = {}

    def clocks(self, settings: MatchSettings) -> MatchSettings:
        return with_model_clocks(settings, self.models)

    def play(
        self, name: str, seat: int, match_seed: str, address: str, token: str, tls: ClientTls | None
    ) -> Coroutine[Any, Any, SeatOutcome]:
        """The seat's player: the strategy ``name`` (the random bot seeded from the
        match's seed), or the model, its trace opened where no bot and no spectator
        looks."""
        from referee.llm.player import ModelPlayer
        from referee.llm.trace import TraceWriter, pending_path

        if seat not in self.models:
            strategy = builtin_bot(name, bot_seed(match_seed, seat))
            return play_seat(strategy, address, token, tls=tls)
        assert self.log_path is not None
        trace = TraceWriter(pending_path(self.log_path, seat))
        self.traces[seat] = trace.path
        return play_seat(ModelPlayer(self.models[seat], trace), address, token, tls=tls)


def house_seats(seats: Sequence[Seat], settings: MatchSettings) -> tuple[HouseSeats, MatchSettings]:
    """A table's house seats, and the match's settings with the model seats' clocks;
    ModelSeatError when a model seat's settings or key cannot be read."""
    house = HouseSeats(seats)
    return house, house.clocks(settings)


def release_traces(log_path: Path, traces: Sequence[tuple[int, Path]]) -> list[Path]:
    """Move a match's model traces beside its log, where the viewer and ``referee
    verify`` find them: once the match's deal group is over."""
    from referee.llm.trace import release
    from referee.log.traces import trace_path

    moved = (release(path, trace_path(log_path, seat)) for seat, path in traces)
    return [p for p in moved if p is not None]
