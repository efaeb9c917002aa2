"""The ladder's web pages, drawn from ``referee.ladder.web.content``'s JSON.

Every value from the database is escaped (``esc``); names go into URLs only after the
store's name rule (``[a-z0-9_-]``). The pages use the tournament page's pieces where they
show the same thing (``referee.view.standings``: the ratings chart, the colours and
words of significance), its stylesheet and page shell (a Content-Security-Policy that
allows only the page's own style and script, by their hashes), plus ``ladder.css``. A
rating history is an inline SVG drawn here; nothing is fetched from anywhere else.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from referee.view.index import page_shell
from referee.view.standings import SIG_WORDS, axis_ticks, esc, fmt, ratings_chart, significance

STYLES = "ladder.css"
SERIES = ("#1a4fb0", "#c0561b", "#1f7a3a", "#8a3ab9", "#a4161a", "#2b7f87", "#6b6b10", "#444")
"""Colours of a bot's versions in its rating history, newest first."""


def when(at: float | None, now: float | None = None) -> str:
    """``3 min ago`` with the UTC time as its title.

    >>> when(1000.0, 1000.0 + 7200)
    '<time datetime="1970-01-01T00:16:40Z" title="1970-01-01 00:16 UTC">2 h ago</time>'
    """
    if at is None:
        return '<span class="muted">never</span>'
    now = time.time() if now is None else now
    ago = max(0.0, now - at)
    if ago < 60:
        text = f"{int(ago)} s ago"
    elif ago < 3600:
        text = f"{int(ago // 60)} min ago"
    elif ago < 172800:
        text = f"{int(ago // 3600)} h ago"
    else:
        text = f"{int(ago // 86400)} days ago"
    moment = datetime.fromtimestamp(at, UTC)
    iso = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f'<time datetime="{iso}" title="{moment:%Y-%m-%d %H:%M} UTC">{text}</time>'


def bot_href(team: str, bot: str) -> str:
    return f"/bots/{esc(team)}/{esc(bot)}"


def _label_link(label: str) -> str:
    """``team/bot#n`` linked to its bot's page."""
    team, _, rest = label.partition("/")
    bot, _, number = rest.partition("#")
    if not team or not bot:
        return esc(label)
    return (
        f'<a href="{bot_href(team, bot)}">{esc(team)}/<strong>{esc(bot)}</strong></a>'
        f'<span class="muted">#{esc(number)}</span>'
    )


def shell(title: str, ladder: str, body: str, *, active: str = "", **kwargs: Any) -> str:
    """A ladder page: the navigation, then ``body``."""
    links = [("/", "Leaderboard"), ("/queue", "Queue"), ("/team", "Your team")]
    current = ' aria-current="page"'
    nav = "".join(
        f'<a href="{href}"{current if name == active else ""}>{name}</a>' for href, name in links
    )
    top = (
        f'<nav class="ladder-nav"><a class="brand" href="/">{esc(ladder)}</a>'
        f'<span class="links">{nav}</span></nav>'
    )
    return page_shell(f"{title} · {ladder}", top + body, styles=STYLES, **kwargs)


# -- the leaderboard ---------------------------------------------------------------------


