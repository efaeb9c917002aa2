"""The benchmark's report: ``benchmark.json`` in the folder, and what the command prints.

Computed from the folder's results.jsonl alone (``referee.benchmark.score``), so the
same results give the same report, byte for byte: it holds no time of day and no wall
time. To cite a result, give the pool version, the deal set (its seed and the number of
deals) and ``logs_sha256``: SHA-256 over the logs' final hashes in schedule order (each
log's final hash is what its signature covers), so anyone can check that the published
logs are the ones scored.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.benchmark.pool import Pool
from referee.benchmark.score import (
    BenchmarkRating,
    VersusAnchor,
    comparisons,
    fit_candidate,
    groups_of,
    versus,
)
from referee.files import write_atomic
from referee.rules import Scoring
from referee.text import printable
from referee.tournament.results import MatchResult
from referee.tournament.stats import Paired

REPORT = "benchmark.json"
FORMAT = 1


def json_number(x: float, digits: int = 3) -> float | None:
    """``x`` rounded, or None when it is NaN or infinite (JSON has neither)."""
    return None if x != x or math.isinf(x) else round(x, digits)


def _rating(r: BenchmarkRating) -> dict[str, Any]:
    return {
        "rating": json_number(r.value, 1),
        "ci95": [json_number(r.low, 1), json_number(r.high, 1)],
        "se": json_number(r.se, 2),
        "deals": r.deals,
        "comparisons": r.comparisons,
    }


def paired_json(p: Paired) -> dict[str, Any]:
    """A paired comparison as the report and the pool's table write it."""
    return {
        "mean": json_number(p.mean),
        "ci95": [json_number(p.ci95_low), json_number(p.ci95_high)],
        "los": json_number(p.los, 4),
        "deals": p.n,
    }


def _versus(v: VersusAnchor) -> dict[str, Any]:
    return {
        "points_per_hand": paired_json(v.advantage),
        "win_rate": json_number(v.win_rate, 4),
        "groups": v.groups,
    }


def logs_digest(results: Sequence[MatchResult]) -> str:
    """SHA-256 over ``match_id final_hash`` lines, in schedule order."""
    text = "".join(f"{r.match_id} {r.final_hash}\n" for r in sorted(results, key=lambda r: r.index))
    return hashlib.sha256(text.encode()).hexdigest()


def build_report(
    pool: Pool,
    candidate: str,
    anchors: Sequence[str],
    results: Sequence[MatchResult],
    *,
    quick: bool,
    deals: int,
    total_matches: int,
    bot: dict[str, Any],
) -> dict[str, Any]:
    """The report of a benchmark's results so far."""
    chips = pool.rules.scoring is Scoring.CHIPS
    ratings = {a: pool.anchor(a).rating for a in anchors}
    raw_groups = groups_of(results)
    clean_groups = groups_of(results, clean_for=candidate)
    raw = comparisons(raw_groups, candidate, chips)
    clean = comparisons(clean_groups, candidate, chips)
    raw_vs = {v.anchor: v for v in versus(raw, ratings)}
    clean_vs = {v.anchor: v for v in versus(clean, ratings)}
    hands = won = faulty = 0
    for r in results:
        if not r.finished:
            continue
        for s in r.seats:
            if s.bot == candidate:
                hands += len(s.summary.scores)
                won += (
                    sum(1 for x in s.summary.scores if x == 0)
                    if not chips
                    else sum(1 for x in s.summary.scores if x > 0)
                )
                faulty += len(s.summary.faulty_hands)
    identity = {k: v for k, v in bot.items() if k != "key"}  # a remote bot's key is secret
    finished = [r for r in results if r.finished]
    return {
        "format": FORMAT,
        "pool": pool.version,
        "quick": quick,
        "candidate": candidate,
        "bot": identity,
        "anchors": list(anchors),
        "deal_set": {
            "seed": pool.deal_seed,
            "deals": deals,
            "rules": pool.profile,
            "hands_per_match": pool.hands,
        },
        "matches": {
            "total": total_matches,
            "recorded": len(results),
            "finished": len(finished),
            "failed": len(results) - len(finished),
        },
        "complete": len(results) == total_matches,
        "model": "Bradley-Terry on the Elo scale (400), anchors frozen, one virtual draw "
        "each; 95% interval with a cluster-robust variance over deals",
        "score": _rating(fit_candidate(raw, ratings)) if raw else None,
        "score_clean": _rating(fit_candidate(clean, ratings)) if clean else None,
        "versus": {
            a: {
                "rating": ratings[a],
                "raw": _versus(raw_vs[a]),
                "clean": _versus(clean_vs[a]),
            }
            for a in anchors
        },
        "hands": {
            "played": hands,
            "won": won,
            "won_share": json_number(won / hands, 4) if hands else None,
            "with_faults": faulty,
        },
        "logs_sha256": logs_digest(finished),
        "signed_by": sorted({r.signed_by for r in finished if r.signed_by}),
    }


def write_report(folder: Path, report: dict[str, Any]) -> Path:
    path = folder / REPORT
    write_atomic(path, json.dumps(report, indent=2, ensure_ascii=False) + "\n", sync=False)
    return path


def _cell(p: dict[str, Any]) -> str:
    mean, (lo, hi), los = p["mean"], p["ci95"], p["los"]
    if mean is None:
        return "-"
    if lo is None:
        return f"{mean:+.2f}"
    return f"{mean:+.2f} [{lo:+.2f}, {hi:+.2f}] {los * 100:.0f}%"


def _score_line(label: str, s: dict[str, Any] | None) -> str:
    if s is None:
        return f"{label}: no complete deal group yet"
    lo, hi = s["ci95"]
    span = "" if lo is None else f", 95% interval [{lo:.0f}, {hi:.0f}]"
    return f"{label}: {s['rating']:.0f}{span} ({s['deals']} deals, {s['comparisons']} comparisons)"


def format_report(report: dict[str, Any]) -> str:
    """What the command prints at the end."""
    name = printable(report["candidate"])
    ds = report["deal_set"]
    out = [
        f"Benchmark pool {report['pool']}{' (quick)' if report['quick'] else ''}: {name} "
        f"against {', '.join(report['anchors'])} on {ds['deals']} deals of {ds['rules']}, "
        f"{ds['hands_per_match']} hands a match",
        _score_line("Score", report["score"]),
        _score_line("Clean score (hands without its faults)", report["score_clean"]),
        "",
        f"{'anchor':<8} {'rating':>6}  {'points/hand better than the anchor, 95% CI, LoS':<44}"
        f" {'win rate':>8}  clean",
    ]
    for a, v in report["versus"].items():
        raw, clean = v["raw"], v["clean"]
        rate = raw["win_rate"]
        out.append(
            f"{printable(a):<8} {v['rating']:>6.0f}  {_cell(raw['points_per_hand']):<44} "
            f"{'-' if rate is None else f'{rate * 100:.0f}%':>8}  "
            f"{_cell(clean['points_per_hand'])}"
        )
    h = report["hands"]
    if h["played"]:
        out.append(
            f"\nHands: {h['played']} played, {h['won']} won ({h['won_share'] * 100:.1f}%), "
            f"{h['with_faults']} with a timeout, a rejected action or a default"
        )
    m = report["matches"]
    out.append(
        f"Matches: {m['recorded']} of {m['total']} recorded ({m['failed']} failed); "
        f"logs_sha256 {report['logs_sha256']}"
    )
    return "\n".join(out)
