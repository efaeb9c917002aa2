"""``referee view DIR``: a replay page per match log and an index page linking them.

A tournament's folder (``results.jsonl``, ``standings.json``, ``logs/``) gets its standings
and a table of its matches; any other folder of ``*.jsonl`` logs (a server's ``--log-dir``)
gets the table of matches. Pages are rebuilt only for logs that changed since the last run
(``pages.json`` in the output folder remembers what each page was built from).
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from referee import __version__
from referee.log.verify import verify_log
from referee.view.fold import Op, text
from referee.view.logfile import MAX_LOG_BYTES, LogTooLarge, fold_log
from referee.view.page import FORMAT, csp_for_static, render_page, replay_data

MANIFEST = "pages.json"
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


@dataclasses.dataclass(frozen=True, slots=True)
class MatchRow:
    """What the index shows of one match log."""

    log: str
    page: str | None
    match_id: str
    profile: str
    status: str
    hands: int
    seats: list[str]
    totals: list[int]
    places: list[int]
    verified: bool | None
    problem: str


def page_name(log: Path) -> str:
    """The page's file name for a log: its stem with only safe characters, ``.html``."""
    return (_SAFE_NAME.sub("_", log.stem) or "match") + ".html"


def row_from_ops(
    log: str, page: str | None, ops: Sequence[Op], verdict: Mapping[str, Any]
) -> MatchRow:
    match = next((op for op in ops if op.get("t") == "match"), {})
    end = next((op for op in ops if op.get("t") == "end"), None)
    places = [0, 0, 0, 0]
    if end is not None:
        for st in end.get("standings", []):
            for seat in st.get("seats", []):
                places[seat] = st.get("place", 0)
    problem = ""
    if not verdict.get("ok"):
        line = verdict.get("line")
        problem = (f"line {line}: " if line else "") + str(verdict.get("problem", ""))
    return MatchRow(
        log=log,
        page=page,
        match_id=str(match.get("id", "")),
        profile=str(match.get("profile", "")),
        status=str(end.get("status", "")) if end is not None else "incomplete",
        hands=sum(1 for op in ops if op.get("t") == "hand_end"),
        seats=list(match.get("seats", ["", "", "", ""])),
        totals=list(end.get("totals", [0, 0, 0, 0])) if end is not None else [0, 0, 0, 0],
        places=places,
        verified=bool(verdict.get("ok")),
        problem=problem,
    )


def build_pages(logs: Iterable[tuple[str, Path]], out: Path) -> list[MatchRow]:
    """A replay page in ``out`` for each (label, log); unchanged logs are not rebuilt."""
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    try:
        manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    stamp = f"{__version__}/{FORMAT}"
    rows: list[MatchRow] = []
    kept: dict[str, Any] = {}
    for label, log in logs:
        name = page_name(log)
        try:
            stat = log.stat()
        except OSError as exc:
            rows.append(_missing(label, f"cannot read the log: {exc.strerror}"))
            continue
        key = [stamp, stat.st_size, stat.st_mtime_ns]
        known = manifest.get(name)
        if isinstance(known, dict) and known.get("key") == key and (out / name).is_file():
            try:
                rows.append(MatchRow(**known["row"]))
                kept[name] = known
                continue
            except TypeError:
                pass
        try:
            folded = fold_log(log, MAX_LOG_BYTES)
        except LogTooLarge as exc:
            rows.append(_missing(label, str(exc)))
            continue
        except OSError as exc:
            rows.append(_missing(label, f"cannot read the log: {exc.strerror}"))
            continue
        report = verify_log(log)
        data = replay_data(folded, report)
        title = f"Match {folded.match_id}" if folded.match_id else f"Match log {log.name}"
        _write(out / name, render_page(data, title))
        row = row_from_ops(label, name, folded.ops, data["verdict"])
        rows.append(row)
        kept[name] = {"key": key, "row": dataclasses.asdict(row)}
    _write(manifest_path, json.dumps(kept, indent=1, ensure_ascii=False))
    return rows


def _missing(label: str, problem: str) -> MatchRow:
    return MatchRow(
        label, None, "", "", "unreadable", 0, ["", "", "", ""], [0] * 4, [0] * 4, None, problem
    )


def _write(path: Path, content: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)


def _inside(folder: Path, relative: str) -> Path | None:
    """``folder / relative`` when it stays inside ``folder`` (results are not trusted)."""
    try:
        path = (folder / relative).resolve()
        path.relative_to(folder.resolve())
    except (ValueError, OSError):
        return None
    return path


def tournament_logs(folder: Path) -> tuple[list[tuple[str, Path]], list[dict[str, Any]]]:
    """The logs a tournament's results name, in schedule order, and its results."""
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for raw in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            result = json.loads(raw)
        except ValueError:
            continue  # a line cut short by a crash; the tournament drops it on resume
        if isinstance(result, dict) and str(result.get("match_id")) not in seen:
            seen.add(str(result.get("match_id")))
            results.append(result)
    results.sort(key=lambda r: r.get("index", 0) if isinstance(r.get("index"), int) else 0)
    logs: list[tuple[str, Path]] = []
    for result in results:
        relative = result.get("log")
        path = _inside(folder, relative) if isinstance(relative, str) and relative else None
        if path is not None:
            logs.append((str(result.get("match_id", path.stem)), path))
    return logs, results


