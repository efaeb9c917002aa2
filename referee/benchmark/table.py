"""The pool's own table: every anchor against every other on the published deals.

A round robin of the anchors (every four of them a table, every rotation, deal ``k`` at
every table of round ``k``) played by the tournament director like any tournament. From
its results: each pair's advantage in points per hand on the same deals (one difference
per deal), with its 95% interval and likelihood of superiority; each anchor's points per
hand; and the Bradley-Terry ratings of the anchors (random at 0), which a pool freezes
when it is made. ``bench/pool_table.py`` runs it and rewrites docs/benchmark.md's table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.benchmark.pool import Pool
from referee.benchmark.report import paired_json
from referee.benchmark.score import Group, fit_pool, pairwise_table, pool_comparisons
from referee.rules import Scoring
from referee.tournament.config import TournamentConfig
from referee.tournament.stats import mean_ci95
from referee.tournament.toml_reader import parse_config

BEGIN = "<!-- pool-table:begin -->"
END = "<!-- pool-table:end -->"


def table_config(
    pool: Pool, output: Path, deals: int, *, leave_out: Sequence[str] = (), concurrency: int = 2
) -> TournamentConfig:
    names = [a.name for a in pool.anchors if a.name not in leave_out]
    data: dict[str, Any] = {
        "tournament": {
            "name": f"pool {pool.version} table",
            "seed": pool.deal_seed,
            "format": "round-robin",
            "rounds": deals,
            "seatings": "rotations",
            "deals": "per-round",
            "concurrency": concurrency,
            "output": str(output.resolve()),
        },
        "rules": {"profile": pool.profile, "hands": pool.hands},
        # Generous: an anchor that timed out on a loaded machine would not be the anchor.
        "time": {"turn_time_ms": 10_000},
        "bot": [{"name": n, "builtin": n} for n in names],
    }
    return parse_config(data, output.resolve().parent / "pool-table.toml")


def summarize(pool: Pool, groups: Sequence[Group], names: Sequence[str]) -> dict[str, Any]:
    """The table's numbers, as plain JSON."""
    chips = pool.rules.scoring is Scoring.CHIPS
    pairs = pairwise_table(groups, names, chips)
    ratings = fit_pool(pool_comparisons(groups, chips), names, fixed=names[0])
    per_hand: dict[str, dict[str, Any]] = {}
    for n in names:
        values = [g.per_hand[n] for g in groups if n in g.per_hand]
        mean, lo, hi = mean_ci95(len(values), sum(values), sum(v * v for v in values))
        per_hand[n] = {"points_per_hand": mean, "ci95": [lo, hi], "groups": len(values)}
    return {
        "deals": len({g.deal for g in groups}),
        "groups": len(groups),
        "ratings": {n: round(ratings[n], 1) for n in names},
        "per_hand": per_hand,
        "pairs": {f"{a} vs {b}": paired_json(p) for (a, b), p in pairs.items()},
    }


def _cell(p: dict[str, Any]) -> str:
    if p["mean"] is None:
        return "·"
    lo, hi = p["ci95"]
    los = p["los"]
    ci = "" if lo is None else f" [{lo:+.2f}, {hi:+.2f}]"
    return f"{p['mean']:+.2f}{ci} {los * 100:.1f}%" if los is not None else f"{p['mean']:+.2f}"


def markdown(summary: dict[str, Any], names: Sequence[str]) -> str:
    """The table as docs/benchmark.md shows it: a row per anchor, its advantage over each
    column's anchor in points per hand on the same deals."""
    order = sorted(names, key=lambda n: -summary["ratings"][n])
    head = ["anchor", "rating", "points/hand", *order]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    pairs = summary["pairs"]
    for a in order:
        ph = summary["per_hand"][a]
        cells = [f"**{a}**", f"{summary['ratings'][a]:.0f}", f"{ph['points_per_hand']:.2f}"]
        for b in order:
            if a == b:
                cells.append("")
                continue
            p = pairs.get(f"{a} vs {b}")
            if p is None:
                q = pairs[f"{b} vs {a}"]
                p = {
                    "mean": None if q["mean"] is None else -q["mean"],
                    "ci95": [None if x is None else -x for x in reversed(q["ci95"])],
                    "los": None if q["los"] is None else 1 - q["los"],
                }
            cells.append(_cell(p))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def replace_between_markers(text: str, block: str) -> str:
    """``text`` with what lies between BEGIN and END replaced by ``block``."""
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    return text[:start] + "\n" + block.strip("\n") + "\n" + text[end:]
