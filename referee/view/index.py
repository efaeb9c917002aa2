"""``referee view DIR``: a replay page per match log and an index page linking them.

A tournament's folder (``results.jsonl``, ``standings.json``, ``logs/``) gets what the
terminal report and standings.json know (``referee.view.standings``: the ratings table,
a chart of the ratings with their intervals, the head-to-head matrix) and one line per
match (its group, table and seating, places and totals, the log's verdict), which a small
script filters by bot; any other folder of ``*.jsonl`` logs (a server's ``--log-dir``)
gets the list of its matches. Pages are rebuilt only for logs (and, with
``--with-stderr``, bot output files) that changed since the last run (``pages.json`` in
the output folder remembers what each page was built from). The pages work offline:
their styles and script are inline, allowed by their hashes, and nothing is fetched.
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
from referee.log.outputs import times_path
from referee.log.reader import LogTooLarge
from referee.log.verify import verify_log
from referee.view.fold import Op, fold_log
from referee.view.page import FORMAT, asset, render_page, replay_data, source_hash
from referee.view.standings import esc, head_to_head, rank_notes_html, ratings_chart, ratings_table
from referee.view.stderr import files_beside
from referee.view.traces import traces_beside

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


def _files_key(files: Mapping[int, Path] | None) -> list[Any] | None:
    """What a page's embedded output was made of: each file's and sidecar's size and time."""
    if files is None:
        return None
    key: list[Any] = []
    for seat, path in sorted(files.items()):
        for p in (path, times_path(path)):
            try:
                st = p.stat()
                key.append([seat, p.name, st.st_size, st.st_mtime_ns])
            except OSError:
                key.append([seat, p.name, None])
    return key


def build_pages(
    logs: Iterable[tuple[str, Path]],
    out: Path,
    stderr: Mapping[str, Mapping[int, Path]] | None = None,
) -> list[MatchRow]:
    """A replay page in ``out`` for each (label, log), with the output files
    ``stderr[label]`` names beside the moves (``--with-stderr``); unchanged logs are not
    rebuilt."""
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
        files = stderr.get(label) if stderr is not None else None
        traces = traces_beside(log)  # hook: model seats' traces, once released
        key = [stamp, stat.st_size, stat.st_mtime_ns, _files_key(files), _files_key(traces)]
        known = manifest.get(name)
        if isinstance(known, dict) and known.get("key") == key and (out / name).is_file():
            try:
                rows.append(MatchRow(**known["row"]))
                kept[name] = known
                continue
            except TypeError:
                pass
        try:
            folded = fold_log(log)
        except LogTooLarge as exc:
            rows.append(_missing(label, str(exc)))
            continue
        except OSError as exc:
            rows.append(_missing(label, f"cannot read the log: {exc.strerror}"))
            continue
        report = verify_log(log)
        data = replay_data(folded, report, stderr=files, traces=traces, log=log)
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


def page_shell(
    title: str,
    body: str,
    *,
    scripts: tuple[str, ...] = (),
    connect: str = "'none'",
    form_action: str = "'none'",
    styles: str | None = None,
) -> str:
    """A small page: escaped content, the styles of ``assets/index.css`` (and of
    ``styles``, another stylesheet of ``assets/``) and, when named, scripts of ``assets/``
    joined in one; its policy allows only those (by their hashes), and forms posted to
    ``form_action`` (the web front's sign-in page posts to itself)."""
    css = asset("index.css") + (asset(styles) if styles else "")
    policy = (
        f"default-src 'none'; style-src {source_hash(css)}; img-src data:; "
        f"base-uri 'none'; form-action {form_action}"
    )
    tail = ""
    if scripts:
        js = "".join(asset(name) for name in scripts)
        policy += f"; script-src {source_hash(js)}; connect-src {connect}"
        tail = f"<script>{js}</script>"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
        f'<meta name="referrer" content="no-referrer"><title>{esc(title)}</title>'
        f"<style>{css}</style></head><body>{body}{tail}</body></html>\n"
    )


def _verdict(row: MatchRow | None) -> str:
    if row is None:
        return '<span class="verdict muted">no log</span>'
    if row.verified is None:
        return f'<span class="verdict bad" title="{esc(row.problem)}">{esc(row.problem)}</span>'
    if row.verified:
        return '<span class="verdict good" title="referee verify accepts the log">✔ verifies</span>'
    return f'<span class="verdict bad" title="{esc(row.problem)}">✘ {esc(row.problem)}</span>'


