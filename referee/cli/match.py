"""``referee match``: one match between four bots at a referee of its own."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.flags import (
    MatchHelp,
    add_command,
    add_logging_flags,
    add_match_settings_flags,
    error_exit,
    match_settings,
)
from referee.program import referee_program

if TYPE_CHECKING:
    pass


MATCH_EPILOG = """\
examples:
  referee match                                   # greedy vs random, pusoy-dos
  referee match --profile big-two --hands 3 --seed demo
  referee match --bot greedy --bot random --bot "{python} mybot.py" --name mine \\
      --bot "./otherbot --address {address}" --revolution true
  referee match --bot "stdio:clients/stdio/c/bot" --bot greedy --bot greedy --bot random
  referee match --dry-run --bot "{python} mybot/bot.py" --bot greedy --bot greedy --bot random
  referee match --bot llm:gemma.toml --bot greedy --bot greedy --bot random --hands 2

A language model plays a seat as llm:SETTINGS.toml (docs/llm.md): the house's own seat,
beside the referee, reaching the model's OpenAI-compatible endpoint; its own clock comes
from its settings (or --seat-clock), its trace is kept beside the log
(LOG_DIR/<match>.seatN.trace.ndjson), bound to it, and shown by `referee view`.

Spawned bots run in a jail (--sandbox auto): they see the system, their own folder and
the referee's Python read-only, never the log or state folder (the live log holds every
hand), other bots' files or the network. --dry-run shows each bot's jail and what it could
not read there. The log is private (0600) while the match runs; --publish-logs opens it to
every local user once the match is over.

A bot's command may hold these placeholders, each replaced when the bot is spawned:
@PLACEHOLDERS@
It also gets PUSOY_ADDRESS and PUSOY_TOKEN in its environment, where the starter kits
read them, so that a kit's bot needs none: --bot "{python} mybot.py".

A bot that ends before the match does is reported at once (its seat, command, exit
status or signal, and the last lines of its output, kept in LOG_DIR/<match>.seatN.stderr);
its turns are then played by default and the match goes on to its end.

exit status:
  0  the match finished, played by the bots as configured
  1  the match was cancelled, for a reason other than its bots
  2  nothing was played: bad arguments, a bot program not found, the referee cannot start
  3  a bot crashed (it ended, or could not start, before the match did)
  4  a bot never connected (it was played by default after the connect limit)
"""


DEFAULT_BOTS = ["greedy", "random", "greedy", "random"]


class _SeatAction(argparse.Action):
    """``--bot``: one more seat, in seat order; ``--name`` (``const="name"``): the name of
    the seat of the ``--bot`` just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        seats = list(getattr(namespace, self.dest, None) or [])
        if self.const != "name":
            seats.append([str(values), None])
        elif not seats:
            parser.error("--name names the --bot given before it: give a --bot first")
        elif seats[-1][1] is not None:
            parser.error(f"--bot {seats[-1][0]!r} is given two names")
        else:
            seats[-1][1] = str(values)
        setattr(namespace, self.dest, seats)


def _limit(text: str) -> tuple[str, float]:
    """``--limit NAME=VALUE``: one of a jailed bot's limits (docs/tournaments.md, Sandbox).

    >>> _limit("memory_mb=512"), _limit("turn_cores=0.5")
    (('memory_mb', 512), ('turn_cores', 0.5))
    """
    from referee.sandbox import SandboxLimits
    from referee.sandbox.limits import LIMIT_FIELDS

    name, sep, value = text.partition("=")
    if not sep or name not in LIMIT_FIELDS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give NAME=VALUE, NAME one of {', '.join(LIMIT_FIELDS)}"
        )
    whole = isinstance(getattr(SandboxLimits(), name), int)
    try:
        number = int(value) if whole else float(value)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise argparse.ArgumentTypeError(f"{name} is {kind}, not {value!r}") from None
    if not 0 <= number <= 1_000_000 or (whole and number < 1):
        raise argparse.ArgumentTypeError(f"{name} = {value} is out of range")
    return name, number


