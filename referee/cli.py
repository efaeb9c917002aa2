"""The ``referee`` command line: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from referee import __version__

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


def _cmd_judge(args: argparse.Namespace) -> int:
    from referee.judge import judge, run_lines

    run_lines(judge, sys.stdin, sys.stdout)
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from referee.judge import moves, run_lines

    run_lines(moves, sys.stdin, sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee",
        description="A network referee for Pusoy Dos and Big Two.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rules = sub.add_parser("rules", help="the reference judge: check plays without a server")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")
    judge = rules_sub.add_parser(
        "judge",
        help="JSON Lines in, one verdict per line out: is this play legal, and why not",
        epilog=JUDGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    judge.set_defaults(func=_cmd_judge)
    mv = rules_sub.add_parser(
        "moves",
        help="JSON Lines in, every legal play out, in a stable order",
        epilog=MOVES_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mv.set_defaults(func=_cmd_moves)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
