"""The ``referee`` command line: one entry point, one sub-command per job, one module per
family of commands (each with its ``add_parser``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from referee import __version__
from referee.cli import (
    benchmark,
    bots,
    ladder,
    logs,
    match,
    organiser,
    rules,
    serve,
    tournament,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee",
        description="A network referee for Pusoy Dos and Big Two.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for family in (rules, serve, match, organiser, logs, bots, tournament, benchmark, ladder):
        family.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `referee replay LOG | head`
        sys.stderr.close()
        return 0
    return code


__all__ = ["build_parser", "main"]