def _cmd_match(args: argparse.Namespace) -> int:
    import asyncio

    from referee.match.settings import SettingsError
    from referee.rules import new_seed
    from referee.sandbox import SandboxLimits, SandboxUnavailable
    from referee.server.secrets import SecretsError, load_signer
    from referee.service.logging import configure_logging
    from referee.table.bots import match_seats, seat_warnings
    from referee.table.jails import plan_jails
    from referee.table.models import ModelSeatError, release_traces
    from referee.table.readout import (
        EXIT_USAGE,
        exit_notice,
        exit_status,
        model_lines,
        problem_lines,
        summary_lines,
    )
    from referee.table.referees import RefereeUnavailable
    from referee.table.table import BotExit, TableError, play_match

    configure_logging(args.log_format, args.log_level)
    try:
        given = args.seats or [[b, None] for b in DEFAULT_BOTS]
        seats = match_seats([(str(text), name) for text, name in given])
    except ValueError as exc:
        return error_exit("match", exc, EXIT_USAGE)
    try:
        names = [seat.name for seat in seats]
        settings = match_settings(args, names, args.seed or new_seed())
    except SettingsError as exc:
        return error_exit("match", exc, EXIT_USAGE)
    try:
        plan = plan_jails(
            args.sandbox,
            seats,
            log_dir=Path(args.log_dir),
            state_dir=Path(args.state_dir),
            limits=SandboxLimits().merged(dict(args.limits or ())),
        )
    except SandboxUnavailable as exc:
        return error_exit("match", f"--sandbox on: {exc}", EXIT_USAGE)
    warnings = [*plan.warnings, *seat_warnings(seats)]
    if args.dry_run:
        print("\n".join([*plan.lines(), *plan.blocking, *warnings]))
        return EXIT_USAGE if plan.blocking else 0
    for line in [*plan.blocking, *warnings]:
        print(f"referee match: {line}", file=sys.stderr, flush=True)
    if plan.blocking:
        return EXIT_USAGE
    try:
        signer, public_key = load_signer(Path(args.state_dir), Path(args.log_dir))
    except SecretsError as exc:
        return error_exit("match", exc, EXIT_USAGE)

    def notice(ended: BotExit) -> None:
        print(exit_notice(ended, prefix="referee match: "), file=sys.stderr, flush=True)

    try:
        report = asyncio.run(
            play_match(
                settings,
                seats,
                log_dir=Path(args.log_dir),
                on_exit=notice,
                signer=signer,
                jails=plan.jails,
                publish_logs=args.publish_logs,
            )
        )
    except (RefereeUnavailable, SettingsError, TableError, ModelSeatError) as exc:
        return error_exit("match", exc, EXIT_USAGE)
    release_traces(report.log_path, report.traces)  # one match: its deal group is over
    for line in summary_lines(report):
        print(line)
    for line in model_lines(report):  # hook: language-model seats, clean beside raw
        print(line)
    print(f"Log: {report.log_path}")
    me = referee_program()
    print(f"Replay: {me} replay {report.log_path}")
    spawned = any(s.stderr_path is not None for s in report.seats)
    flag, what = ("--with-stderr ", ", each bot's output at its moves") if spawned else ("", "")
    print(f"View:   {me} view {flag}{report.log_path}   (a self-contained HTML replay{what})")
    print(f"Verify: {me} verify --public-key {public_key} {report.log_path}", flush=True)
    for line in problem_lines(report):
        print(f"referee match: {line}", file=sys.stderr)
    return exit_status(report)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee match``."""
    match = add_command(
        sub,
        "match",
        "start a referee, seat four bots, play one full match, print the standings",
        MATCH_EPILOG,
        formatter_class=MatchHelp,
    )
    match.add_argument(
        "--bot",
        action=_SeatAction,
        dest="seats",
        metavar="BOT",
        help="a built-in bot (random, greedy, expert, search, policy), llm:SETTINGS.toml "
        "for a language model (docs/llm.md), a command, or stdio:COMMAND for a bot that "
        "speaks JSON lines on stdin/stdout (docs/protocol.md section 8); give 4, in seat order "
        f"(default: {' '.join(DEFAULT_BOTS)})",
    )
    match.add_argument(
        "--name",
        action=_SeatAction,
        const="name",
        dest="seats",
        metavar="NAME",
        help="the seat name of the --bot just before (default: the program's name, "
        "e.g. random_bot for 'python examples/random_bot.py')",
    )
    add_match_settings_flags(match)
    match.add_argument(
        "--limit",
        action="append",
        dest="limits",
        type=_limit,
        metavar="NAME=VALUE",
        help="a jailed bot's limit (memory_mb, cpu_s, turn_cores, processes, open_files, "
        "tmp_mb, stderr_kb; --dry-run says what holds each): e.g. --limit memory_mb=512",
    )
    match.add_argument("--log-dir", default="matches", help="folder for the event log")
    match.add_argument(
        "--state-dir",
        default=".referee",
        metavar="DIR",
        help="folder for the log signing key (default .referee; created, mode 0700; never "
        "the log folder)",
    )
    match.add_argument(
        "--sandbox",
        choices=["auto", "on", "off"],
        default="auto",
        help="jail spawned bots: auto (default) the best jail this machine allows (full: "
        "root and cgroup v1; light: a user namespace), bare with a warning where none can "
        "be made; on: refuse to run bare; off: run them bare, as you (they can read the "
        "live log, so every hand)",
    )
    match.add_argument(
        "--dry-run",
        action="store_true",
        help="say which jail each spawned bot gets, what it sees and which of its files it "
        "could not read there, and play nothing",
    )
    match.add_argument(
        "--publish-logs",
        action="store_true",
        help="make the log readable by every local user (0644) once the match is over "
        "(it is private, 0600, while it runs: it holds every hand)",
    )
    add_logging_flags(match)
    match.set_defaults(func=_cmd_match)
