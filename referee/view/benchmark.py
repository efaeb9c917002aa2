"""A benchmark's report (``benchmark.json``, ``referee.benchmark.report``) as HTML: the
score with its interval and a row per anchor, on top of the tournament's index page.
The file is read, not trusted: every value is escaped, a missing one shows as "-"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from referee.view.standings import esc, fmt, number


def _get(doc: Any, *keys: str) -> Any:
    for key in keys:
        doc = doc.get(key) if isinstance(doc, Mapping) else None
    return doc


def _interval(pair: Any, digits: int) -> str:
    if not isinstance(pair, list) or len(pair) != 2:
        return "-"
    return f"[{fmt(pair[0], digits, sign=digits > 0)}, {fmt(pair[1], digits, sign=digits > 0)}]"


def _advantage(p: Any) -> str:
    los = number(_get(p, "los"))
    return (
        f"{fmt(_get(p, 'mean'), 2, sign=True)} {_interval(_get(p, 'ci95'), 2)}"
        f" · {'-' if los is None else f'{los * 100:.0f}%'}"
    )


def benchmark_card(report: Mapping[str, Any]) -> str:
    """The report's card."""
    quick = " (quick)" if report.get("quick") else ""
    score = report.get("score")
    clean = report.get("score_clean")
    ds = report.get("deal_set")
    rows = []
    versus = report.get("versus")
    for anchor, v in versus.items() if isinstance(versus, Mapping) else ():
        rate = number(_get(v, "raw", "win_rate"))
        rows.append(
            f"<tr><td>{esc(anchor)}</td><td>{fmt(_get(v, 'rating'), 0)}</td>"
            f"<td>{esc(_advantage(_get(v, 'raw', 'points_per_hand')))}</td>"
            f"<td>{'-' if rate is None else f'{rate * 100:.0f}%'}</td>"
            f"<td>{esc(_advantage(_get(v, 'clean', 'points_per_hand')))}</td></tr>"
        )
    return (
        '<section class="card"><h2>Benchmark pool '
        f"{esc(report.get('pool'))}{esc(quick)}: {esc(report.get('candidate'))}</h2>"
        f'<p class="summary">Score <strong>{fmt(_get(score, "rating"), 0)}</strong> '
        f"{esc(_interval(_get(score, 'ci95'), 0))} (95%), clean {fmt(_get(clean, 'rating'), 0)} "
        f"{esc(_interval(_get(clean, 'ci95'), 0))}; {esc(_get(ds, 'deals'))} deals from "
        f"<code>{esc(_get(ds, 'seed'))}</code></p>"
        f'<p class="muted small">{esc(report.get("model", ""))}</p>'
        "<table><thead><tr><th>anchor</th><th>rating</th>"
        "<th>points/hand better, 95% CI · LoS</th><th>win rate</th><th>clean</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        f'<p class="muted small">logs_sha256 <code>{esc(report.get("logs_sha256"))}</code></p>'
        "</section>"
    )
