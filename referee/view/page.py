"""One self-contained HTML page: the viewer's script, styles and the match's data inline.

Nothing in the data can become markup: it travels as JSON in a ``<script
type="application/json">`` element with ``<``, ``>``, ``&`` and the two JavaScript line
separators escaped, so no string can close that element, and the script sets every string
with ``textContent``. A Content-Security-Policy allows only this page's own script and
style (by their SHA-256), no other source and no network at all (the live page may reach
its own server's event stream, nothing else).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import html
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from referee import __version__
from referee.log.verify import VerifyReport, verify_log
from referee.view.fold import FoldedLog, Op, fold_log
from referee.view.stderr import stderr_data
from referee.view.traces import trace_data

FORMAT = 1
"""The version of the data the page reads (ops and the envelope around them)."""

_PLACEHOLDER = re.compile(r"\{\{(CSP|TITLE|CSS|DATA|JS)\}\}")


@functools.cache
def asset(name: str) -> str:
    return resources.files("referee.view").joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(value: Any) -> str:
    """JSON that is inert inside any HTML element: no ``<``, ``>`` or ``&`` appears."""
    out = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        out.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def source_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def csp(connect: str = "'none'") -> str:
    """The page's Content-Security-Policy: its own script and style, nothing else."""
    return (
        f"default-src 'none'; script-src {source_hash(asset('viewer.js'))}; "
        f"style-src {source_hash(asset('viewer.css'))}; img-src data:; "
        f"connect-src {connect}; base-uri 'none'; form-action 'none'"
    )


def render_page(data: dict[str, Any], title: str, *, connect: str = "'none'") -> str:
    """The viewer page around ``data`` (ops and the envelope the script reads)."""
    parts = {
        "CSP": html.escape(csp(connect), quote=True),
        "TITLE": html.escape(title, quote=True),
        "CSS": asset("viewer.css"),
        "DATA": embed_json(data),
        "JS": asset("viewer.js"),
    }
    # One pass: text put in place is never searched for placeholders again.
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], asset("viewer.html"))


def verdict_data(report: VerifyReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "line": report.line,
        "problem": report.problem or "",
        "lines": report.lines,
        "hands": report.hands,
        "checker": f"referee {__version__}",
        "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def replay_data(
    folded: FoldedLog,
    report: VerifyReport,
    *,
    embed_log: bool = True,
    stderr: Mapping[int, Path] | None = None,
    traces: Mapping[int, Path] | None = None,
    log: Path | None = None,
) -> dict[str, Any]:
    """The page's data; ``stderr``: each seat's output file to show beside its moves;
    ``traces``: each model seat's trace (``referee.view.traces``), with its results
    clean beside raw when the ``log`` file is given."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "ops": folded.ops,
        "verdict": verdict_data(report),
    }
    if stderr:
        outputs = stderr_data(stderr, folded.ops, folded.times)
        if outputs is not None:
            data["stderr"] = outputs
    if traces:  # hook: what a language model saw, said and played
        model = trace_data(traces, folded.ops, log)
        if model is not None:
            data["traces"] = model
    if embed_log:
        packed = gzip.compress(folded.raw, compresslevel=9, mtime=0)
        data["log_gz"] = base64.b64encode(packed).decode("ascii")
    return data


def replay_page(
    path: Path,
    *,
    embed_log: bool = True,
    stderr: Mapping[int, Path] | None = None,
    traces: Mapping[int, Path] | None = None,
) -> str:
    """The replay page of a log file: folded, verified, embedded (with each seat's output
    from the files ``stderr`` names, and each model seat's trace from ``traces``, when
    given).

    Raises LogTooLarge (``referee.log.reader``) for a file larger than any log, and
    OSError when the file cannot be read.
    """
    folded = fold_log(path)
    report = verify_log(path)
    title = f"Match {folded.match_id}" if folded.match_id else f"Match log {Path(path).name}"
    data = replay_data(
        folded, report, embed_log=embed_log, stderr=stderr, traces=traces, log=Path(path)
    )
    return render_page(data, title)


def live_page(match_id: str, events_url: str, replay_url: str) -> str:
    """The live page of a running match: ops arrive from ``events_url`` (same origin)."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "ops": [],
        "live": {"events": events_url, "replay": replay_url},
    }
    return render_page(data, f"Match {match_id} (live)", connect="'self'")


__all__ = [
    "FORMAT",
    "Op",
    "embed_json",
    "live_page",
    "render_page",
    "replay_page",
    "source_hash",
]
