"""A played match, told to a person: the notice of a bot that ended early, the summary
table, and the exit status of ``referee match``.

Exit status of ``referee match`` (also in its ``--help``):

- 0: the match finished, played by the bots as configured: every bot connected and none
  ended before the match did;
- 1: the match did not finish (it was cancelled) for a reason other than its bots;
- 2: nothing was played: bad arguments, a bot program that does not exist, a referee
  that cannot start (its address or log folder);
- 3: a bot crashed: it ended (or could not be started) before the match did; its turns
  were played by default from then on, and the match and its log were still finished;
- 4: a bot never connected (its process ran but never took its seat); its turns were
  played by default after the connect limit.

When both 3 and 4 apply, 3 is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from referee.table.output import raised_where
from referee.table.table import BotExit, MatchReport, SeatReport, describe_exit

EXIT_PLAYED = 0
EXIT_NOT_FINISHED = 1
EXIT_USAGE = 2
EXIT_BOT_CRASHED = 3
EXIT_BOT_NEVER_CONNECTED = 4


def exit_notice(ended: BotExit, *, prefix: str = "") -> str:
    """What to print the moment a bot ends before its match: the seat, the command, its
    exit status or signal, the last lines of its output and the file that holds it."""
    lines = [f"{prefix}{ended.headline}", f"  command: {ended.command}"]
    if ended.stderr_path is not None and ended.started:
        if ended.tail:
            last = "last line" if len(ended.tail) == 1 else f"last {len(ended.tail)} lines"
            lines.append(f"  its output, {last} (all of it in {ended.stderr_path}):")
            lines += [f"  | {line}" for line in ended.tail]
        else:
            lines.append(f"  its output ({ended.stderr_path}) is empty")
    if ended.hint:
        lines.append(f"  why, most likely: {ended.hint}")
    lines.append("  its turns are played by default from now on")
    return "\n".join(lines)


def exit_status(report: MatchReport) -> int:
    """``referee match``'s exit status for a match that was played (see the module)."""
    if any(s.crashed for s in report.seats):
        return EXIT_BOT_CRASHED
    if any(not s.connected for s in report.seats):
        return EXIT_BOT_NEVER_CONNECTED
    if not report.finished:
        return EXIT_NOT_FINISHED
    return EXIT_PLAYED


def raised_text(seat: SeatReport, turn_moves: Mapping[int, tuple[int, int]]) -> str:
    """``the bot's code raised at hand 1, move 14: ZeroDivisionError: division by zero
    (3 times in all)``; "" when its kit said nothing of the kind."""
    if not seat.raised:
        return ""
    first = seat.raised[0]
    more = f" ({len(seat.raised)} times in all)" if len(seat.raised) > 1 else ""
    return f"the bot's code raised at {raised_where(first, turn_moves)}: {first.error}{more}"


def seat_note(seat: SeatReport, turn_moves: Mapping[int, tuple[int, int]] | None = None) -> str:
    """What became of the seat's bot, when it is worth a word."""
    if seat.crashed and seat.exit is not None:
        return f"crashed: {seat.exit.what}"
    if not seat.connected:
        return "never connected"
    if seat.raised:
        first = seat.raised[0]
        kind = first.error.split(":", 1)[0]
        times = f", {len(seat.raised)} times" if len(seat.raised) > 1 else ""
        return f"its code raised at {raised_where(first, turn_moves or {})}: {kind}{times}"
    if seat.exit_code is not None and seat.exit_code != 0:
        return f"{describe_exit(seat.exit_code)} after the match"
    return ""


def summary_lines(report: MatchReport) -> list[str]:
    """The match's head line and one aligned row per seat, best place first."""
    rules = report.settings.rules
    outcome = "finished" if report.finished else f"cancelled ({report.cancel_reason})"
    lines = [
        f"Match {report.match_id} {outcome} after {report.hands} hand"
        f"{'s' * (report.hands != 1)} ({rules.profile})"
    ]
    header: tuple[str, ...] = ("place", "seat", "bot", "total", "won", "rejected")
    header += ("timeouts", "defaults", "disconnects", "")
    rows: list[Sequence[str]] = [header]
    for s in sorted(report.seats, key=lambda s: (s.summary.place or 5, s.seat)):
        sm = s.summary
        rows.append(
            (
                str(sm.place) if sm.place else "-",
                str(s.seat),
                s.name,
                str(sm.total),
                str(sm.hands_won),
                str(sm.rejected),
                str(sm.timeouts),
                str(sm.timeouts + sm.illegal_defaults + sm.absent_turns + sm.benched_turns),
                str(sm.disconnects),
                seat_note(s, report.turn_moves),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    left = {2, 9}  # the bot's name and the note read from the left
    for row in rows:
        cells = [
            cell.ljust(widths[i]) if i in left else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append(("  " + "  ".join(cells)).rstrip())
    return lines


def problem_lines(report: MatchReport) -> list[str]:
    """After the match: one line per bot that did not play as configured."""
    out = []
    for s in report.seats:
        if said := raised_text(s, report.turn_moves):
            where = f"; its output: {s.stderr_path}" if s.stderr_path is not None else ""
            out.append(f"seat {s.seat} ({s.name}): {said}; its kit played the fallback{where}")
        if s.crashed and s.exit is not None:
            where = f"; its output: {s.stderr_path}" if s.stderr_path is not None else ""
            out.append(f"{s.exit.headline}{where}")
        elif not s.connected:
            limit = report.settings.connect_timeout_ms / 1000
            where = f"; its output: {s.stderr_path}" if s.stderr_path is not None else ""
            out.append(
                f"seat {s.seat} ({s.name}) never connected within the connect limit "
                f"({limit:g} s): its turns were played by default{where}"
            )
    return out


__all__ = [
    "EXIT_BOT_CRASHED",
    "EXIT_BOT_NEVER_CONNECTED",
    "EXIT_NOT_FINISHED",
    "EXIT_PLAYED",
    "EXIT_USAGE",
    "exit_notice",
    "exit_status",
    "problem_lines",
    "raised_text",
    "seat_note",
    "summary_lines",
]
