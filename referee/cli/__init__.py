"""The ``referee`` command line: one entry point, one sub-command per job, one module per
family of commands (each with its ``add_parser``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from referee import __version__, extras
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
    except ModuleNotFoundError as exc:  # an extra not installed: one line for every command
        line = extras.missing_line(command_words(args), exc)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `referee replay LOG | head`
        sys.stderr.close()
        return 0
    except SystemExit as exc:  # a command's usage error as its line: exit 2, as argparse's
        if not isinstance(exc.code, str):
            raise
        print(exc.code, file=sys.stderr)
        return 2
    return code


def command_words(args: argparse.Namespace) -> str:
    """``referee ladder init``: the command as a user typed it, without its arguments."""
    words = ["referee", args.command]
    sub = getattr(args, f"{args.command}_command", None)
    if isinstance(sub, str):
        words.append(sub)
    return " ".join(words)


__all__ = ["build_parser", "command_words", "main"]
