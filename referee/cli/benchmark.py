"""``referee benchmark BOT``: a bot against the frozen pool of anchors (docs/benchmark.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.cli.flags import error_exit
from referee.cli.tournament import play_to_the_end
from referee.program import referee_program

BENCHMARK_EPILOG = """\
examples:
  referee benchmark "{python} examples/greedy_bot.py --address={address}"  # token: PUSOY_TOKEN
  referee benchmark --quick expert                      # a built-in bot, a first look
  referee benchmark --quick --name gemma llm:gemma.toml   # a language model (docs/llm.md)
  referee benchmark --bot-config mine.toml --out mine-v1   # a [[bot]] table: env, cwd, limits
  referee benchmark --key a-long-secret-key --address 0.0.0.0:50051   # a remote bot
  referee benchmark --pool-info                         # the pool: anchors, ratings, deal set
Run the same command again to resume a stopped run; then
  referee verify --tournament DIR      and      referee view DIR
"""


def _cmd_benchmark(args: argparse.Namespace) -> int:

    from referee.benchmark.pool import PoolError, load_pool
    from referee.benchmark.report import build_report, format_report, write_report
    from referee.benchmark.run import (
        Request,
        bot_from_file,
        candidate_table,
        tournament_config,
    )
    from referee.durations import format_duration
    from referee.toml_table import ConfigError
    from referee.tournament.director import Tournament
    from referee.tournament.progress import Progress
    from referee.tournament.report import verify_command

    try:
        pool = load_pool(args.pool)
    except PoolError as exc:
        return error_exit("benchmark", exc)
    if args.pool_info:
        print(_pool_info(pool))
        return 0
    given = [x for x in (args.bot, args.bot_config, args.key) if x]
    if len(given) != 1:
        return error_exit("benchmark", "give one bot: BOT, --bot-config FILE or --key KEY")
    name = args.name or "candidate"
    try:
        if args.bot_config:
            bot = bot_from_file(Path(args.bot_config), args.name)
            base = Path(args.bot_config).resolve().parent
        elif args.key:
            bot, base = {"name": name, "key": args.key}, Path.cwd()
        else:
            bot, base = candidate_table(args.bot, name), Path.cwd()
        if args.concurrency < 1:
            raise ConfigError("--concurrency", "must be at least 1")
        request = Request(
            pool=pool,
            bot=bot,
            base=base,
            quick=args.quick,
            deals=args.deals,
            concurrency=args.concurrency,
            turn_time_ms=args.turn_time_ms,
            time_bank_ms=args.time_bank_ms,
            address=args.address,
            sandbox=args.sandbox,
        )
        out = Path(args.out or f"benchmark-{pool.version}-{request.name}")
        config = tournament_config(request, out)
    except ConfigError as exc:
        return error_exit("benchmark", exc)
    tournament = Tournament(config, output=out, progress=Progress(sys.stderr))
    anchors = request.anchors
    print(
        f"Benchmark pool {pool.version}{' (quick)' if request.quick else ''}: "
        f"{request.name} against {', '.join(anchors)}; {len(config.tables())} tables x "
        f"{request.deal_count} deals x 4 rotations = {config.total_matches} matches, "
        f"{request.concurrency} at once; folder {out}",
        flush=True,
    )
    summary = play_to_the_end(tournament, "benchmark", args.log_level)
    if isinstance(summary, int):
        return summary
    report = build_report(
        pool,
        request.name,
        anchors,
        list(tournament.results.values()),
        quick=request.quick,
        deals=request.deal_count,
        total_matches=config.total_matches,
        bot=config.bot(request.name).identity(),
    )
    path = write_report(tournament.folder, report)
    print(format_report(report))
    print(f"{summary.played_now} matches played in {format_duration(summary.seconds)}")
    if not args.no_page:
        from referee.view.index import write_index

        index, _ = write_index(tournament.folder)
        print(f"Page: {index}")
    print(f"Report: {path}")
    print(f"Verify: {verify_command(referee_program(), summary.folder)}")
    return 0 if summary.complete else 1


def _pool_info(pool: object) -> str:
    from referee.benchmark.pool import Pool

    assert isinstance(pool, Pool)
    lines = [
        f"Pool {pool.version}: {pool.profile}, {pool.hands} hands a match; deal set: "
        f'SHA-256("{pool.deal_seed}:<k>") for deal k = 0, 1, ...; '
        f"{pool.default_deals} deals by default, {pool.quick_deals} with --quick "
        f"(without {', '.join(pool.quick_leaves_out)})",
        f"{'anchor':<8} {'rating':>7}  decisions (SHA-256)  what",
    ]
    for a in pool.anchors:
        lines.append(f"{a.name:<8} {a.rating:>7.1f}  {a.decisions[:16]}…    {a.description}")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee benchmark``."""
    p = sub.add_parser(
        "benchmark",
        help="measure a bot against the frozen pool of anchors on the published deals: a "
        "score with its interval, per-anchor results, signed logs",
        epilog=BENCHMARK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "bot",
        nargs="?",
        metavar="BOT",
        help="the candidate: a built-in bot, a language model (llm:SETTINGS.toml), a "
        "command (placeholders {address} {token} {python} ... as in a tournament) or "
        "stdio:COMMAND",
    )
    p.add_argument("--bot-config", metavar="FILE", help="a TOML file with one [[bot]] table")
    p.add_argument("--key", metavar="KEY", help="a remote bot's key: it joins the lobby")
    p.add_argument("--name", metavar="NAME", help="the candidate's name (default: candidate)")
    p.add_argument("--pool", default="v1", help="the pool version (default: v1)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="without the search anchor and on fewer deals: a first look in about 2 minutes",
    )
    p.add_argument(
        "--deals",
        type=int,
        metavar="N",
        help="deals to play (default: the pool's, see --pool-info)",
    )
    p.add_argument("--out", metavar="DIR", help="the folder (default: benchmark-POOL-NAME)")
    p.add_argument("--concurrency", type=int, default=2, metavar="N", help="matches at once")
    p.add_argument(
        "--turn-time-ms", type=int, default=2000, metavar="MS", help="per turn (default 2000)"
    )
    p.add_argument(
        "--time-bank-ms", type=int, default=0, metavar="MS", help="reserve per seat per match"
    )
    p.add_argument(
        "--address", default="127.0.0.1:0", metavar="HOST:PORT", help="where the referee listens"
    )
    p.add_argument(
        "--sandbox",
        choices=("auto", "on", "off"),
        default="auto",
        help="jail a spawned candidate: the best jail here (auto), the full one, or none",
    )
    p.add_argument("--no-page", action="store_true", help="do not write the HTML pages")
    p.add_argument("--pool-info", action="store_true", help="print the pool and exit")
    p.add_argument(
        "--log-level", default="warning", help="the referee's log level in DIR/referee.log"
    )
    p.set_defaults(func=_cmd_benchmark)
