"""``referee view --with-stderr``: each seat's own output beside its moves.

The table keeps a spawned bot's output in a file and times each line as it reads it
(``referee.table.output``). A line belongs to the seat's first move decided at or after
the moment it was read (what the bot printed while it thought, or on its way to that
move: a crashed bot's traceback goes with the default move the referee then made for
it); lines after its last move go to the end of the match; lines with no recorded time
(an output file without its sidecar) are shown apart. A kit's raised marker (docs/kits.md,
section 5: the bot's own code raised on a turn and the kit played its fallback) is placed
by its turn id, at the move of that turn, so the page names it there.

What is embedded is bounded (lines per seat, characters per line) and is plain text to
the page: it travels as JSON, like every string of the log, and is set with
``textContent``. A seat's own view shows only that seat's output: a bot may print its
cards.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.rules import SEATS
from referee.table.output import raised_of, read_output
from referee.view.fold import MAX_TEXT, Op, text

MAX_LINES = 600
"""Lines embedded per seat: past this, its first and last 300."""


def files_beside(log: Path) -> dict[int, Path]:
    """A ``referee match`` log's output files: ``<log-dir>/<match>.seat<N>.stderr``."""
    out: dict[int, Path] = {}
    for seat in range(SEATS):
        path = log.with_name(f"{log.stem}.seat{seat}.stderr")
        if path.is_file():
            out[seat] = path
    return out


def stderr_data(
    files: Mapping[int, Path], ops: Sequence[Op], times: Sequence[int | None]
) -> dict[str, Any] | None:
    """The page's ``stderr`` data: per seat, its lines grouped by the move (the op's
    ``seq``) they belong to; None when no file can be read."""
    moves: list[list[tuple[int, int]]] = [[] for _ in range(SEATS)]
    turns: list[dict[int, int]] = [{} for _ in range(SEATS)]
    start = next((t for t in times if t is not None), None)
    for op, at in zip(ops, times, strict=False):
        if op.get("t") != "move" or not isinstance(op.get("seat"), int):
            continue
        if isinstance(op.get("turn"), int) and 0 <= op["seat"] < SEATS:
            turns[op["seat"]][op["turn"]] = int(op["seq"])
        if at is not None:
            moves[op["seat"]].append((at, int(op["seq"])))
    seats: list[dict[str, Any] | None] = [None] * SEATS
    for seat, path in sorted(files.items()):
        if not 0 <= seat < SEATS:
            continue
        try:
            output = read_output(path, max_lines=MAX_LINES)
        except OSError:
            continue
        mine = moves[seat]
        when = [at for at, _ in mine]
        by_move: dict[int, list[list[Any]]] = {}
        end: list[list[Any]] = []
        untimed: list[str] = []
        raised: dict[int, str] = {}
        for line in output.lines:
            mark = raised_of(line.text)
            if mark is not None and mark.turn in turns[seat]:
                raised.setdefault(turns[seat][mark.turn], text(mark.error, MAX_TEXT))
            shown = text(line.text, MAX_TEXT)
            if line.at_us is None:
                untimed.append(shown)
                continue
            ms = round((line.at_us - start) / 1000) if start is not None else 0
            i = bisect.bisect_left(when, line.at_us)
            if i < len(mine):
                by_move.setdefault(mine[i][1], []).append([ms, shown])
            else:
                end.append([ms, shown])
        seats[seat] = {
            "file": text(path.name, 120),
            "moves": [[seq, lines] for seq, lines in sorted(by_move.items())],
            "end": end,
            "untimed": untimed,
            "skipped": output.skipped,
            "lines": len(output.lines) + output.skipped,
            "raised": [[seq, error] for seq, error in sorted(raised.items())],
        }
    if not any(seats):
        return None
    return {"seats": seats}


__all__ = ["MAX_LINES", "files_beside", "stderr_data"]