def _seats(names: Sequence[str], places: Sequence[int], totals: Sequence[Any]) -> str:
    order = sorted(range(len(names)), key=lambda s: (places[s] or 9, s))
    return "".join(
        f'<span class="seat" data-place="{places[s] or 0}" title="seat {s}">'
        f'{places[s] or "-"}. {esc(names[s])} <span class="total">{esc(totals[s])}</span></span>'
        for s in order
    )


def _match_line(
    row: MatchRow | None, result: Mapping[str, Any] | None, label: str
) -> tuple[str, list[str]]:
    """One compact line per match, and its bots (for the filter)."""
    seats = result.get("seats") if result is not None else None
    seats = [s for s in seats if isinstance(s, Mapping)][:4] if isinstance(seats, list) else []
    if seats:
        names = [str(s.get("bot", "")) for s in seats]
        places = [p if isinstance(p := s.get("place"), int) else 0 for s in seats]
        totals = [s.get("total", "") for s in seats]
        crashed = [bool(s.get("crashed")) for s in seats]
        raised = [s.get("raised") if isinstance(s.get("raised"), int) else 0 for s in seats]
    elif row is not None:
        names, places, totals, crashed = list(row.seats), list(row.places), list(row.totals), []
        raised = []
    else:
        names, places, totals, crashed, raised = [], [], [], [], []
    status = str(result.get("status", "")) if result is not None else (row.status if row else "")
    hands = result.get("hands") if result is not None else (row.hands if row else 0)
    problem = (
        status != "finished" or (row is None or not row.verified) or any(crashed) or any(raised)
    )
    where = ""
    if result is not None:
        where = (
            f'<span class="where">group {esc(result.get("group", "?"))} · table '
            f"{esc(result.get('table', '?'))} · seating {esc(result.get('seating', '?'))}</span>"
        )
        index = result.get("index")
        number = f'<span class="idx">#{esc(index + 1 if isinstance(index, int) else "?")}</span>'
    else:
        number = ""
    link = (
        f'<a href="{html.escape(row.page, quote=True)}">{esc(label)}</a>'
        if row is not None and row.page
        else f"<span>{esc(label)}</span>"
    )
    error = result.get("error") if result is not None else ""
    extra = f'<span class="error bad">{esc(error)}</span>' if error else ""
    if any(crashed):
        gone = ", ".join(n for n, c in zip(names, crashed, strict=False) if c)
        extra += f'<span class="badge crash">crashed: {esc(gone)}</span>'
    if any(raised):
        said = ", ".join(
            f"{n} ({k}×)" if k > 1 else n for n, k in zip(names, raised, strict=False) if k
        )
        extra += f'<span class="badge crash">its code raised: {esc(said)}</span>'
    line = (
        f'<li class="match" data-bots="{esc(json.dumps(names))}" data-status="{esc(status)}" '
        f'data-problem="{int(problem)}">{number}{link}{where}'
        f'<span class="status s-{esc(status)}">{esc(status)} · {esc(hands)} '
        f"{'hand' if hands == 1 else 'hands'}</span>"
        f'<span class="seats">{_seats(names, places, totals)}</span>{extra}{_verdict(row)}</li>'
    )
    return line, names


def matches_list(
    rows: Sequence[MatchRow],
    results: Sequence[Mapping[str, Any]] | None = None,
    bots: Sequence[str] = (),
) -> str:
    """Every match on one line, with a filter by bot (two bots: the matches they shared)
    and by problems (not finished, crashes, logs that do not verify)."""
    by_id = {r.log: r for r in rows}
    lines: list[str] = []
    seen: list[str] = list(bots)
    if results is not None:
        for result in results:
            label = str(result.get("match_id", ""))
            line, names = _match_line(by_id.get(label), result, label)
            lines.append(line)
            seen += [n for n in names if n not in seen]
    else:
        for row in rows:
            line, names = _match_line(row, None, row.log)
            lines.append(line)
    options = "".join(f'<option value="{esc(n)}">{esc(n)}</option>' for n in seen)
    filters = (
        '<form class="filters" id="filters" hidden><label>Bot <select id="f-bot">'
        f'<option value="">any</option>{options}</select></label>'
        f'<label>with <select id="f-with"><option value="">any</option>{options}</select></label>'
        '<label>Show <select id="f-status"><option value="">every match</option>'
        '<option value="problems">problems only</option></select></label>'
        '<button type="button" id="f-clear">Show all</button>'
        '<span id="f-count" class="muted" aria-live="polite"></span></form>'
        if seen
        else ""
    )
    return f'{filters}<ol class="match-list" id="matches">{"".join(lines)}</ol>'


