"""``referee tournament``: a tournament from a TOML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.flags import add_command, error_exit
from referee.program import referee_program

if TYPE_CHECKING:
    from referee.tournament.director import Tournament, TournamentSummary

TOURNAMENT_EPILOG = """\
examples:
  referee tournament examples/tournament.toml    # results in examples/tournament-results
  referee tournament club.toml --out night1 --concurrency 4  # run again to resume
  referee tournament club.toml --dry-run       # every check of a run, and the plan
      (prints e.g. "sandbox: bubblewrap 0.8.0; per bot 1024 MB, ..." or why bots
      cannot be sandboxed here; [sandbox] and [[bot]] limits in docs/tournaments.md)
  referee verify --tournament night1
"""


def _cmd_tournament(args: argparse.Namespace) -> int:
    import asyncio

    from referee.durations import format_duration
    from referee.service.logging import configure_logging
    from referee.toml_table import ConfigError
    from referee.tournament.director import Tournament, TournamentError
    from referee.tournament.progress import Progress
    from referee.tournament.report import (
        format_pairwise,
        format_rank_notes,
        format_standings,
        verify_command,
    )
    from referee.tournament.toml_reader import load_config

    try:
        config = load_config(Path(args.config))
    except ConfigError as exc:
        return error_exit("tournament", f"{args.config}: {exc}")
    if args.concurrency is not None and args.concurrency < 1:
        return error_exit("tournament", "--concurrency must be at least 1")
    tournament = Tournament(
        config,
        output=Path(args.out) if args.out else None,
        concurrency=args.concurrency,
        address=args.address,
        progress=Progress(sys.stderr),
    )
    tables = len(config.tables())
    print(
        f"Tournament {config.name!r}: {len(config.bots)} bots, {config.format.value}, "
        f"{tables} table{'s' * (tables != 1)} x {config.rounds} round"
        f"{'s' * (config.rounds != 1)} x {config.seatings.per_group} seating"
        f"{'s' * (config.seatings.per_group != 1)} = {config.total_matches} matches, "
        f"{tournament.concurrency} at once; folder {tournament.folder}",
        flush=True,
    )
    if config.sprt is not None:
        s = config.sprt
        print(
            f"Sequential test: {config.hero} vs {s.baseline}, H0: advantage {s.delta0:g} vs "
            f"H1: {s.delta1:g} per hand, alpha {s.alpha:g}, beta {s.beta:g}, at least "
            f"{s.min_groups} deal groups; the tournament stops when it decides",
            flush=True,
        )
    if args.dry_run:
        configure_logging("console", args.log_level, sys.stderr)
        try:
            plan = asyncio.run(tournament.dry_run())
        except TournamentError as exc:
            return error_exit("tournament", exc)
        state = "resumes the tournament there" if plan.resuming else "starts a new tournament"
        print(
            f"Dry run: the configuration, the folder ({state}) and the referee check out.\n"
            f"Schedule: {plan.matches} matches in {plan.groups} deal groups; "
            f"{plan.recorded} recorded, {plan.to_play} to play. Nothing was started."
        )
        if plan.test is not None:
            print(
                f"{plan.test.verdict_text()}; {len(plan.test.groups)} of {plan.groups} "
                "deal groups seat both bots"
            )
        print("\n".join(tournament.isolation.describe(limits=True)))
        for warning in tournament.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return 0
    summary = play_to_the_end(tournament, "tournament", args.log_level)
    if isinstance(summary, int):
        return summary
    scoring = config.rules.scoring.value
    print(format_standings(summary.standings, scoring))
    print()
    names = [r.name for r in summary.standings]
    print(format_pairwise(names, summary.pairwise, scoring))
    print()
    if notes := format_rank_notes(summary.standings, summary.pairwise, scoring):
        print(notes)
        print()
    if summary.test is not None:
        print(summary.test.verdict_text())
    print(
        f"{summary.done}/{summary.total} matches recorded ({summary.failed} failed), "
        f"{summary.played_now} played in {format_duration(summary.seconds)}"
    )
    print(f"Standings: {summary.folder / 'standings.json'}, standings.csv and pairwise.csv")
    print(f"Results: {summary.folder / 'results.jsonl'} and results.csv")
    if any((summary.folder / "logs").glob("*.jsonl")):
        print(f"Verify: {verify_command(referee_program(), summary.folder)}")
    return 0 if summary.complete else 1


def play_to_the_end(
    tournament: Tournament, command: str, log_level: str
) -> TournamentSummary | int:
    """Prepare and play ``tournament`` for ``referee COMMAND``: its jail plan printed,
    the referee's log in its folder, Ctrl-C or SIGTERM stopping it so that the same
    command resumes it. Its summary, or the exit status to return (2: it cannot start,
    130: stopped)."""
    import asyncio
    import signal

    from referee.files import create_private_file
    from referee.service.logging import configure_logging
    from referee.tournament.director import TournamentError

    try:
        tournament.prepare()
    except TournamentError as exc:
        return error_exit(command, exc)
    print("\n".join(tournament.isolation.describe()), flush=True)
    if tournament.counts.done:
        print(f"Resuming: {tournament.counts.done} matches already recorded", flush=True)
    create_private_file(tournament.folder / "referee.log", b"", sync=False)
    with open(tournament.folder / "referee.log", "a", encoding="utf-8") as referee_log:
        configure_logging("json", log_level, referee_log)

        async def run() -> TournamentSummary:
            task = asyncio.current_task()
            loop = asyncio.get_running_loop()
            if task is not None:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.add_signal_handler(sig, task.cancel)
            return await tournament.run()

        try:
            return asyncio.run(run())
        except TournamentError as exc:  # e.g. the listen address is taken
            return error_exit(command, exc)
        except (KeyboardInterrupt, asyncio.CancelledError):
            print(
                f"\nStopped after {tournament.counts.done} of {tournament.counts.total} "
                f"matches; run the same command again to finish the {command}.",
                file=sys.stderr,
            )
            return 130


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee tournament``."""
    tour = add_command(
        sub,
        "tournament",
        "play a tournament between bot programs from a TOML file: duplicate deals, "
        "ratings, resumable",
        TOURNAMENT_EPILOG,
    )
    tour.add_argument("config", help="the tournament's TOML file (see docs/tournaments.md)")
    tour.add_argument(
        "--out", metavar="DIR", help="the results folder (default: the config's output)"
    )
    tour.add_argument(
        "--concurrency", type=int, metavar="N", help="matches at once (default: the config's)"
    )
    tour.add_argument(
        "--address",
        metavar="HOST:PORT",
        help="where the referee listens (default: the config's, else 127.0.0.1 on a free port)",
    )
    tour.add_argument(
        "--dry-run",
        action="store_true",
        help="make every check a run makes (the configuration, the folder's tournament, the "
        "referee, whether bots can be sandboxed here) and print the schedule's size and the "
        "sandbox's limits; start nothing, change nothing",
    )
    tour.add_argument(
        "--log-level", default="warning", help="the referee's log level in DIR/referee.log"
    )
    tour.set_defaults(func=_cmd_tournament)
