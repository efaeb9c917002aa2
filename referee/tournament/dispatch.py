"""Which match starts when, and who sits in its seats: the tournament's side of a backend.

A backend (``referee.backends``) pulls jobs when it can start a match; the
dispatcher answers with the next pending match in schedule order, made a ``MatchJob``
only then, so that its seats reflect every match recorded before (hook: a disqualified
bot's seat goes to its replacement, or is forfeited). A match with a remote bot waits
until the bot has a free slot in the referee's lobby (up to the number of matches it
said it can play at once), or has been absent long enough to start without it; the
lobby, and each recorded match (``ended``), wake it to look again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from referee.backends import FinishedMatch, MatchJob
from referee.table.bots import EmptySeat, Seat
from referee.tournament.config import TournamentConfig
from referee.tournament.disqualify import Disqualifier
from referee.tournament.results import MatchResult, result_of
from referee.tournament.schedule import MatchSpec

if TYPE_CHECKING:
    from referee.table.referees import Lobby

REMOTE_POLL_S = 0.5
"""How often a match waiting for an absent remote bot looks again."""


class Dispatcher:
    """Hands out the ``pending`` matches as jobs until none is left or ``stop()``."""

    def __init__(
        self,
        config: TournamentConfig,
        folder: Path,
        pending: Sequence[MatchSpec],
        disqualifier: Disqualifier,
        *,
        stop: Callable[[], bool],
    ) -> None:
        self.config = config
        self.folder = folder
        self.queue = list(pending)
        self.disqualifier = disqualifier
        self.stop = stop
        """Whether to start no more matches (the sequential test decided)."""
        self.lobby: Lobby | None = None
        self.remote_busy: dict[str, int] = {}
        """Matches each remote bot is playing now."""
        self.playing: dict[str, tuple[MatchSpec, list[str]]] = {}
        """By match being played: its spec, and the bot that replaced each seat's (hook:
        disqualify)."""
        self._wake = asyncio.Event()

    def open_lobby(self, lobby: Lobby) -> None:
        """Register the remote bots in the referee's lobby, where they wait for matches."""
        self.lobby = lobby
        lobby.tournament = self.config.name
        for bot in self.config.remote_bots:
            lobby.register(bot.name, bot.key, bot.max_matches)
            self.remote_busy[bot.name] = 0
        lobby.add_listener(self._wake.set)

    async def jobs(self) -> AsyncIterator[MatchJob]:
        while self.queue and not self.stop():
            spec = self._next_startable()
            if spec is None:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), REMOTE_POLL_S)
                continue
            for name in self._remote_names(spec):
                self.remote_busy[name] += 1
            yield self._job(spec)

    def ended(self, match: FinishedMatch) -> MatchResult:
        """The match's results line; its remote bots' slots are free again."""
        spec, replaced = self.playing.pop(match.job.label)
        for name in self._remote_names(spec):
            self.remote_busy[name] -= 1
        self._wake.set()
        return result_of(spec, match, folder=self.folder, replaced_by=replaced)

    def _remote_names(self, spec: MatchSpec) -> list[str]:
        return [n for n in spec.bots if n in self.remote_busy]

    def _next_startable(self) -> MatchSpec | None:
        """The first match whose remote bots can take a seat now (or have been waited for
        long enough); matches of local bots only are always startable."""
        lobby = self.lobby
        if not self.remote_busy or lobby is None:
            return self.queue.pop(0)
        now = asyncio.get_running_loop().time()
        for i, spec in enumerate(self.queue):
            ready = True
            for name in self._remote_names(spec):
                if name in self.disqualifier.out:
                    continue  # hook: its replacement plays, nothing to wait for
                bot = lobby.bot(name)
                if bot.connection is not None:
                    ready = self.remote_busy[name] < bot.capacity
                else:
                    ready = now - bot.absent_since >= self.config.referee.lobby_wait_s
                if not ready:
                    break
            if ready:
                return self.queue.pop(i)
        return None

    def _job(self, spec: MatchSpec) -> MatchJob:
        seats = tuple(self._seat_of(name) for name in spec.bots)
        replaced = [self.disqualifier.replacement_name(name) for name in spec.bots]
        self.playing[spec.match_id] = (spec, replaced)
        return MatchJob(
            label=spec.match_id,
            settings=self.config.match_settings(spec.seed, spec.bots),
            seats=seats,
            log_path=self.folder / "logs" / f"{spec.match_id}.jsonl",
            output_dir=self.folder / "stderr" / spec.match_id,
            time_limit_s=self.config.match_timeout_s,
        )

    def _seat_of(self, name: str) -> Seat:
        """hook: the seat of a bot, or of its replacement once it is disqualified."""
        stand_in = self.disqualifier.stand_in(self.config.bot(name))
        if stand_in is None:
            reason = f"forfeited: {name} is disqualified ({self.disqualifier.out[name]})"
            return Seat(name, EmptySeat(reason))
        return Seat(name, stand_in.table_bot())


__all__ = ["REMOTE_POLL_S", "Dispatcher"]