def _summary(standings: Mapping[str, Any]) -> str:
    m = standings.get("matches") if isinstance(standings.get("matches"), Mapping) else {}
    assert isinstance(m, Mapping)
    parts = [
        f"{esc(m.get('done', '?'))} of {esc(m.get('total', '?'))} matches recorded "
        f"({esc(m.get('failed', 0))} failed)",
        f"scoring {esc(standings.get('scoring', ''))}",
        f"updated {esc(standings.get('updated', ''))}",
        "final" if standings.get("final") else "not final",
    ]
    sprt = standings.get("sprt")
    if isinstance(sprt, Mapping):
        test = ", ".join(f"{esc(k)} {esc(v)}" for k, v in list(sprt.items())[:8])
        parts.append(f"sequential test: {test}")
    return (
        f'<p class="summary">{" · ".join(parts)}</p>'
        f'<p class="muted small">{esc(standings.get("rating", ""))}</p>'
    )


def tournament_body(
    title: str,
    standings: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    rows: Sequence[MatchRow],
) -> str:
    bots = standings.get("bots")
    scoring = str(standings.get("scoring", "penalty"))
    names = (
        [
            str(b.get("name"))
            for b in bots
            if isinstance(b, Mapping) and isinstance(b.get("name"), str)
        ]
        if isinstance(bots, list)
        else []
    )
    parts = [f"<header><h1>{esc(title)}</h1>{_summary(standings)}</header>"]
    if names:
        parts += [
            '<section class="card"><h2>Standings</h2>',
            ratings_table(bots, scoring),
            rank_notes_html(standings),
            "</section>",
            '<section class="card"><h2>Ratings and their 95% intervals</h2>',
            ratings_chart(bots),
            "</section>",
            '<section class="card"><h2>Head to head, on the same deals</h2>',
            head_to_head(names, standings.get("pairwise"), scoring),
            "</section>",
        ]
    parts += [
        f'<section class="card" id="matches-card"><h2>Matches ({len(results)})</h2>',
        matches_list(rows, results, names),
        "</section>",
    ]
    return "\n".join(parts)


def _stderr_files(folder: Path, results: Sequence[Mapping[str, Any]]) -> dict[str, dict[int, Path]]:
    """Each match's bot output files, as its results line names them (inside the folder)."""
    out: dict[str, dict[int, Path]] = {}
    for result in results:
        seats = result.get("seats")
        files: dict[int, Path] = {}
        for i, seat in enumerate(seats if isinstance(seats, list) else []):
            relative = seat.get("stderr") if isinstance(seat, Mapping) else None
            path = _inside(folder, relative) if isinstance(relative, str) and relative else None
            number = seat.get("seat", i) if isinstance(seat, Mapping) else i
            if path is not None and path.is_file() and isinstance(number, int):
                files[number] = path
        out[str(result.get("match_id", ""))] = files
    return out


def _benchmark_report(folder: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads((folder / "benchmark.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def write_index(
    folder: Path, out: Path | None = None, *, with_stderr: bool = False
) -> tuple[Path, list[MatchRow]]:
    """Build every page and the index of a folder; the index's path and the rows.
    ``with_stderr``: each replay shows its bots' output (the files the folder holds)."""
    folder = Path(folder)
    out = Path(out) if out is not None else folder / "view"
    standings: dict[str, Any] = {}
    if (folder / "results.jsonl").is_file():
        logs, results = tournament_logs(folder)
        try:
            loaded = json.loads((folder / "standings.json").read_text(encoding="utf-8"))
            standings = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            standings = {}
        files = _stderr_files(folder, results) if with_stderr else None
        rows = build_pages(logs, out, files)
        title = str(standings.get("tournament") or folder.resolve().name or "tournament")
        body = tournament_body(title, standings, results, rows)
        report = _benchmark_report(folder)
        if report is not None:  # a benchmark's folder: its report first
            from referee.view.benchmark import benchmark_card

            head, _, rest = body.partition("</header>")
            body = f"{head}</header>{benchmark_card(report)}{rest}" if rest else body
    else:
        logs = [(p.stem, p) for p in sorted(folder.glob("*.jsonl"))]
        files = {label: files_beside(log) for label, log in logs} if with_stderr else None
        rows = build_pages(logs, out, files)
        title = folder.resolve().name or "matches"
        body = (
            f"<header><h1>{esc(title)}</h1></header>"
            f'<section class="card"><h2>Matches ({len(rows)})</h2>{matches_list(rows)}</section>'
        )
    body += (
        f'<footer class="muted small">Written by referee {esc(__version__)}. Each replay is one '
        "self-contained file; each log's verdict is what <code>referee verify</code> said "
        "when its page was written.</footer>"
    )
    index = out / "index.html"
    out.mkdir(parents=True, exist_ok=True)
    _write(index, page_shell(title, body, scripts=("index.js",)))
    return index, rows