# -- the index page ---------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;
max-width:1200px;padding:1rem;color:#15181c;background:#f6f4ee}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.2rem 0 .4rem}
.muted{color:#5b6470}.bad{color:#a4161a}.good{color:#1f6d33}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.9rem;background:#fff}
th,td{border-bottom:1px solid #d5d2c8;padding:.25rem .4rem;text-align:left;vertical-align:top;
overflow-wrap:anywhere}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
a{color:#1a4fb0}
"""


def esc(value: Any) -> str:
    return html.escape(text(value), quote=True)


def page_shell(title: str, body: str, *, refresh: int = 0, form_action: str = "'none'") -> str:
    """A small static page: escaped content, the same strict policy as the viewer."""
    meta = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    policy = html.escape(csp_for_static(_CSS, form_action))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="referrer" content="no-referrer">{meta}<title>{esc(title)}</title>'
        f"<style>{_CSS}</style></head><body>{body}</body></html>\n"
    )


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table; every cell is already-escaped HTML."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f'<td class="num">{value:.2f}</td>' if value == value else '<td class="num">-</td>'
    return f'<td class="num">{esc(value)}</td>'


def standings_table(doc: Mapping[str, Any]) -> str:
    bots = doc.get("bots")
    columns = [
        ("rank", "#"),
        ("name", "bot"),
        ("mu", "mu"),
        ("sigma", "sigma"),
        ("matches", "matches"),
        ("wins", "wins"),
        ("avg_place", "avg place"),
        ("score_per_hand", "score/hand"),
        ("timeouts", "timeouts"),
        ("rejected", "rejected"),
        ("disconnects", "disconn."),
        ("crashes", "crashes"),
    ]
    rows = []
    for bot in bots if isinstance(bots, list) else []:
        if isinstance(bot, Mapping):
            rows.append(
                [
                    f"<td>{esc(bot.get(key, ''))}</td>" if key == "name" else _num(bot.get(key, ""))
                    for key, _ in columns
                ]
            )
    return _table([esc(title) for _, title in columns], rows)


def matches_table(rows: Sequence[MatchRow], bots: Mapping[str, Sequence[str]] | None = None) -> str:
    out = []
    for row in rows:
        link = (
            f'<a href="{html.escape(row.page, quote=True)}">{esc(row.log)}</a>'
            if row.page
            else esc(row.log)
        )
        names = list(bots.get(row.log, row.seats)) if bots else row.seats
        seats = "<br>".join(
            f"{row.places[s] or '-'}. {esc(names[s] if s < len(names) else '')} ({row.totals[s]})"
            for s in sorted(range(4), key=lambda s: (row.places[s] or 9, s))
        )
        if row.verified is None:
            verdict = f'<span class="bad">{esc(row.problem)}</span>'
        elif row.verified:
            verdict = '<span class="good">✔ verifies</span>'
        else:
            verdict = f'<span class="bad">✘ {esc(row.problem)}</span>'
        out.append(
            [
                f"<td>{link}</td>",
                f"<td>{esc(row.profile)}</td>",
                f"<td>{esc(row.status)}</td>",
                _num(row.hands),
                f"<td>{seats}</td>",
                f"<td>{verdict}</td>",
            ]
        )
    return _table(["match", "profile", "status", "hands", "place. seat (total)", "log"], out)


def write_index(folder: Path, out: Path | None = None) -> tuple[Path, list[MatchRow]]:
    """Build every page and the index of a folder; the index's path and the rows."""
    folder = Path(folder)
    out = Path(out) if out is not None else folder / "view"
    standings: dict[str, Any] = {}
    bots: dict[str, list[str]] = {}
    if (folder / "results.jsonl").is_file():
        logs, results = tournament_logs(folder)
        for result in results:
            seats = result.get("seats")
            if isinstance(seats, list):
                bots[str(result.get("match_id"))] = [
                    str(s.get("bot", "")) if isinstance(s, Mapping) else "" for s in seats[:4]
                ]
        try:
            loaded = json.loads((folder / "standings.json").read_text(encoding="utf-8"))
            standings = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            standings = {}
        rows = build_pages(logs, out)
        missing = [r for r in results if not r.get("log")]
        for result in missing:
            rows.append(
                _missing(
                    str(result.get("match_id", "")), f"no log ({text(result.get('error', ''))})"
                )
            )
    else:
        logs = [(p.stem, p) for p in sorted(folder.glob("*.jsonl"))]
        rows = build_pages(logs, out)
    title = str(standings.get("tournament") or folder.resolve().name or "matches")
    body = [f"<h1>{esc(title)}</h1>"]
    if standings:
        m = standings.get("matches") if isinstance(standings.get("matches"), Mapping) else {}
        assert isinstance(m, Mapping)
        body.append(
            f'<p class="muted">{esc(m.get("done", "?"))} of {esc(m.get("total", "?"))} matches'
            f" recorded ({esc(m.get('failed', 0))} failed),"
            f" scoring {esc(standings.get('scoring', ''))}"
            f", updated {esc(standings.get('updated', ''))}"
            f"{'' if standings.get('final') else ' (not final)'}. "
            f"{esc(standings.get('rating', ''))}</p>"
        )
        body.append("<h2>Standings</h2>")
        body.append(standings_table(standings))
    body.append(f"<h2>Matches ({len(rows)})</h2>")
    body.append(matches_table(rows, bots or None))
    body.append(
        f'<p class="muted">Written by referee {esc(__version__)}. Each replay is one '
        "self-contained file; each log's verdict is what <code>referee verify</code> said "
        "when its page was written.</p>"
    )
    index = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    _write(index, page_shell(title, "\n".join(body)))
    return index, rows