def leaderboard_page(
    ladder: str, rows: Sequence[Mapping[str, Any]], status: Mapping[str, Any]
) -> str:
    q = status["queue"]
    summary = (
        f'<p class="summary"><strong>{len(rows)}</strong> versions ranked · '
        f'<a href="/queue">{q["queued"]} matches queued, {q["running"]} playing</a> · '
        f"{status['matches_per_minute']} finished in the last minute · "
        f"{status['finished']} in all</p>"
    )
    head = (
        '<tr><th>#</th><th title="the 95% interval overlaps the one above">~</th>'
        "<th>bot</th><th>version</th><th>rating</th><th>95% interval</th>"
        '<th class="n">matches</th><th class="n">wins</th><th class="n">avg place</th>'
        "<th>last played</th></tr>"
    )
    lo = min((r["low"] for r in rows), default=0.0)
    hi = max((r["high"] for r in rows), default=1.0)
    body = []
    for r in rows:
        house = ' <span class="badge house">house</span>' if r["house"] else ""
        body.append(
            f'<tr data-version="{esc(r["version_id"])}">'
            f'<td class="num rank">{esc(r["rank"])}</td>'
            f'<td class="overlap">{"~" if r["overlaps_above"] else ""}</td>'
            f'<td class="who"><a href="{bot_href(r["team"], r["bot"])}">'
            f'<span class="team">{esc(r["team"])}/</span><strong>{esc(r["bot"])}</strong></a>'
            f"{house}</td>"
            f'<td class="num">#{esc(r["version"])}</td>'
            f'<td class="num key" title="mu {fmt(r["mu"])} ± sigma {fmt(r["sigma"])}">'
            f"{fmt(r['mu'], 1)}</td>"
            f'<td class="interval">{_interval_bar(r["low"], r["high"], r["mu"], lo, hi)}</td>'
            f'<td class="num">{esc(r["matches"])}</td><td class="num">{esc(r["wins"])}</td>'
            f'<td class="num">{fmt(r["avg_place"])}</td>'
            f"<td>{when(r['last_played_at'])}</td></tr>"
        )
    table = (
        f'<div class="scroll"><table class="leaderboard"><thead>{head}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
        '<p class="muted small">Active versions, ordered by mu − 3σ (a rating we are fairly '
        "sure of). <strong>~</strong>: its 95% interval overlaps the one above, so the two "
        "are not significantly apart yet. House bots are the ladder's built-in anchors.</p>"
        if rows
        else '<p class="muted">No version is ranked yet: the first uploads are being '
        "validated, or there are fewer than four active versions.</p>"
    )
    chart = ratings_chart(
        [
            {
                "name": r["label"],
                "rank": r["rank"],
                "mu": r["mu"],
                "rating_low": r["low"],
                "rating_high": r["high"],
                "ordinal": r["ordinal"],
                "overlaps_above": r["overlaps_above"],
            }
            for r in rows
        ]
    )
    pending = "".join(f"<li>{_label_link(v['label'])}</li>" for v in status["pending"])
    rejected = "".join(
        f'<li>{_label_link(v["label"])}: <span class="bad">{esc(v["reason"])}</span></li>'
        for v in status["rejected"][:8]
    )
    extra = ""
    if pending or rejected:
        extra = (
            '<section class="card"><h2>Uploads</h2>'
            + (
                f'<p class="muted small">Being validated:</p><ul class="plain">{pending}</ul>'
                if pending
                else ""
            )
            + (
                f'<p class="muted small">Recently rejected:</p><ul class="plain">{rejected}</ul>'
                if rejected
                else ""
            )
            + "</section>"
        )
    body_html = (
        f'<header><h1>Leaderboard</h1>{summary}</header><section class="card">{table}</section>'
        f'<section class="card"><h2>Ratings and their 95% intervals</h2>{chart}</section>'
        f"{extra}"
        '<footer class="muted small">The same data as JSON: <a href="/api/leaderboard">'
        '/api/leaderboard</a>, <a href="/api/status">/api/status</a>.</footer>'
    )
    return shell("Leaderboard", ladder, body_html, active="Leaderboard")


def _interval_bar(low: float, high: float, mu: float, lo: float, hi: float) -> str:
    """The interval as text and as a small bar on the leaderboard's common scale."""
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return max(0.0, min(100.0, 100 * (v - lo) / span))

    return (
        f'<span class="iv-text">[{fmt(low, 1)}, {fmt(high, 1)}]</span>'
        f'<svg class="iv" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">'
        f'<rect x="{x(low):.2f}" y="3" width="{max(x(high) - x(low), 0.5):.2f}" height="4" '
        f'rx="2" class="iv-bar"/><rect x="{x(mu) - 0.6:.2f}" y="1" width="1.2" height="8" '
        'class="iv-mu"/></svg>'
    )


# -- a bot ----------------------------------------------------------------------------------


