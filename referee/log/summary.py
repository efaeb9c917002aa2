"""What a match came to, per seat, as its log tells it: a visitor over the log reader.

Used for tournament results and ``referee match``'s summary: places and scores, and every
fault the referee recorded (timeouts, rejected and late answers, default actions by
cause, disconnects).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.log.reader import EventVisitor, LogLine, LogRead, read_log, walk
from referee.log.writer import line_hash
from referee.protocol import common
from referee.rules import SEATS

_CAUSES = {
    common.DEFAULT_CAUSE_TIMEOUT: "timeouts",
    common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS: "illegal_defaults",
    common.DEFAULT_CAUSE_DISCONNECTED: "absent_turns",
    common.DEFAULT_CAUSE_STRIKE_LIMIT: "benched_turns",
}


@dataclasses.dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat of a match, as its log tells it."""

    seat: int
    place: int = 0
    total: int = 0
    hands_won: int = 0
    scores: tuple[int, ...] = ()
    """The seat's score in each hand (penalty points, or chips won)."""
    connected: bool = False
    """The seat's bot connected at least once."""
    timeouts: int = 0
    """Turns played by default because the bot did not answer in time."""
    illegal_defaults: int = 0
    """Turns played by default after too many rejected attempts."""
    absent_turns: int = 0
    """Turns played by default because the bot was not connected."""
    benched_turns: int = 0
    """Turns played by default after the strike limit."""
    rejected: int = 0
    """Actions the referee rejected (illegal plays, out of turn, stale), late ones aside."""
    disconnects: int = 0
    """Streams that ended while the bot was connected (not the news that the bot of a
    seat that was not connected is gone)."""
    left: bool = False
    """The bot had connected and was gone when the match ended (its stream had ended
    and it had not come back)."""
    late: int = 0
    """Answers that came after their turn had timed out (not counted as rejected)."""
    turns: int = 0
    """Turns the bot answered itself (not played by default)."""
    think_ms: int = 0
    """Wall time from prompt to answer over those turns (``elapsed_ms``), in total."""
    think_max_ms: int = 0
    """The longest of those turns."""
    faulty_hands: tuple[int, ...] = ()
    """The hands (numbered from 1) in which the referee played a turn of the seat by
    default (any cause) or rejected one of its actions: what is left are its clean
    hands (the benchmark's clean results)."""
    gone_cause: str = ""
    """Why its bot is gone for good, as the table told the referee (``its bot exited
    with status 1``, ``its bot was stopped by its jail for breaking its memory limit
    (memory: 2,400 MB across 4 processes, limit 1,024 MB)``); empty if it was not."""


@dataclasses.dataclass(frozen=True, slots=True)
class LogSummary:
    referee_match_id: str
    status: str
    """finished or cancelled."""
    cancel_reason: str
    seed: str
    hands: int
    seats: tuple[SeatSummary, ...]
    seat_names: tuple[str, ...]
    final_hash: str = ""
    """SHA-256 of the last entry line: what the log's signature covers."""
    signed_by: str = ""
    """The public key the log's trailer names (base64); empty for an unsigned log."""
    turn_moves: Mapping[int, tuple[int, int]] = dataclasses.field(default_factory=dict)
    """Each turn's move: turn id to (hand number, its move in the hand counted from 1, as
    ``referee view`` numbers them), for what a bot says of a turn (a kit's raised marker)."""


@dataclasses.dataclass
class _Counts:
    """One seat's tally as the log goes, on its way to a ``SeatSummary``."""

    tally: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    """The summary's counters (``timeouts``, ``late``, ``think_ms``...), by field name."""
    scores: list[int] = dataclasses.field(default_factory=list)
    connected: bool = False
    live: bool = False
    """Connected right now (at this point of the log)."""
    faulty_hands: list[int] = dataclasses.field(default_factory=list)
    gone_cause: str = ""

    def fault(self, hand: int) -> None:
        if not self.faulty_hands or self.faulty_hands[-1] != hand:
            self.faulty_hands.append(hand)


