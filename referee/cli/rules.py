"""``referee rules``: the reference judge (judge, moves, positions)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.cli.flags import add_command, error_exit, seat

JUDGE_EPILOG = """\
example:
  echo '{"profile": "big-two", "table": "9H 9C", "play": "9S 9D"}' | referee rules judge
  {"legal": true, "combination": "pair"}
"""


MOVES_EPILOG = """\
example:
  echo '{"profile": "big-two", "hand": "3D 3C 4H", "lead_must_include": "3D"}' | referee rules moves
  {"moves": ["3D", "3D 3C"], "can_pass": false}
"""


POSITIONS_EPILOG = """\
Each line is a judge request (profile, options, hand, table, ...) with the bot's answer
as "play" and the turn's facts under "about": feed the lines to `referee rules judge`
or `referee rules moves`. See docs/judge.md.

examples:
  referee rules positions matches/20261201-101500-1a2b3c4d.jsonl --seat 0 > seat0.jsonl
  referee rules moves < seat0.jsonl
"""


def _cmd_judge(args: argparse.Namespace) -> int:
    from referee.rules.judge import judge, run_lines

    run_lines(judge, sys.stdin, sys.stdout)
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from referee.rules.judge import moves, run_lines

    run_lines(moves, sys.stdin, sys.stdout)
    return 0


def _cmd_positions(args: argparse.Namespace) -> int:
    import json

    from referee.log import LogFormatError
    from referee.log.positions import PositionsError, read_positions

    try:
        read, found = read_positions(Path(args.log), args.seat)
    except (OSError, LogFormatError, PositionsError) as exc:
        return error_exit("rules positions", f"{args.log}: {exc}", 1)
    for request in found:
        print(json.dumps(request, ensure_ascii=False))
    if not read.complete:
        print(f"referee rules positions: {args.log}: {read.status()}", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee rules`` and its commands."""
    rules = sub.add_parser(
        "rules", help="the reference judge: check plays without a server (docs/judge.md)"
    )
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")
    judge = add_command(
        rules_sub,
        "judge",
        "JSON Lines in, one verdict per line out: is this play legal, and why not",
        JUDGE_EPILOG,
    )
    judge.set_defaults(func=_cmd_judge)
    mv = add_command(
        rules_sub, "moves", "JSON Lines in, every legal play out, in a stable order", MOVES_EPILOG
    )
    mv.set_defaults(func=_cmd_moves)
    pos = add_command(
        rules_sub,
        "positions",
        "the positions a seat met in a match log, as judge requests (JSON Lines)",
        POSITIONS_EPILOG,
    )
    pos.add_argument("log", help="a match's .jsonl event log")
    pos.add_argument("--seat", type=seat, required=True, help="the seat: 0, 1, 2 or 3")
    pos.set_defaults(func=_cmd_positions)
