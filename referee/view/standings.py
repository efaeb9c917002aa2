"""Standings as HTML: the ratings table, a chart of the ratings, the head-to-head matrix.

Views of what a tournament's ``standings.json`` holds, ``bots`` (``StandingRow.to_json``)
and ``pairwise`` (``PairRow.to_json``), so that any page with the same data draws them
the same way (``referee view DIR`` now; a ladder's leaderboard later). Each function
takes that JSON and returns an HTML fragment in which every value from it is escaped;
the styles are in ``assets/index.css`` and the matrix's cells name the bots they compare
(``data-a``, ``data-b``) for a page's script to act on. The file is read, not trusted:
a field that is missing or of the wrong type shows as "-".
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from referee.view.fold import text

LIKELY = 0.9
"""Likelihood of superiority from which a pair is coloured as "likely" (or below 1 - it)."""


def esc(value: Any) -> str:
    return html.escape(text(value), quote=True)


def number(value: Any) -> float | None:
    """A finite number of the JSON, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fmt(value: Any, digits: int = 2, *, sign: bool = False) -> str:
    x = number(value)
    if x is None:
        return "-"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def _rows(bots: Any) -> list[Mapping[str, Any]]:
    return [b for b in bots if isinstance(b, Mapping)] if isinstance(bots, list) else []


def _td(content: str, cls: str = "", title: str = "") -> str:
    attrs = (f' class="{cls}"' if cls else "") + (f' title="{esc(title)}"' if title else "")
    return f"<td{attrs}>{content}</td>"


def ratings_table(bots: Any, scoring: str = "penalty") -> str:
    """The table in its sort order: the sort key (mu - 3 sigma), mu and sigma, the rating's
    95% interval with ``~`` where it overlaps the row above, the results, the faults."""
    unit = "chips/hand" if scoring == "chips" else "penalty/hand"
    heads = [
        ("#", ""),
        ("", "~: the 95% interval overlaps the one above: not significantly different"),
        ("bot", ""),
        ("mu − 3σ", "the sort key: a conservative rating"),
        ("mu ± σ", "the rating and its uncertainty"),
        ("95% interval", "mu ± 1.96 sigma"),
        ("matches", ""),
        ("wins", ""),
        ("avg place", ""),
        (unit, "mean per hand and its 95% confidence interval"),
        ("faults", "timeouts, rejected actions, disconnects, crashes"),
    ]
    head = "".join(
        f'<th title="{esc(t)}">{esc(h)}</th>' if t else f"<th>{esc(h)}</th>" for h, t in heads
    )
    body = []
    for bot in _rows(bots):
        overlap = bot.get("overlaps_above") is True
        faults = [
            f"{key} {bot.get(field)}"
            for key, field in (
                ("t/o", "timeouts"),
                ("rej", "rejected"),
                ("disc", "disconnects"),
                ("crash", "crashes"),
                ("breach", "breaches"),
            )
            if isinstance(bot.get(field), int) and bot.get(field)
        ]
        out = bot.get("disqualified")
        name = f"<strong>{esc(bot.get('name'))}</strong>"
        if out:
            name += f' <span class="badge out">disqualified: {esc(out)}</span>'
        ci = f"[{fmt(bot.get('ci95_low'))}, {fmt(bot.get('ci95_high'))}]"
        cls = "out" if out else ""
        body.append(
            f'<tr class="{cls}" data-bot="{esc(bot.get("name"))}">'
            + _td(esc(bot.get("rank", "")), "num")
            + _td("~" if overlap else "", "overlap", "overlaps the one above" if overlap else "")
            + _td(name)
            + _td(fmt(bot.get("ordinal")), "num key")
            + _td(f"{fmt(bot.get('mu'))} ± {fmt(bot.get('sigma'))}", "num")
            + _td(f"[{fmt(bot.get('rating_low'), 1)}, {fmt(bot.get('rating_high'), 1)}]", "num")
            + _td(esc(bot.get("matches", "")), "num")
            + _td(esc(bot.get("wins", "")), "num")
            + _td(fmt(bot.get("avg_place")), "num")
            + _td(f'{fmt(bot.get("score_per_hand"))} <span class="muted">{ci}</span>', "num")
            + _td(esc(", ".join(faults)) if faults else '<span class="muted">none</span>')
            + "</tr>"
        )
    note = (
        '<p class="muted small">Sorted by mu − 3σ. <strong>~</strong>: the rating\'s 95% '
        "interval overlaps the one of the bot above: not significantly different (a "
        "conservative reading; the head-to-head matrix is the sharper test).</p>"
    )
    return (
        f'<div class="scroll"><table class="ratings"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{note}"
    )


