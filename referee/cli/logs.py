"""The commands that read match logs: replay, view, verify, dataset."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from referee.cli.flags import add_command, count, error_exit
from referee.program import referee_program
from referee.text import printable

REPLAY_EPILOG = """\
examples:
  referee replay matches/20261201-101500-1a2b3c4d.jsonl
  referee replay matches/20261201-101500-1a2b3c4d.jsonl --seat 2 --hand 3
"""


VIEW_EPILOG = """\
examples:
  referee view matches/20261201-101500-1a2b3c4d.jsonl      # writes ...-1a2b3c4d.html beside it
  referee view match.jsonl -o replay.html                  # one file: mail it, attach it
  referee view night1                                      # a tournament: night1/view/index.html
  referee view --with-stderr matches/20261201-101500-1a2b3c4d.jsonl  # each bot's output too

The page opens offline in any browser: step with the arrow keys, choose a seat's view, link
a moment (#hand=3&move=41). It records what `referee verify` says of the log.
"""


VERIFY_EPILOG = """\
examples:
  referee verify --public-key .referee/signing-key.pub matches/*.jsonl
  OK: matches/20261201-101500-1a2b3c4d.jsonl: 412 lines, 10 hands verified, signed by ...
  referee verify matches/*.jsonl     # the rules only (and a trailer's own signature)
  referee verify --tournament night1  # every log (with night1/signing-key.pub), every deal group

A language-model seat's trace (docs/llm.md) is bound to its log: every trace beside a log
(MATCH.seatN.trace.ndjson) is checked line by line against the hashes the log holds, and
--trace SEAT=FILE checks one kept elsewhere.

With --public-key (the base64 text `referee serve` prints and GetServerInfo serves, or a
file holding it or a PEM key), a log must end with a signature trailer by that key: a
log without one is reported UNSIGNED (cut short before the referee closed it), a changed
log FAILED.
"""


DATASET_EPILOG = """\
examples:
  referee dataset night1 -o night1.parquet          # a tournament folder (its logs and key)
  referee dataset matches/ --public-key .referee/signing-key.pub -o matches.parquet
  referee dataset m.jsonl -o m-rows.jsonl --full-information   # JSON lines, every hand

One row per decision: the seat's observation and mask (docs/rl.md), the action, its time,
the hand's outcome for the seat. Every log is verified first (with its signature when a
key is given); a log that does not verify is named and left out (exit status 1). Needs
the rl extra: pip install "pusoy-referee[rl]".
"""


def _folder_hint(folder: Path) -> str:
    """What to run on a folder given where one match's log is expected."""
    me, shown = referee_program(), printable(shlex.quote(str(folder)))
    tournament = (folder / "tournament.json").is_file()
    logs = sorted((folder / "logs" if tournament else folder).glob("*.jsonl"))
    lines = [f"{printable(str(folder))} is a folder; replay reads one match's log"]
    if logs:
        lines[0] += f", e.g.:\n  {me} replay {printable(shlex.quote(str(logs[-1])))}"
    lines.append("For all of its matches:")
    lines.append(f"  {me} view {shown}   (an HTML page for each match, and an index)")
    if tournament:
        lines.append(f"  {me} verify --tournament {shown}   (every log and deal group)")
    else:
        lines.append(f"  {me} verify {shown}/*.jsonl   (every log)")
    return "\n".join(lines)


def _cmd_replay(args: argparse.Namespace) -> int:
    from referee.log import LogFormatError, read_log
    from referee.log.replay import replay_lines

    if Path(args.log).is_dir():
        return error_exit("replay", _folder_hint(Path(args.log)))
    if args.seat is not None:
        return _seat_replay(args)
    try:
        read = read_log(Path(args.log))
    except (OSError, LogFormatError) as exc:
        return error_exit("replay", exc, 1)
    for line in replay_lines(read, show_rejections=not args.no_rejections, hand=args.hand):
        print(line)
    return 0 if read.complete else 1


def _seat_replay(args: argparse.Namespace) -> int:
    from referee.log.reader import LogFormatError
    from referee.view.fold import fold_log
    from referee.view.seat_replay import seat_lines

    try:
        folded = fold_log(Path(args.log))
    except (OSError, LogFormatError) as exc:
        return error_exit("replay", exc, 1)
    for line in seat_lines(folded.ops, args.seat, args.hand):
        print(line)
    complete = any(op["t"] == "end" for op in folded.ops) and not folded.truncated
    return 0 if complete else 1


def _cmd_view(args: argparse.Namespace) -> int:
    from referee.log.reader import LogTooLarge
    from referee.view.index import write_index
    from referee.view.page import replay_page
    from referee.view.stderr import files_beside
    from referee.view.traces import traces_beside

    source = Path(args.source)
    try:
        if source.is_dir():
            out_dir = Path(args.output) if args.output else None
            index, rows = write_index(source, out_dir, with_stderr=args.with_stderr)
            bad = sum(1 for r in rows if not r.verified)
            print(f"{index} ({len(rows)} matches, {bad} that do not verify or cannot be read)")
            return 0
        out = Path(args.output) if args.output else source.with_suffix(".html")
        files = files_beside(source) if args.with_stderr else None
        if args.with_stderr and not files:
            where = source.with_name(f"{source.stem}.seatN.stderr")
            print(f"referee view: no bot output beside the log ({where})", file=sys.stderr)
        html = replay_page(source, stderr=files, traces=traces_beside(source))
        out.write_text(html, encoding="utf-8")
    except (LogTooLarge, OSError) as exc:
        return error_exit("view", exc)
    print(out)
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from referee.log.signing import SigningKeyError, load_public_key, public_key_argument
    from referee.log.verify import verify_log

    key = None
    if args.public_key:
        try:
            key = public_key_argument(args.public_key)
        except SigningKeyError as exc:
            return error_exit("verify", exc)
    if args.tournament:
        if key is None and (Path(args.tournament) / "signing-key.pub").is_file():
            try:
                key = load_public_key(Path(args.tournament) / "signing-key.pub")
            except SigningKeyError as exc:
                return error_exit("verify", exc)
        return _verify_tournament(args, key)
    if not args.logs:
        return error_exit("verify", "give match logs, or --tournament DIR")
    try:
        given = _trace_files(args.trace or [])
    except ValueError as exc:
        return error_exit("verify", exc)
    if given and len(args.logs) != 1:
        return error_exit("verify", "--trace goes with one log")
    failed = 0
    for path in args.logs:
        report = verify_log(Path(path), key)
        print(printable(report.summary()))
        failed += not report.ok
        failed += report.ok and _verify_traces(Path(path), given)
    return 1 if failed else 0


def _trace_files(items: list[str]) -> dict[int, Path]:
    """``--trace SEAT=FILE`` values by seat; ValueError for a bad one."""
    found: dict[int, Path] = {}
    for item in items:
        seat, sep, file = item.partition("=")
        if not sep or seat.strip() not in ("0", "1", "2", "3") or not file.strip():
            raise ValueError(f"--trace wants SEAT=FILE with a seat 0 to 3, got {item!r}")
        found[int(seat)] = Path(file.strip())
    return found


def _verify_traces(path: Path, given: dict[int, Path]) -> bool:
    """Check the log's traces; True when one fails."""
    from referee.log.traces import verify_traces

    bad = False
    for check in verify_traces(path, given):
        print("  " + printable(check.summary()))
        bad = bad or check.problem is not None
    return bad


def _cmd_dataset(args: argparse.Namespace) -> int:
    # Without the rl extra: one line (referee.cli.main), before any log is read.
    import pyarrow  # noqa: F401  (the rl extra's; Parquet)

    from referee.rl.dataset import run

    return run(
        args.logs,
        args.output,
        fmt=args.format,
        full_information=args.full_information,
        public_key=args.public_key,
        progress=not args.no_progress,
    )


def _verify_tournament(args: argparse.Namespace, key: bytes | None) -> int:

    from referee.tournament.verify import verify_tournament

    folder = Path(args.tournament)
    if not (folder / "tournament.json").is_file():
        return error_exit("verify", f"{folder} holds no tournament (no tournament.json)")
    report = verify_tournament(
        folder, jobs=args.jobs or min(4, os.cpu_count() or 1), public_key=key
    )
    for log_report in report.logs:
        if not log_report.ok or args.all:
            print(log_report.summary())
    for problem in report.problems:
        print(f"FAILED: {problem}")
    for note in report.notes:
        print(f"note: {note}")
    print(report.summary())
    return 0 if report.ok else 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee replay``, ``view``, ``verify`` and ``dataset``."""
    replay = add_command(
        sub,
        "replay",
        "print a match log as readable text, hand by hand, trick by trick",
        REPLAY_EPILOG,
    )
    replay.add_argument("log", help="a match's .jsonl event log")
    replay.add_argument("--no-rejections", action="store_true", help="hide rejected attempts")
    replay.add_argument(
        "--seat",
        type=int,
        choices=range(4),
        metavar="N",
        help="only what seat N knew: its own cards, public plays, and at each of its turns "
        "its legal plays, its choice and its rejected attempts",
    )
    replay.add_argument("--hand", type=count, metavar="N", help="only hand N")
    replay.set_defaults(func=_cmd_replay)

    view = add_command(
        sub,
        "view",
        "write a match log as one self-contained HTML replay (or a folder's index)",
        VIEW_EPILOG,
    )
    view.add_argument("source", metavar="LOG|DIR", help="a match's .jsonl log, or a folder of them")
    view.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="the page to write (default: the log's name with .html); for a folder, the "
        "folder for its pages (default: DIR/view)",
    )
    view.add_argument(
        "--with-stderr",
        action="store_true",
        help="show each seat's own output beside its moves, from the files the log's folder "
        "holds (LOG-DIR/MATCH.seatN.stderr; a tournament's stderr/ folder)",
    )
    view.set_defaults(func=_cmd_view)

    verify = add_command(
        sub,
        "verify",
        "re-check a log: hash chain, deals against the seed, every verdict, the scores",
        VERIFY_EPILOG,
    )
    verify.add_argument("logs", nargs="*", help="match .jsonl event logs")
    verify.add_argument(
        "--public-key",
        metavar="KEY",
        help="the referee's public key: its base64 text (as serve prints it), or a file "
        "holding it (base64 or PEM); every log must be signed by it (with --tournament: "
        "default DIR/signing-key.pub)",
    )
    verify.add_argument(
        "--tournament",
        metavar="DIR",
        help="a tournament's folder: every log, the schedule, and that each deal group "
        "shared its deals in the documented seatings",
    )
    verify.add_argument(
        "--trace",
        action="append",
        metavar="SEAT=FILE",
        help="a language-model seat's trace to check against the log (default: the "
        "MATCH.seatN.trace.ndjson files beside it)",
    )
    verify.add_argument(
        "--jobs", type=int, metavar="N", help="logs verified at once (default: up to 4)"
    )
    verify.add_argument(
        "--all", action="store_true", help="with --tournament: print every log's line"
    )
    verify.set_defaults(func=_cmd_verify)

    dataset = add_command(
        sub,
        "dataset",
        "training data from match logs: one row per decision, as Parquet or JSON lines",
        DATASET_EPILOG,
    )
    dataset.add_argument(
        "logs",
        nargs="+",
        metavar="LOGS_OR_TOURNAMENT_DIR",
        help="logs, folders of logs, or a tournament's folder",
    )
    dataset.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the file to write (.parquet, or .jsonl for JSON lines)",
    )
    dataset.add_argument(
        "--format", choices=("parquet", "jsonl"), help="default: from the output's name"
    )
    dataset.add_argument(
        "--full-information",
        action="store_true",
        help="add every seat's cards at each decision (for analysis: no seat knew them)",
    )
    dataset.add_argument(
        "--public-key",
        metavar="KEY",
        help="the referee's public key (as for "
        "verify); default: a tournament folder's signing-key.pub",
    )
    dataset.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    dataset.set_defaults(func=_cmd_dataset)
