"""Disqualification: a bot that crashes, breaks its limits or fails too often is out.

Like OpenSpiel's tournament referee, which counts a bot's "corrupted" matches and
disqualifies it past a share of them, the tournament counts per bot, over its recorded
matches in the order they were recorded:

- crashes (its process ended before its match did);
- limit breaches (its sandbox killed it for memory, CPU time or processes);
- faulty matches: one with a crash or a breach, or with at least ``faulty_turns`` of
  its turns played by default (timeouts, illegal plays, absence).

With ``[disqualify] crashes = N`` it is out at its N-th crash, ``breaches = N`` at its
N-th breach, ``fault_rate = x`` once more than that share of its (at least
``min_matches``) matches were faulty. The match that tips it over carries the reason on
the bot's seat (``disqualified``) in results.jsonl. Every match that starts after that
seats the ``replacement`` instead: a built-in bot (``random``, ``greedy``) or nobody
(``forfeit``: the referee plays the seat by default). Such a seat has ``replaced_by``
set; it counts for nobody's statistics and is left out of the rating of its group. A
match already running when the bot is disqualified is played out and counted.

Resuming replays the same counts over results.jsonl, so the same bots are out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from referee.tournament.config import BotConfig, BotKind, DisqualifyConfig, Replacement
from referee.tournament.results import STATUS_FAILED, MatchResult, SeatResult


@dataclasses.dataclass
class FaultCount:
    """One bot's record so far."""

    matches: int = 0
    crashes: int = 0
    breaches: int = 0
    faulty: int = 0
    last_breach: str = ""


class Disqualifier:
    """Consulted by the runner: who plays a seat (``stand_in``), and after each match
    whether someone is out (``judge``)."""

    def __init__(self, config: DisqualifyConfig) -> None:
        self.config = config
        self.counts: dict[str, FaultCount] = {}
        self.out: dict[str, str] = {}
        """Disqualified bots and why."""

    def replay(self, results: Iterable[MatchResult]) -> None:
        """Count results recorded by an earlier run, in the order they were recorded."""
        for result in results:
            self._count(result)

    def stand_in(self, bot: BotConfig) -> BotConfig | None:
        """Who plays a seat scheduled for ``bot``: the bot itself, its replacement, or
        None (forfeit: nobody; the referee plays the seat by default)."""
        if bot.name not in self.out:
            return bot
        if self.config.replacement is Replacement.FORFEIT:
            return None
        builtin = self.config.replacement.value
        return BotConfig(name=builtin, kind=BotKind.BUILTIN, builtin=builtin)

    def replacement_name(self, bot: str) -> str:
        """What ``replaced_by`` says for a seat of a disqualified bot ("" if it is not)."""
        return self.config.replacement.value if bot in self.out else ""

    def judge(self, result: MatchResult) -> MatchResult:
        """Count a finished match; the result, with the reason on the seat of any bot it
        disqualifies."""
        newly = self._count(result)
        if not newly:
            return result
        seats = tuple(
            dataclasses.replace(sr, disqualified=newly[sr.bot])
            if sr.bot in newly and not sr.replaced_by
            else sr
            for sr in result.seats
        )
        return dataclasses.replace(result, seats=seats)

    def _count(self, result: MatchResult) -> dict[str, str]:
        """Add a match to the counts; the bots it disqualifies, with the reason."""
        newly: dict[str, str] = {}
        if not self.config.active or result.status == STATUS_FAILED:
            return newly
        for sr in result.seats:
            if sr.replaced_by or sr.bot in self.out:
                continue
            count = self.counts.setdefault(sr.bot, FaultCount())
            count.matches += 1
            count.crashes += sr.crashed
            if sr.breach:
                count.breaches += 1
                count.last_breach = sr.breach
            count.faulty += self._faulty(sr)
            reason = self._reason(count)
            if reason:
                self.out[sr.bot] = newly[sr.bot] = reason
        return newly

    def _faulty(self, sr: SeatResult) -> bool:
        s = sr.summary
        defaulted = s.timeouts + s.illegal_defaults + s.absent_turns
        return sr.crashed or bool(sr.breach) or defaulted >= self.config.faulty_turns

    def _reason(self, count: FaultCount) -> str:
        cfg = self.config
        if cfg.crashes and count.crashes >= cfg.crashes:
            return f"{count.crashes} crash{'es' * (count.crashes != 1)}"
        if cfg.breaches and count.breaches >= cfg.breaches:
            return (
                f"{count.breaches} limit breach{'es' * (count.breaches != 1)} "
                f"(last: {count.last_breach})"
            )
        if (
            cfg.fault_rate
            and count.matches >= cfg.min_matches
            and count.faulty > cfg.fault_rate * count.matches
        ):
            return f"{count.faulty} faulty matches of {count.matches}"
        return ""


__all__ = ["Disqualifier", "FaultCount"]