class Summarizer(EventVisitor):
    """A log visitor that counts what happened to each seat."""

    def __init__(self) -> None:
        self.counts = [_Counts() for _ in range(SEATS)]
        self.match_id = ""
        self.names: tuple[str, ...] = ()
        self.ended: common.MatchEnded | None = None
        self.left = [False] * SEATS
        self.hands = 0
        self.hand_number = 0
        self.moves = 0
        """Moves of the hand so far."""
        self.turn_moves: dict[int, tuple[int, int]] = {}

    def _seat(self, seat: int) -> _Counts:
        if not 0 <= seat < SEATS:
            raise ValueError(f"no seat {seat}")
        return self.counts[seat]

    def visit(self, line: LogLine) -> None:
        self.match_id = line.entry.match_id
        super().visit(line)

    def match_created(self, line: LogLine, body: common.MatchCreated) -> None:
        self.names = tuple(body.config.seat_names)

    def hand_dealt(self, line: LogLine, body: common.HandDealt) -> None:
        self.hand_number, self.moves = body.hand_number, 0

    def move(
        self, line: LogLine, body: common.Played | common.Passed, cards: Sequence[str] | None
    ) -> None:
        self.moves += 1
        self.turn_moves[body.turn_id] = (self.hand_number, self.moves)
        field = _CAUSES.get(body.default_cause)
        counts = self._seat(body.seat)
        if body.default_cause:
            counts.fault(self.hands + 1)
        tally = counts.tally
        if field is not None:
            tally[field] += 1
        elif not body.default_cause:  # the bot's own answer: its wall time per turn
            tally["turns"] += 1
            tally["think_ms"] += body.elapsed_ms
            tally["think_max_ms"] = max(tally["think_max_ms"], body.elapsed_ms)

    def action_rejected(self, line: LogLine, body: common.ActionRejected) -> None:
        counts = self._seat(body.seat)
        if body.late:
            counts.tally["late"] += 1
        else:
            counts.tally["rejected"] += 1
            counts.fault(self.hands + 1)

    def hand_ended(self, line: LogLine, body: common.HandEnded) -> None:
        self.hands += 1
        for seat, score in enumerate(body.scores):
            self._seat(seat).scores.append(score)

    def seat_connected(self, line: LogLine, body: common.SeatConnected) -> None:
        counts = self._seat(body.seat)
        counts.connected = counts.live = True

    def seat_disconnected(self, line: LogLine, body: common.SeatDisconnected) -> None:
        counts = self._seat(body.seat)
        counts.tally["disconnects"] += counts.live
        counts.live = False
        if body.gone:
            counts.gone_cause = body.cause

    def referee_restarted(self, line: LogLine, body: common.RefereeRestarted) -> None:
        for counts in self.counts:
            counts.live = False

    def match_ended(self, line: LogLine, body: common.MatchEnded) -> None:
        self.ended = body
        self.left = [c.connected and not c.live for c in self.counts]

    def summary(self) -> LogSummary:
        """The counts; ValueError when the log ended before the match did."""
        ended = self.ended
        if ended is None:
            raise ValueError("the log ends before the match did")
        places = [0] * SEATS
        won = [0] * SEATS
        for st in ended.standings:
            for seat in st.seats:
                places[seat] = st.place
                won[seat] = st.hands_won
        totals = list(ended.totals) or [0] * SEATS
        seats = tuple(
            SeatSummary(
                seat=s,
                place=places[s],
                total=totals[s],
                hands_won=won[s],
                scores=tuple(c.scores),
                connected=c.connected,
                left=self.left[s],
                faulty_hands=tuple(c.faulty_hands),
                gone_cause=c.gone_cause,
                **c.tally,
            )
            for s, c in enumerate(self.counts)
        )
        finished = ended.status == common.MATCH_STATUS_FINISHED
        return LogSummary(
            referee_match_id=self.match_id,
            status="finished" if finished else "cancelled",
            cancel_reason=ended.cancel_reason,
            seed=ended.seed,
            hands=self.hands,
            seats=seats,
            seat_names=self.names,
            turn_moves=self.turn_moves,
        )


def summarize_log(path: Path) -> LogSummary:
    """Count what happened to each seat; ValueError for a log that did not end (or is
    cut short), LogFormatError for one that is not a log."""
    return summarize_read(read_log(path), path)


def summarize_read(read: LogRead, path: Path) -> LogSummary:
    """``summarize_log`` of a log already read (``path`` names it in errors)."""
    if read.truncated:
        raise ValueError(f"{path}: the last line is cut short")
    summarizer = Summarizer()
    walk(read.lines, summarizer)
    try:
        summary = summarizer.summary()
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return dataclasses.replace(
        summary,
        final_hash=line_hash(read.lines[-1].raw),
        signed_by=read.trailer.public_key if read.trailer is not None else "",
    )
