"""The ``referee`` command line: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

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


SERVE_EPILOG = """\
example:
  referee serve --address 127.0.0.1:50051 --log-dir matches
  grpcurl -plaintext 127.0.0.1:50051 list

A referee started again on the same --log-dir and --state-dir after a crash resumes every
unfinished match: bots reconnect with their same seat tokens (docs/log-format.md, section 7).
SIGTERM or SIGINT stops it and cancels the running matches; SIGUSR1 stops it and leaves
them to resume at the next start (an upgrade).

Prometheus metrics (docs/deploy.md):
  referee serve --metrics-address 127.0.0.1:9464   # then: curl 127.0.0.1:9464/metrics
"""

MATCH_EPILOG = """\
examples:
  referee match                                   # greedy vs random, pusoy-dos
  referee match --profile big-two --hands 3 --seed demo
  referee match --bot greedy --bot random --bot "python examples/random_bot.py" \\
      --bot "./mybot --address {address} --token {token}" --revolution true
"""

REPLAY_EPILOG = """\
example:
  referee replay matches/20261201-101500-1a2b3c4d.jsonl
"""

VERIFY_EPILOG = """\
example:
  referee verify matches/*.jsonl
  OK: matches/20261201-101500-1a2b3c4d.jsonl: 412 lines, 10 hands verified
"""

TOURNAMENT_EPILOG = """\
examples:
  referee tournament examples/tournament.toml    # results in examples/tournament-results
  referee tournament club.toml --out night1 --concurrency 4  # run again to resume
  referee tournament club.toml --dry-run       # every check of a run, and the plan
  referee verify night1/logs/*.jsonl
"""

DEFAULT_BOTS = ["greedy", "random", "greedy", "random"]

# Counts and times travel as uint32 in CreateMatchRequest.
_UINT32_MAX = 2**32 - 1


def _count(text: str) -> int:
    """An argparse type for a whole number from 0 up to what the protocol carries."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= _UINT32_MAX:
        raise argparse.ArgumentTypeError(f"must be from 0 to {_UINT32_MAX}, got {value}")
    return value


def _cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from referee.log.writer import FsyncPolicy
    from referee.logging import configure_logging
    from referee.server.app import RefereeServer

    # Server logs on one stream, these lines for people on the other, so that a log
    # collector reading JSON from stdout (--log-stream stdout) reads nothing else.
    logs, notes = (
        (sys.stdout, sys.stderr) if args.log_stream == "stdout" else (sys.stderr, sys.stdout)
    )
    configure_logging(args.log_format, args.log_level, logs)

    async def serve() -> None:
        server = RefereeServer(
            args.address,
            Path(args.log_dir),
            args.keep_finished,
            state_dir=Path(args.state_dir),
            resume=not args.no_resume,
            fsync=FsyncPolicy(args.fsync),
            metrics_address=args.metrics_address,
        )
        await server.start()  # OSError: an address or the log folder cannot be used

        def announce() -> None:  # once a signal would stop the server gracefully
            for resumed in server.resumed:
                what = "resumed" if resumed.resumed else f"not resumed: {resumed.problem}"
                print(f"match {resumed.match_id} {what}", file=notes, flush=True)
            where = f"{server.address}; logs in {args.log_dir}"
            print(f"referee listening on {where}", file=notes, flush=True)
            if server.metrics_endpoint is not None:
                address = server.metrics_endpoint.address
                print(f"metrics on http://{address}/metrics", file=notes, flush=True)

        await server.wait_for_signal(announce)

    try:
        asyncio.run(serve())
    except ValueError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    return 0


def _match_options(args: argparse.Namespace) -> dict[str, str]:
    from referee.rules import OPTION_NAMES

    options: dict[str, str] = {}
    for item in args.option or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"referee match: --option wants NAME=VALUE, got {item!r}")
        options[name.strip()] = value.strip()
    for name in OPTION_NAMES:
        value = getattr(args, f"opt_{name}", None)
        if value is not None:
            options[name] = value
    return options


def _cmd_match(args: argparse.Namespace) -> int:
    import asyncio

    from referee.local import MatchSetupError, play_match
    from referee.logging import configure_logging
    from referee.rules import OptionsError, Rules

    configure_logging(args.log_format, args.log_level)
    bots = args.bot or DEFAULT_BOTS
    if len(bots) != 4:
        print(f"referee match: give 4 bots (--bot 4 times), got {len(bots)}", file=sys.stderr)
        return 2
    options = _match_options(args)
    try:
        Rules.for_profile(args.profile, options)
    except OptionsError as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return 2
    try:
        result = asyncio.run(
            play_match(
                bots,
                profile=args.profile,
                options=options,
                seed=args.seed or "",
                hands=args.hands or 0,
                threshold=args.threshold or 0,
                log_dir=Path(args.log_dir),
                turn_time_ms=args.turn_time_ms,
                connect_timeout_ms=args.connect_timeout_ms,
                time_bank_ms=args.time_bank_ms,
                max_rejections=args.max_rejections,
                max_strikes=args.max_strikes,
                max_actions_out_of_turn=args.max_actions_out_of_turn,
                drill_disconnect_after_prompts=args.drill_disconnect_after,
            )
        )
    except MatchSetupError as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return 2
    info = result.info
    names = list(info.config.seat_names)
    status = {3: "finished", 4: "cancelled"}.get(info.status, "unknown")
    print(
        f"Match {result.match_id} {status} after {info.hands_played} hands "
        f"({info.config.rules.profile})"
    )
    for st in info.standings:
        who = " + ".join(f"seat {s} {names[s]}" for s in st.seats)
        print(f"  {st.place}. {who:<28} total {st.total:>5}   hands won {st.hands_won}")
    print(f"Log: {result.log_path}")
    me = _self_command()
    print(f"Replay: {me} replay {result.log_path}")
    print(f"Verify: {me} verify {result.log_path}")
    return 0 if info.status == 3 else 1


def _self_command() -> str:
    """How this command was invoked (``.venv/bin/referee``), for hints a user can paste."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "referee":
        return shlex.quote(argv0)
    return "referee"


def _cmd_replay(args: argparse.Namespace) -> int:
    from referee.log import LogFormatError, read_log
    from referee.log.replay import replay_lines

    try:
        read = read_log(Path(args.log))
    except (OSError, LogFormatError) as exc:
        print(f"referee replay: {exc}", file=sys.stderr)
        return 1
    for line in replay_lines(read, show_rejections=not args.no_rejections):
        print(line)
    return 0 if read.complete else 1


def _cmd_verify(args: argparse.Namespace) -> int:
    from referee.log.verify import verify_log

    failed = 0
    for path in args.logs:
        report = verify_log(Path(path))
        print(report.summary())
        failed += not report.ok
    return 1 if failed else 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from referee.logging import configure_logging
    from referee.tournament.config import ConfigError, load_config
    from referee.tournament.progress import Progress, format_duration
    from referee.tournament.report import (
        format_pairwise,
        format_standings,
        referee_program,
        verify_command,
    )
    from referee.tournament.runner import Tournament, TournamentError, TournamentSummary

    try:
        config = load_config(Path(args.config))
    except ConfigError as exc:
        print(f"referee tournament: {args.config}: {exc}", file=sys.stderr)
        return 2
    if args.concurrency is not None and args.concurrency < 1:
        print("referee tournament: --concurrency must be at least 1", file=sys.stderr)
        return 2
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
            print(f"referee tournament: {exc}", file=sys.stderr)
            return 2
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
        return 0
    try:
        tournament.prepare()
    except TournamentError as exc:
        print(f"referee tournament: {exc}", file=sys.stderr)
        return 2
    if tournament.counts.done:
        print(f"Resuming: {tournament.counts.done} matches already recorded", flush=True)
    with open(tournament.folder / "referee.log", "a", encoding="utf-8") as referee_log:
        configure_logging("json", args.log_level, referee_log)

        async def run() -> TournamentSummary:
            task = asyncio.current_task()
            loop = asyncio.get_running_loop()
            if task is not None:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.add_signal_handler(sig, task.cancel)
            return await tournament.run()

        try:
            summary = asyncio.run(run())
        except TournamentError as exc:  # e.g. the listen address is taken
            print(f"referee tournament: {exc}", file=sys.stderr)
            return 2
        except (KeyboardInterrupt, asyncio.CancelledError):
            print(
                f"\nStopped after {tournament.counts.done} of {tournament.counts.total} "
                "matches; run the same command again to finish the tournament.",
                file=sys.stderr,
            )
            return 130
    scoring = config.rules.scoring.value
    print(format_standings(summary.standings, scoring))
    print()
    print(format_pairwise([r.name for r in summary.standings], summary.pairwise, scoring))
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
        print(f"Verify: {verify_command(referee_program(), summary.folder / 'logs')}")
    return 0 if summary.complete else 1


def _add_logging_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-format",
        choices=["auto", "json", "console"],
        default="auto",
        help="server log format on stderr (default: console on a terminal, else JSON)",
    )
    p.add_argument("--log-level", default="warning", help="debug, info, warning or error")


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

    serve = sub.add_parser(
        "serve",
        help="run the referee server (gRPC) until SIGTERM",
        epilog=SERVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--address", default="127.0.0.1:50051", help="host:port to listen on")
    serve.add_argument("--log-dir", default="matches", help="folder for match event logs")
    serve.add_argument(
        "--keep-finished",
        type=_count,
        default=1000,
        metavar="N",
        help="finished matches held in memory for GetMatch and spectators (older ones: "
        "their logs only; default 1000)",
    )
    serve.add_argument(
        "--state-dir",
        default=".referee",
        help="private folder for what a restart needs and logs must not show (the seeds of "
        "running matches); never the log folder (default: .referee)",
    )
    serve.add_argument(
        "--no-resume",
        action="store_true",
        help="do not resume the unfinished match logs found in the log folder at start",
    )
    serve.add_argument(
        "--fsync",
        choices=["every-event", "every-hand", "never"],
        default="every-hand",
        help="when match logs are forced to disk (they always reach the OS at once, so a "
        "killed referee loses nothing; fsync guards against a lost machine; "
        "default: every-hand)",
    )
    serve.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="serve Prometheus metrics over HTTP at http://HOST:PORT/metrics (default: off)",
    )
    _add_logging_flags(serve)
    serve.add_argument(
        "--log-stream",
        choices=["stderr", "stdout"],
        default="stderr",
        help="where server logs go; the lines for people go to the other one (default: stderr)",
    )
    serve.set_defaults(func=_cmd_serve, log_level="info")

    match = sub.add_parser(
        "match",
        help="start a referee, seat four bots, play one full match, print the standings",
        epilog=MATCH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    match.add_argument(
        "--bot",
        action="append",
        metavar="BOT",
        help="a built-in bot (random, greedy) or a command; give 4 "
        f"(default: {' '.join(DEFAULT_BOTS)})",
    )
    match.add_argument(
        "--profile", default="pusoy-dos", help="pusoy-dos (default), pusoy-dos-chips or big-two"
    )
    match.add_argument("--seed", help="seed of the deals (default: from the OS random source)")
    match.add_argument(
        "--hands", type=_count, help="play this many hands (default: the profile's match end)"
    )
    match.add_argument(
        "--threshold", type=_count, help="play until a total reaches this (instead of --hands)"
    )
    match.add_argument("--log-dir", default="matches", help="folder for the event log")
    match.add_argument("--turn-time-ms", type=_count, default=5000, help="time per turn")
    match.add_argument(
        "--connect-timeout-ms", type=_count, default=30000, help="time for the bots to connect"
    )
    match.add_argument("--time-bank-ms", type=_count, default=0, help="reserve per seat")
    match.add_argument(
        "--max-rejections",
        type=_count,
        default=3,
        help="rejected attempts per turn before the default action",
    )
    match.add_argument(
        "--max-strikes",
        type=_count,
        default=0,
        help="strikes before a seat is played by default (0: no limit)",
    )
    match.add_argument(
        "--max-actions-out-of-turn",
        type=_count,
        default=16,
        help="actions answering no prompt, between two prompts, before a seat's stream is closed",
    )
    match.add_argument(
        "--drill-disconnect-after",
        type=_count,
        default=0,
        metavar="N",
        help="close each seat's stream once after its Nth prompt, to check that bots "
        "reconnect (default: off)",
    )
    match.add_argument(
        "--option", action="append", metavar="NAME=VALUE", help="any option of RULES.md section 3"
    )
    from referee.rules import OPTION_NAMES

    for name in OPTION_NAMES:
        match.add_argument(
            f"--{name.replace('_', '-')}",
            dest=f"opt_{name}",
            metavar="VALUE",
            help=argparse.SUPPRESS,
        )
    _add_logging_flags(match)
    match.set_defaults(func=_cmd_match)

    replay = sub.add_parser(
        "replay",
        help="print a match log as readable text, hand by hand, trick by trick",
        epilog=REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("log", help="a match's .jsonl event log")
    replay.add_argument("--no-rejections", action="store_true", help="hide rejected attempts")
    replay.set_defaults(func=_cmd_replay)

    verify = sub.add_parser(
        "verify",
        help="re-check a log: hash chain, deals against the seed, every verdict, the scores",
        epilog=VERIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("logs", nargs="+", help="match .jsonl event logs")
    verify.set_defaults(func=_cmd_verify)

    tour = sub.add_parser(
        "tournament",
        help="play a tournament between bot programs from a TOML file: duplicate deals, "
        "ratings, resumable",
        epilog=TOURNAMENT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        "referee) and print the schedule's size; start nothing, change nothing",
    )
    tour.add_argument(
        "--log-level", default="warning", help="the referee's log level in DIR/referee.log"
    )
    tour.set_defaults(func=_cmd_tournament)
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


if __name__ == "__main__":
    sys.exit(main())