def history_chart(versions: Sequence[Mapping[str, Any]]) -> str:
    """Each version's rating after each rated deal group: mu as a line, its 95% interval
    as a band, over time; the newest version first in the key."""
    series = [(i, v) for i, v in enumerate(versions) if v.get("history")]
    if not series:
        return '<p class="muted">No rated deal group yet.</p>'
    points = [p for _, v in series for p in v["history"]]
    t0 = float(min(p["at"] for p in points))
    t1 = float(max(p["at"] for p in points))
    lows = [float(p["mu"] - 1.96 * p["sigma"]) for p in points]
    highs = [float(p["mu"] + 1.96 * p["sigma"]) for p in points]
    y0, y1 = min(lows), max(highs)
    pad = max((y1 - y0) * 0.05, 0.5)
    y0, y1 = y0 - pad, y1 + pad
    width, height, left, right, top, bottom = 720.0, 240.0, 44.0, 12.0, 10.0, 26.0

    def x(at: float) -> float:
        if t1 == t0:
            return left + (width - left - right) / 2
        return left + (width - left - right) * (at - t0) / (t1 - t0)

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - (v - y0) / (y1 - y0))

    parts = [
        f'<svg class="history" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        'aria-label="Rating history: mu and its 95% interval after each rated deal group">'
    ]
    for t in axis_ticks(y0, y1, 5):
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(t):.1f}" '
            f'y2="{y(t):.1f}"/><text class="axis" x="{left - 6}" y="{y(t) + 4:.1f}" '
            f'text-anchor="end">{t:g}</text>'
        )
    span = t1 - t0
    for k in range(3) if span > 0 else range(1):
        at = t0 + span * k / 2
        stamp = datetime.fromtimestamp(at, UTC).strftime("%m-%d %H:%M")
        anchor = ("start", "middle", "end")[k] if span > 0 else "middle"
        parts.append(
            f'<text class="axis" x="{x(at):.1f}" y="{height - 8}" text-anchor="{anchor}">'
            f"{stamp}</text>"
        )
    for i, v in reversed(series):
        colour = SERIES[i % len(SERIES)]
        hist = v["history"]
        upper = " ".join(f"{x(p['at']):.1f},{y(p['mu'] + 1.96 * p['sigma']):.1f}" for p in hist)
        lower = " ".join(
            f"{x(p['at']):.1f},{y(p['mu'] - 1.96 * p['sigma']):.1f}" for p in reversed(hist)
        )
        line = " ".join(f"{x(p['at']):.1f},{y(p['mu']):.1f}" for p in hist)
        parts.append(
            f'<polygon class="band" points="{upper} {lower}" fill="{colour}"/>'
            f'<polyline class="mu-line" points="{line}" stroke="{colour}"/>'
        )
        for p in hist[-60:]:
            parts.append(
                f'<circle cx="{x(p["at"]):.1f}" cy="{y(p["mu"]):.1f}" r="2.6" fill="{colour}">'
                f"<title>#{esc(v['number'])}: mu {p['mu']:.2f} ± {1.96 * p['sigma']:.2f} "
                f"(group {esc(p['group_id'])})</title></circle>"
            )
    parts.append("</svg>")
    key = "".join(
        f'<li><svg width="14" height="10" aria-hidden="true"><rect width="14" height="10" '
        f'rx="2" fill="{SERIES[i % len(SERIES)]}"/></svg>version #{esc(v["number"])}</li>'
        for i, v in series
    )
    return "".join(parts) + f'<ul class="chart-key">{key}<li>band: 95% interval</li></ul>'


def _pair_row(pair: Mapping[str, Any]) -> str:
    sig = significance(pair)
    los = pair.get("los")
    chance = f"{los * 100:.0f}%" if isinstance(los, float) and math.isfinite(los) else "-"
    low, high = pair.get("ci95_low"), pair.get("ci95_high")
    ci = f"[{fmt(low)}, {fmt(high)}]" if low is not None else '<span class="muted">-</span>'
    return (
        f"<tr><td>{_label_link(str(pair.get('b', '')))}</td>"
        f'<td class="num">{esc(pair.get("groups"))}</td>'
        f'<td class="num"><strong>{fmt(pair.get("mean"), sign=True)}</strong></td>'
        f'<td class="num">{ci}</td><td class="num">{chance}</td>'
        f'<td><span class="sig" data-sig="{sig}">{esc(SIG_WORDS[sig])}</span></td></tr>'
    )


