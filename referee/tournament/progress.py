"""Live progress: one line rewritten in place on a terminal, plain lines otherwise.

On a terminal the runner redraws the line every second, so the running matches, the
rate and the ETA move even while a long match is being played::

    23/40 done | 2 running | 0 failed | 4.1/min | ETA 4m09s | leader greedy (mu 35.3 ± 8.0)
"""

from __future__ import annotations

import dataclasses
import time
from typing import TextIO

from referee.durations import format_duration
from referee.text import printable
from referee.tournament.ratings import StandingRow


@dataclasses.dataclass
class Counts:
    total: int
    done: int = 0
    """Recorded, this run or an earlier one."""
    failed: int = 0
    running: int = 0
    done_this_run: int = 0
    test: str = ""
    """The sequential test's state (LLR and bounds), when the tournament has one."""


class Progress:
    """Reports the tournament's state; ``update`` is cheap enough to call after every match."""

    def __init__(self, out: TextIO, *, tty: bool | None = None, interval: float = 0.5) -> None:
        self.out = out
        self.tty = out.isatty() if tty is None else tty
        self.interval = interval
        self.started = time.monotonic()
        self._last = 0.0
        self._width = 0

    def status(self, counts: Counts, leader: StandingRow | None) -> str:
        parts = [
            f"{counts.done}/{counts.total} done",
            f"{counts.running} running",
            f"{counts.failed} failed",
        ]
        left = counts.total - counts.done
        elapsed = time.monotonic() - self.started
        if counts.done_this_run and elapsed > 0:
            parts.append(f"{counts.done_this_run / elapsed * 60:.1f}/min")
            if left:
                # A sequential test may stop the tournament sooner: then this is a bound.
                bound = "≤ " if counts.test else ""
                eta = elapsed / counts.done_this_run * left
                parts.append(f"ETA {bound}{format_duration(eta)}")
        if leader is not None:
            parts.append(f"leader {leader.name} (mu {leader.mu:.1f} ± {leader.sigma:.1f})")
        if counts.test:
            parts.append(counts.test)
        return " | ".join(parts)

    def update(self, counts: Counts, leader: StandingRow | None, *, force: bool = False) -> None:
        """Redraw the line on a terminal (at most every ``interval`` seconds)."""
        if not self.tty:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        line = printable(self.status(counts, leader))
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self.out.write("\r" + line + " " * pad)
        self.out.flush()

    def match_done(self, text: str, counts: Counts, leader: StandingRow | None) -> None:
        """One finished match: a plain line when not on a terminal, else a redraw."""
        if self.tty:
            self.update(counts, leader)
            return
        self.out.write(printable(f"{text} [{self.status(counts, leader)}]") + "\n")
        self.out.flush()

    def message(self, text: str) -> None:
        """A line that stays (the live line is redrawn under it)."""
        if self.tty and self._width:
            self.out.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.out.write(printable(text) + "\n")
        self.out.flush()

    def close(self, counts: Counts, leader: StandingRow | None) -> None:
        if self.tty:
            self.update(counts, leader, force=True)
            self.out.write("\n")
            self.out.flush()
            self._width = 0


__all__ = ["Counts", "Progress"]
