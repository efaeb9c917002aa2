"""A played match's model seats, told to a person: one line each, clean beside raw."""

from __future__ import annotations

from referee.llm.report import model_report
from referee.table.table import MatchReport


def model_lines(report: MatchReport) -> list[str]:
    """``referee match``'s lines for its model seats (none without one); a trace not yet
    released (its deal group still plays) is read where it waits."""
    from referee.log.traces import trace_path

    lines = []
    for seat, pending in report.traces:
        beside = trace_path(report.log_path, seat)
        path = beside if beside.exists() else pending
        seat_report = model_report(report.log_path, seat, path)
        if seat_report is not None:
            lines.append(seat_report.line())
            lines.append(f"  trace: {path}")
    return lines
