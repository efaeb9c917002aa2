"""What ``referee tournament`` prints: the ratings table, head to head, the plan of a
dry run, the sequential test, and a verify command that can be pasted as it is."""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Sequence
from pathlib import Path

from referee.text import printable
from referee.tournament.ratings import SORT_KEY, PairRow, StandingRow, rank_notes

MATRIX_MAX_BOTS = 8
"""Beyond this many bots the head-to-head matrix is too wide for a terminal: the table's
neighbours are listed instead (every pair is in standings.json and pairwise.csv)."""


def _num(x: float, fmt: str = ".2f") -> str:
    return "-" if x != x else format(x, fmt)


def format_standings(rows: Sequence[StandingRow], scoring: str) -> str:
    """The ratings table: the sort key, each rating with its 95% interval, and ``~``
    where a bot's interval overlaps the one of the bot above. Names and reasons are
    escaped for the terminal here, never the whole table (its line breaks are its own)."""
    what = "penalty/hand" if scoring == "penalty" else "chips/hand"
    head = (
        f"{'#':>2}   {'bot':<16} {'mu-3σ':>6} {'mu':>6} {'95% interval':>15} {'matches':>7} "
        f"{'wins':>5} {'place':>5} {what:>12} {'95% CI':>15} {'t/o':>4} {'rej':>4} "
        f"{'disc':>4} {'crash':>5}"
    )
    out = [
        "Ratings: OpenSkill (Plackett-Luce), one rating event per deal group; "
        "sorted by mu - 3 sigma (mu-3σ)",
        head,
        "-" * len(head),
    ]
    for r in rows:
        ci = "" if r.ci95_low != r.ci95_low else f"[{r.ci95_low:.2f}, {r.ci95_high:.2f}]"
        interval = f"[{r.rating_low:.1f}, {r.rating_high:.1f}]"
        mark = "~" if r.overlaps_above else " "
        name = printable(r.name)
        out.append(
            f"{r.rank:>2} {mark} {name:<16} {r.ordinal:>6.2f} {r.mu:>6.2f} {interval:>15} "
            f"{r.matches:>7} {r.wins:>5} {_num(r.avg_place):>5} {_num(r.score_per_hand):>12} "
            f"{ci:>15} {r.timeouts:>4} {r.rejected:>4} {r.disconnects:>4} {r.crashes:>5}"
        )
    if any(r.overlaps_above for r in rows):
        out.append(
            "~ its rating interval (mu ± 1.96 sigma) overlaps the one above: "
            "not significantly different"
        )
    out += [
        f"disqualified: {printable(r.name)} ({printable(r.disqualified)})"
        for r in rows
        if r.disqualified
    ]
    return "\n".join(out)


def _cell(p: PairRow | None) -> str:
    if p is None or p.groups == 0:
        return "-"
    if p.groups < 2:
        return f"{p.mean:+.2f} ({p.groups})"
    half = (p.ci95_high - p.ci95_low) / 2
    return f"{p.mean:+.2f}±{half:.2f} {p.los * 100:.0f}% ({p.groups})"


def format_pairwise(names: Sequence[str], pairs: Sequence[PairRow], scoring: str) -> str:
    """Head to head on the terminal: a matrix (row bot against column bot) for up to
    ``MATRIX_MAX_BOTS`` bots, else each bot against the one below it in the table.
    Names are escaped for the terminal before the columns are measured."""
    unit = "penalty points" if scoring == "penalty" else "chips"
    lookup: dict[tuple[str, str], PairRow] = {}
    for p in pairs:
        lookup[(p.a, p.b)] = p
        lookup[(p.b, p.a)] = p.flipped()
    shown = {name: printable(name) for name in names}
    out = [
        f"Head to head: how many {unit} per hand the first bot did better than the other on "
        "the same deals;",
        "mean ± 95% CI, likelihood of superiority, (deal groups). Every pair: pairwise.csv",
    ]
    if len(names) <= MATRIX_MAX_BOTS:
        cells = [[_cell(lookup.get((a, b))) if a != b else "." for b in names] for a in names]
        heads = [shown[n] for n in names]
        width = max(12, *(len(c) for row in cells for c in row), *(len(h) for h in heads))
        first = max(len(h) for h in heads)
        out.append((" " * first + "  " + "  ".join(f"{h:<{width}}" for h in heads)).rstrip())
        for head, row in zip(heads, cells, strict=True):
            out.append(f"{head:<{first}}  " + "  ".join(f"{c:<{width}}" for c in row).rstrip())
    else:
        first = max(len(shown[n]) for n in names)
        for a, b in itertools.pairwise(names):
            cell = _cell(lookup.get((a, b)))
            out.append(f"{shown[a]:>{first}} vs {shown[b]:<{first}}  {cell}")
    return "\n".join(out)


def format_rank_notes(rows: Sequence[StandingRow], pairs: Sequence[PairRow], scoring: str) -> str:
    """The pairs where the table's order and the head to head disagree (``rank_notes``),
    with the sort key explained in one line; "" when there are none."""
    notes = rank_notes(rows, pairs)
    if not notes:
        return ""
    return "\n".join(
        [
            "Note: the table's order and the head to head disagree. " + SORT_KEY,
            *(f"  {printable(n.text(scoring))}" for n in notes),
        ]
    )


def verify_command(program: str, folder: Path, cwd: Path | None = None) -> str:
    """A shell command that re-checks the whole tournament in ``folder``: every log, the
    schedule, the shared deals of each group (``referee verify --tournament``); the folder
    quoted, relative to ``cwd`` when inside it.

    >>> verify_command("referee", Path("/home/me/club night"), Path("/home/me"))
    "referee verify --tournament 'club night'"
    """
    here = Path.cwd() if cwd is None else cwd
    shown = folder
    if folder.is_absolute() and folder.is_relative_to(here):
        shown = folder.relative_to(here)
    return f"{program} verify --tournament {shlex.quote(str(shown))}"


__all__ = [
    "MATRIX_MAX_BOTS",
    "format_pairwise",
    "format_rank_notes",
    "format_standings",
    "verify_command",
]