def _matches_table(matches: Sequence[Mapping[str, Any]], *, stderr: bool = False) -> str:
    if not matches:
        return '<p class="muted">No match played yet.</p>'
    rows = []
    for m in matches:
        link = (
            f'<a class="mono" href="{esc(m["replay"])}">{esc(m["match_id"])}</a>'
            if m.get("replay")
            else f'<span class="mono">{esc(m["match_id"])}</span>'
        )
        result = (
            f'<span class="place p{esc(m["place"])}">{esc(m["place"])}.</span> '
            f'<span class="muted">{esc(m["total"])} pts</span>'
            if m.get("place")
            else ""
        )
        trouble = ""
        if m.get("failure"):
            trouble += f'<span class="badge crash">{esc(m["failure"])}</span> '
        if m.get("crash"):
            trouble += f'<span class="bad">{esc(m["crash"])}</span>'
        others = " · ".join(
            _label_link(s["label"]) if i != m["seat"] else "<em>this bot</em>"
            for i, s in enumerate(m["seats"])
        )
        outputs = ""
        if stderr and m.get("stderr"):
            outputs = " ".join(
                f'<a href="{esc(u)}">seat {esc(u.rsplit("/", 1)[-1])} output</a>'
                for u in m["stderr"]
            )
        rows.append(
            f"<tr><td>{when(m.get('finished_at'))}</td><td>{link}</td>"
            f'<td class="muted">{esc(m.get("purpose", ""))}</td><td>{result}</td>'
            f'<td class="seats">{others}</td><td>{trouble}{outputs}</td></tr>'
        )
    return (
        '<div class="scroll"><table class="matches"><thead><tr><th>when</th><th>match '
        "(replay)</th><th></th><th>place</th><th>seats</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _retire_form(v: Mapping[str, Any], csrf: str) -> str:
    """The team page's retire button for an active version, folded away (no script to
    ask "are you sure?": retiring cannot be undone)."""
    return (
        '<details class="retire"><summary>retire…</summary>'
        '<form method="post" action="/team/retire" class="stack">'
        f'<input type="hidden" name="csrf" value="{esc(csrf)}">'
        f'<input type="hidden" name="version" value="{esc(v["id"])}">'
        '<label>Reason, shown on its page <input name="reason" maxlength="300" '
        'placeholder="retired by its team"></label>'
        f'<button type="submit">Retire #{esc(v["number"])}</button></form>'
        '<p class="muted small">It stops playing; its results and history stay.</p></details>'
    )


def _versions_table(
    versions: Sequence[Mapping[str, Any]], *, private: bool = False, csrf: str = ""
) -> str:
    """A bot's versions; on its team's page (``csrf``) with a retire button each active one."""
    rows = []
    for v in versions:
        state = esc(v["state"])
        reason = f'<div class="reason">{esc(v["reason"])}</div>' if v.get("reason") else ""
        if csrf and v["state"] == "active":
            reason += _retire_form(v, csrf)
        tail = ""
        if private and v.get("stderr_tail"):
            tail = (
                "<details><summary>its output in the validation match (last lines)</summary>"
                f'<pre class="stderr">{esc(v["stderr_tail"])}</pre></details>'
            )
        rating = (
            f'{fmt(v["mu"], 1)} <span class="muted">'
            f"[{fmt(v['low'], 1)}, {fmt(v['high'], 1)}]</span>"
            if v["rated_groups"]
            else '<span class="muted">unrated</span>'
        )
        rows.append(
            f'<tr><td class="num">#{esc(v["number"])}</td>'
            f'<td><span class="state s-{state}">{state}</span>{reason}{tail}</td>'
            f'<td>{when(v["uploaded_at"])}</td><td class="num">{rating}</td>'
            f'<td class="num">{esc(v["matches"])}</td>'
            f'<td class="num">{esc(v["failed_matches"])}</td>'
            f'<td class="muted small">{esc(v["runtime"])}</td></tr>'
        )
    return (
        '<div class="scroll"><table class="versions"><thead><tr><th>version</th><th>state</th>'
        "<th>uploaded</th><th>rating [95%]</th><th>matches</th><th>failed</th><th>runtime</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def bot_page(ladder: str, data: Mapping[str, Any]) -> str:
    cur = data["current"]
    state = esc(cur["state"])
    desc = f'<p class="desc">{esc(cur["description"])}</p>' if cur.get("description") else ""
    rated = cur["rated_groups"] > 0
    rating = (
        f'<div class="figure"><span class="big">{fmt(cur["mu"], 1)}</span>'
        f'<span class="muted"> rating, 95% interval [{fmt(cur["low"], 1)}, {fmt(cur["high"], 1)}]'
        f"</span></div>"
        if rated
        else '<div class="figure muted">not rated yet</div>'
    )
    first = next(
        (v.get("first_score") for v in data["versions"] if v.get("id") == cur.get("id")), None
    )
    score = first.get("score") if isinstance(first, Mapping) else None
    if (
        isinstance(first, Mapping)
        and isinstance(score, Mapping)
        and isinstance(score.get("ci95"), list)
    ):
        lo, hi = score["ci95"]
        rating += (
            f'<p class="muted">First score, the benchmark\'s quick run (pool '
            f"{esc(first.get('pool'))}): <strong>{fmt(score.get('rating'), 0)}</strong> "
            f"[{fmt(lo, 0)}, {fmt(hi, 0)}]</p>"
        )
    facts = (
        f'<p class="summary">version <strong>#{esc(cur["number"])}</strong> '
        f'<span class="state s-{state}">{state}</span> · {esc(cur["matches"])} ranked matches'
        f" · {esc(cur['failed_matches'])} failed · last played {when(cur['last_played_at'])}</p>"
    )
    pairs = data["head_to_head"]
    h2h = (
        '<p class="muted small">Score per hand better than each opponent on the same deals '
        "(positive: this bot did better; one value per complete deal group both played), its "
        "95% confidence interval and the likelihood that this bot is the better one.</p>"
        '<div class="scroll"><table class="h2h"><thead><tr><th>opponent</th><th>groups</th>'
        "<th>mean/hand</th><th>95% CI</th><th>LoS</th><th>verdict</th></tr></thead><tbody>"
        + "".join(_pair_row(p) for p in pairs)
        + "</tbody></table></div>"
        if pairs
        else '<p class="muted">No complete deal group with another version yet.</p>'
    )
    failures = data["failures"]
    fail_html = (
        '<ul class="plain failures">'
        + "".join(
            f'<li>{when(m.get("finished_at"))} <span class="mono">{esc(m["match_id"])}</span>: '
            + (f'<span class="badge crash">{esc(m["failure"])}</span> ' if m.get("failure") else "")
            + (f'<span class="bad">{esc(m["crash"])}</span>' if m.get("crash") else "")
            + "</li>"
            for m in failures
        )
        + "".join(
            f'<li>{when(r["at"])} {esc(r["label"])} rejected: <span class="bad">{esc(r["reason"])}'
            "</span></li>"
            for r in data["rejected"]
        )
        + "</ul>"
        if failures or data["rejected"]
        else '<p class="muted">None.</p>'
    )
    body = (
        f'<header><p class="crumbs"><a href="/">Leaderboard</a> › {esc(data["team"])}</p>'
        f'<h1>{esc(data["team"])}/<span class="botname">{esc(data["bot"])}</span></h1>'
        f"{desc}{facts}{rating}</header>"
        f'<section class="card"><h2>Rating history</h2>{history_chart(data["versions"])}</section>'
        f'<section class="card"><h2>Head to head (version #{esc(cur["number"])})</h2>'
        f"{h2h}</section>"
        f'<section class="card"><h2>Recent matches</h2>{_matches_table(data["matches"])}</section>'
        f'<section class="card"><h2>Failures</h2>{fail_html}</section>'
        f'<section class="card"><h2>Versions</h2>{_versions_table(data["versions"])}</section>'
        f'<footer class="muted small">As JSON: <a href="/api/bots/{esc(data["team"])}/'
        f'{esc(data["bot"])}">/api/bots/{esc(data["team"])}/{esc(data["bot"])}</a></footer>'
    )
    return shell(f"{data['team']}/{data['bot']}", ladder, body)


# -- the queue ---------------------------------------------------------------------------


def queue_rows(queue: Mapping[str, Any]) -> str:
    """The queue's rows (``ladder.js`` draws the same from ``/queue/events``)."""
    rows = []
    for m in queue["matches"]:
        state = esc(m["state"])
        watch = (
            f'<a class="watch" href="{esc(m["live"])}">watch live</a>'
            if m.get("live")
            else '<span class="muted">waiting</span>'
            if m["state"] == "scheduled"
            else '<span class="muted">starting</span>'
        )
        seats = " · ".join(_label_link(s["label"]) for s in m["seats"])
        rows.append(
            f'<tr data-id="{esc(m["match_id"])}"><td class="num">{esc(m["position"])}</td>'
            f'<td class="mono">{esc(m["match_id"])}</td>'
            f'<td><span class="status s-{state}">{state}</span></td>'
            f'<td>{esc(m["purpose"])}</td><td class="seats">{seats}</td><td>{watch}</td></tr>'
        )
    return "".join(rows)


def queue_page(ladder: str, queue: Mapping[str, Any]) -> str:
    body = (
        '<header><h1>Queue</h1><p class="summary" id="queue-status">'
        f'{queue["running"]} playing, {queue["queued"]} waiting.</p><p class="muted small">'
        "Validation matches of new uploads come first, then ranked deal groups (each deal "
        "played in four seatings). A playing match opens live; this page follows the queue."
        "</p></header>"
        '<section class="card"><div class="scroll"><table class="queue"><thead><tr><th>#</th>'
        "<th>match</th><th>state</th><th>purpose</th><th>seats</th><th></th></tr></thead>"
        f'<tbody id="queue-rows" data-events="/queue/events">{queue_rows(queue)}</tbody>'
        '</table></div><p class="muted" id="queue-empty"'
        f"{' hidden' if queue['matches'] else ''}>Nothing to play.</p></section>"
        '<footer class="muted small">As JSON: <a href="/api/queue">/api/queue</a></footer>'
    )
    return shell(
        "Queue", ladder, body, active="Queue", scripts=("live.js", "ladder.js"), connect="'self'"
    )


# -- a team ----------------------------------------------------------------------------------


def sign_in_page(ladder: str, token: str, note: str = "") -> str:
    """The sign-in form; ``token`` is bound to this browser's sign-in cookie (another
    site cannot post the form with a key of its choosing)."""
    body = (
        '<header><h1>Your team</h1><p class="muted">Sign in with your team\'s API key '
        "(<code>pdl_…</code>) to upload versions and read your bots' output.</p></header>"
        + (f'<p class="bad">{esc(note)}</p>' if note else "")
        + '<section class="card"><form method="post" action="/team/login" class="stack">'
        f'<input type="hidden" name="token" value="{esc(token)}">'
        '<label>API key <input type="password" name="key" autocomplete="current-password" '
        'required maxlength="128" size="60"></label><button type="submit">Sign in</button>'
        "</form></section>"
    )
    return shell("Sign in", ladder, body, active="Your team", form_action="'self'")


def team_page(ladder: str, data: Mapping[str, Any], csrf: str, note: str = "") -> str:
    bots = data["bots"]
    sections = []
    for bot, versions in bots.items():
        sections.append(
            f'<section class="card"><h2><a href="{bot_href(data["team"], bot)}">{esc(bot)}</a>'
            f"</h2>{_versions_table(versions, private=True, csrf=csrf)}</section>"
        )
    body = (
        f"<header><h1>Team {esc(data['team'])}</h1>"
        '<form method="post" action="/team/logout" class="inline">'
        f'<input type="hidden" name="csrf" value="{esc(csrf)}"><button type="submit">'
        "Sign out</button></form></header>"
        + (f'<p class="notice">{esc(note)}</p>' if note else "")
        + '<section class="card"><h2>Upload a version</h2><form method="post" '
        'action="/team/upload" enctype="multipart/form-data" class="stack">'
        f'<input type="hidden" name="csrf" value="{esc(csrf)}">'
        '<label>Bot <input name="bot" required pattern="[a-z0-9][a-z0-9_-]{0,39}" maxlength="40" '
        'placeholder="mybot"></label><label>Archive (.tar.gz or .zip with a bot.toml) '
        '<input type="file" name="archive" required></label><button type="submit">Upload'
        '</button></form><p class="muted small">Each upload is a new version. It plays a '
        "validation match against the house's bots, then replaces the bot's active version "
        "(whose history stays). See docs/ladder.md for bot.toml.</p></section>"
        + "".join(sections)
        + '<section class="card"><h2>Recent matches of your bots</h2>'
        + _matches_table(data["matches"], stderr=True)
        + "</section>"
    )
    return shell(f"Team {data['team']}", ladder, body, active="Your team", form_action="'self'")


def message_page(ladder: str, title: str, text: str) -> str:
    body = f'<h1>{esc(title)}</h1><p>{esc(text)}</p><p><a href="/">The leaderboard</a></p>'
    return shell(title, ladder, body)


__all__ = [
    "bot_page",
    "history_chart",
    "leaderboard_page",
    "message_page",
    "queue_page",
    "queue_rows",
    "sign_in_page",
    "team_page",
    "when",
]
