"""Crash recovery: where an unfinished log goes on, and what a crash left that must go.

The referee writes each decision (the command's line, then the rest of its events) with
one write, and sends nothing of it before that write returns. A crash can still stop the
file anywhere inside the write: SIGKILL or a lost machine between the kernel taking some
of its lines and the rest. The file then ends in a torn line (readers leave it out), or
after the first whole lines of a decision without its last ones. A decision is in a log
whole or not at all: what follows the last whole decision was never sent to anyone, and
``verify``, which decides every command again, would find its missing events.

Only the machine can say whether the last decision is whole: its command is decided
again from the state before it, at its logged time (``verify.redecide``). Its lines are
whole when they are every event of that decision, cut short when they are its first
ones; anything else is not a log this referee wrote, and is not continued.
"""

from __future__ import annotations

import dataclasses

from referee.log.errors import VerifyError
from referee.log.reader import LogLine, LogRead
from referee.log.verify import DecisionCutShort, redecide
from referee.match.state import EvolveError, MachineState, fold
from referee.protocol import common
from referee.protocol.convert import ts_us


class RecoveryError(Exception):
    """An unfinished log that cannot be continued; the message says why."""


@dataclasses.dataclass(frozen=True, slots=True)
class Recovery:
    """An unfinished log made ready to go on: its whole decisions, and what was cut."""

    state: MachineState
    """The match after the lines kept."""
    kept: list[LogLine]
    cut: list[LogLine]
    """Whole lines of the last decision, cut short by the crash: cut off."""
    torn_bytes: int
    """Bytes of a torn last line: cut off."""
    size: int
    """Bytes kept: where the log goes on."""

    @property
    def last(self) -> LogLine:
        return self.kept[-1]

    def restart(self, software_version: str) -> common.Command:
        """The command a restarted referee decides first, saying what it cut."""
        restart = common.RestartCommand(
            software_version=software_version,
            torn_bytes=self.torn_bytes,
            cut_entries=len(self.cut),
        )
        return common.Command(restart=restart)

    def describe(self) -> str:
        """What was cut, for a person ("" when nothing was)."""
        parts = []
        if self.cut:
            first, last = self.cut[0].number, self.cut[-1].number
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            kinds = ", ".join(line.kind for line in self.cut)
            n = len(self.cut)
            entries = f"{n} {'entry' if n == 1 else 'entries'}"
            parts.append(f"{entries} of an unfinished decision ({where}: {kinds})")
        if self.torn_bytes:
            parts.append(f"a torn line of {self.torn_bytes} bytes")
        return "cut off " + " and ".join(parts) if parts else ""


def recover(read: LogRead, seed: str) -> Recovery:
    """Where the unfinished log ``read`` goes on: after its last whole decision.

    ``seed`` is the match's (from the state folder; "" when it is lost: a deal cannot be
    decided again then, so a last decision that does not match is kept as it is, the
    match being resumed only to be cancelled). RecoveryError when the log does not fold,
    or when its last decision is not what the machine decides (with the seed).
    """
    lines = read.lines
    if not lines or read.trailer is not None:
        raise RecoveryError("the log holds no entry" if not lines else "the log is closed")
    match_id = lines[0].entry.match_id
    head = len(lines) - 1
    while head > 0 and not lines[head].entry.HasField("command"):
        head -= 1
    group = lines[head:]
    cut: list[LogLine] = []
    try:
        if head == 0:  # line 1's decision is its one event; a schema-1 log has no commands
            if lines[0].entry.HasField("command") and len(group) > 1:
                raise RecoveryError(f"line 2: an entry that follows no command ({group[1].kind})")
            return Recovery(
                fold(match_id, _events(lines), seed), lines, [], read.torn_bytes, read.whole_bytes
            )
        before = fold(match_id, _events(lines[:head]), seed)
        try:
            state = redecide(before, group[0].entry.command, group)
        except DecisionCutShort:
            state, cut = before, group
        except VerifyError as exc:
            if seed:
                raise RecoveryError(
                    f"line {exc.line}: the log's last decision is not what the referee "
                    f"decides: {exc.message}"
                ) from None
            state = fold(match_id, _events(lines), seed)
    except EvolveError as exc:
        raise RecoveryError(f"the log does not fold: {exc}") from None
    kept = lines[: len(lines) - len(cut)]
    cut_bytes = sum(len(line.raw.encode("utf-8")) + 1 for line in cut)
    return Recovery(state, kept, cut, read.torn_bytes, read.whole_bytes - cut_bytes)


def _events(lines: list[LogLine]) -> list[tuple[common.Event, int]]:
    return [(line.entry.event, ts_us(line.entry.time)) for line in lines]