def _ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round numbers between lo and hi for an axis.

    >>> _ticks(3.2, 47.8)
    [10, 20, 30, 40]
    """
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    step = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * step:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 6) for i in range(int((hi - first) / step) + 1)]


def ratings_chart(bots: Any) -> str:
    """Each bot's rating (a dot at mu), its 95% interval (the bar) and its sort key (a
    diamond at mu - 3 sigma), in table order: a row per bot, its name in text and its
    marks in an inline SVG placed in percent, so the chart reads the same on a phone and
    on a wide screen. No external asset."""
    rows = [
        b
        for b in _rows(bots)
        if number(b.get("mu")) is not None
        and number(b.get("rating_low")) is not None
        and number(b.get("rating_high")) is not None
    ]
    if not rows:
        return '<p class="muted">No rating yet.</p>'
    lows = [number(b.get("rating_low")) or 0.0 for b in rows]
    lows += [x for x in (number(b.get("ordinal")) for b in rows) if x is not None]
    highs = [number(b.get("rating_high")) or 0.0 for b in rows]
    lo, hi = min(lows), max(highs)
    pad = max((hi - lo) * 0.03, 0.5)
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> str:
        return f"{100 * (v - lo) / (hi - lo):.2f}%"

    ticks = _ticks(lo, hi)
    grid = "".join(f'<line class="grid" x1="{x(t)}" x2="{x(t)}" y1="0" y2="100%"/>' for t in ticks)
    axis = "".join(
        f'<text class="axis" x="{x(t)}" y="13" text-anchor="middle">{t:g}</text>' for t in ticks
    )
    out = [
        '<div class="rating-chart" role="img" aria-label="Ratings with their 95% intervals">',
        f'<div class="rc-row rc-axis"><span></span><svg class="rc-track" height="18">{axis}</svg>'
        "</div>",
    ]
    for i, b in enumerate(rows):
        mu = number(b.get("mu")) or 0.0
        low = number(b.get("rating_low")) or 0.0
        high = number(b.get("rating_high")) or 0.0
        key = number(b.get("ordinal"))
        name = esc(b.get("name"))
        overlap = " overlap" if b.get("overlaps_above") is True else ""
        diamond = (
            f'<svg x="{x(key)}" y="13" overflow="visible"><path class="key" '
            f'd="M0 -6l5 6l-5 6l-5 -6z"><title>mu - 3 sigma {key:.2f}</title></path></svg>'
            if key is not None
            else ""
        )
        out.append(
            f'<div class="rc-row{overlap}{" odd" if i % 2 else ""}" data-bot="{name}">'
            f'<span class="rc-name">{esc(b.get("rank", ""))}. {name}</span>'
            f'<svg class="rc-track" height="26">{grid}'
            f'<line class="interval" x1="{x(low)}" x2="{x(high)}" y1="13" y2="13">'
            f"<title>{name}: 95% interval [{low:.1f}, {high:.1f}]</title></line>{diamond}"
            f'<circle class="mu" cx="{x(mu)}" cy="13" r="5.5"><title>{name}: mu {mu:.2f}'
            "</title></circle></svg></div>"
        )
    out.append("</div>")
    out.append(
        '<ul class="chart-key"><li><span class="k-mu"></span>mu</li>'
        '<li><span class="k-interval"></span>95% interval (mu ± 1.96σ)</li>'
        '<li><span class="k-key"></span>mu − 3σ (the sort key)</li></ul>'
    )
    return "".join(out)


def significance(pair: Mapping[str, Any]) -> str:
    """How sure the head to head is that the row's bot is better: better, likely-better,
    even, likely-worse, worse, or none (fewer than two deal groups).

    >>> significance({"groups": 3, "mean": 2.0, "ci95_low": 0.5, "ci95_high": 3.5, "los": 0.99})
    'better'
    >>> significance({"groups": 3, "mean": -1.0, "ci95_low": -3.0, "ci95_high": 1.0, "los": 0.08})
    'likely-worse'
    """
    groups = pair.get("groups")
    low, high, los = (number(pair.get(k)) for k in ("ci95_low", "ci95_high", "los"))
    if not isinstance(groups, int) or groups < 2 or low is None or high is None or los is None:
        return "none"
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    if los >= LIKELY:
        return "likely-better"
    if los <= 1 - LIKELY:
        return "likely-worse"
    return "even"


def flipped(pair: Mapping[str, Any]) -> dict[str, Any]:
    """The same comparison seen from its other bot (as ``PairRow.flipped``)."""

    def neg(v: Any) -> Any:
        x = number(v)
        return None if x is None else -x + 0.0

    los = number(pair.get("los"))
    return {
        "a": pair.get("b"),
        "b": pair.get("a"),
        "groups": pair.get("groups"),
        "mean": neg(pair.get("mean")),
        "ci95_low": neg(pair.get("ci95_high")),
        "ci95_high": neg(pair.get("ci95_low")),
        "los": None if los is None else round(1 - los, 4),
        "sd": pair.get("sd"),
    }


_SIG_WORDS = {
    "better": "better, significantly (the 95% CI is above 0)",
    "likely-better": f"likely better (likelihood of superiority ≥ {LIKELY:.0%})",
    "even": "no clear difference",
    "likely-worse": f"likely worse (likelihood of superiority ≤ {1 - LIKELY:.0%})",
    "worse": "worse, significantly (the 95% CI is below 0)",
    "none": "fewer than two deal groups",
}


def head_to_head(names: Sequence[str], pairs: Any, scoring: str = "penalty") -> str:
    """The matrix of duplicate-deal comparisons, row bot against column bot: the mean
    difference per hand (positive: the row's bot did better), its 95% CI, the likelihood
    of superiority and the deal groups; each cell coloured by significance."""
    lookup: dict[tuple[str, str], Mapping[str, Any]] = {}
    for p in pairs if isinstance(pairs, list) else []:
        if isinstance(p, Mapping) and isinstance(p.get("a"), str) and isinstance(p.get("b"), str):
            lookup[(p["a"], p["b"])] = p
            lookup[(p["b"], p["a"])] = flipped(p)
    unit = "chips" if scoring == "chips" else "penalty points"
    head = "".join(
        f'<th class="col" title="{esc(n)}"><span>{i + 1}</span></th>' for i, n in enumerate(names)
    )
    body = []
    for i, a in enumerate(names):
        cells = []
        for b in names:
            if a == b:
                cells.append('<td class="self"></td>')
                continue
            p = lookup.get((a, b))
            sig = significance(p) if p is not None else "none"
            if p is None or not isinstance(p.get("groups"), int) or not p.get("groups"):
                cells.append(
                    f'<td class="pair" data-sig="none" data-a="{esc(a)}" data-b="{esc(b)}">-</td>'
                )
                continue
            low, high = number(p.get("ci95_low")), number(p.get("ci95_high"))
            half = f"±{(high - low) / 2:.2f}" if low is not None and high is not None else ""
            los = number(p.get("los"))
            chance = f"{los * 100:.0f}%" if los is not None else "-"
            title = (
                f"{a} vs {b}: {fmt(p.get('mean'), sign=True)} {unit} per hand, 95% CI "
                f"[{fmt(low)}, {fmt(high)}], likelihood of superiority {chance}, "
                f"{p.get('groups')} deal groups: {_SIG_WORDS[sig]}"
            )
            cells.append(
                f'<td class="pair" data-sig="{sig}" data-a="{esc(a)}" data-b="{esc(b)}" '
                f'title="{esc(title)}"><button type="button" class="cell" '
                f'aria-label="{esc(title)}">'
                f'<span class="mean">{fmt(p.get("mean"), sign=True)}</span>'
                f'<span class="ci">{esc(half)}</span>'
                f'<span class="los">{chance} · {esc(p.get("groups"))}</span></button></td>'
            )
        body.append(
            f'<tr><th class="row" title="{esc(a)}"><span class="n">{i + 1}</span> {esc(a)}</th>'
            f"{''.join(cells)}</tr>"
        )
    key = "".join(
        f'<li><span class="swatch" data-sig="{sig}"></span>{esc(words)}</li>'
        for sig, words in _SIG_WORDS.items()
    )
    return (
        f'<p class="muted small">How many {unit} per hand the row\'s bot did better than the '
        "column's on the same deals (duplicate deals: one value per deal group both played): "
        "mean, ± half its 95% confidence interval, likelihood of superiority · deal groups. "
        "Choose a cell to list the matches of the two.</p>"
        f'<div class="scroll"><table class="matrix"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
        f'<ul class="sig-key">{key}</ul>'
    )


def rank_notes(standings: Mapping[str, Any]) -> str:
    """The pairs where the table's order and the head to head disagree, as standings.json
    gives them (``rank_notes``, each with its sentence), with the sort key explained in
    one line; "" when there are none."""
    notes = standings.get("rank_notes")
    lines = [
        f"<li>{esc(n.get('text'))}</li>"
        for n in (notes if isinstance(notes, list) else [])
        if isinstance(n, Mapping) and isinstance(n.get("text"), str)
    ]
    if not lines:
        return ""
    return (
        '<div class="rank-notes" role="note"><p><strong>The table\'s order and the head to '
        f"head disagree.</strong> {esc(standings.get('sort_key', ''))}</p>"
        f"<ul>{''.join(lines)}</ul></div>"
    )


__all__ = [
    "LIKELY",
    "esc",
    "flipped",
    "head_to_head",
    "number",
    "rank_notes",
    "ratings_chart",
    "ratings_table",
    "significance",
]
