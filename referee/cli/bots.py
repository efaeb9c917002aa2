"""The commands that play a seat on a running referee: stdio-bot, bot and llm-bot."""

from __future__ import annotations

import argparse
import os
import sys

from referee.cli.flags import add_client_tls_flags, add_command, client_tls, count, error_exit
from referee.text import printable

STDIO_BOT_EPILOG = """\
examples:
  referee match --bot "stdio:clients/stdio/c/bot" --bot greedy --bot greedy --bot random
  PUSOY_TOKEN=T referee stdio-bot --address 127.0.0.1:50051 --name mine -- ./mybot --fast
  PUSOY_TOKEN=T referee stdio-bot --address ref.example:50051 --tls-ca ca.pem -- ./mybot

The bot reads one JSON line per message of the Play stream on stdin and writes one
answer per line on stdout: cards ("5D 5C"), "pass", or an Action in JSON. See
docs/protocol.md, section 8. Exit status: 0 the match ended, 2 refused, 3 referee
unreachable, 4 the bot stopped reading, 5 the bot ended early, 127 it could not start.
"""


BOT_EPILOG = """\
examples (seats of a match on a `referee serve`, tokens from `organiser create --tokens-dir`):
  referee organiser create --hands 2 --tokens-dir seats
  referee bot greedy --token-file seats/seat-0.token &
  referee bot random --token-file seats/seat-1.token --seed 7 &
  PUSOY_TOKEN="$(cat seats/seat-2.token)" referee bot greedy --address 127.0.0.1:50051 &
  referee bot greedy --token-file seat.token --address ref.example:50051 --tls-ca ca.pem

The seat token comes from --token-file or PUSOY_TOKEN, never from the command line,
where every user of the machine could read it in the process list. The other settings
are the starter kits' (docs/kits.md, section 7): each flag, else its PUSOY_* variable.

exit status (the kits'):
  0   the match ended (finished or cancelled), also while the bot was away
  2   the referee refused the seat (a wrong token, a match over, another bot holds it)
  3   the referee could not be reached within the reconnect window
  4   the stream failed in a way a reconnect cannot fix
  64  no token, an unreadable token or TLS file, a bad setting
"""


def _cmd_stdio_bot(args: argparse.Namespace) -> int:
    import asyncio

    from referee.client.channels import DEFAULT_ADDRESS
    from referee.client.tls import TlsError
    from referee.stdio.bridge import BridgeLimits, run_bridge

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        return error_exit("stdio-bot", "give the bot's command after --")
    token = args.token or os.environ.get("PUSOY_TOKEN", "")
    if not token:
        return error_exit("stdio-bot", "a seat token is needed: --token or PUSOY_TOKEN")
    limits = BridgeLimits(
        max_line_bytes=args.max_line_bytes,
        max_pending_bytes=args.max_pending_bytes,
        reconnect_window_s=args.reconnect_window_s,
    )
    try:
        tls = client_tls(args)
    except TlsError as exc:
        return error_exit("stdio-bot", exc)
    code = asyncio.run(
        run_bridge(
            command,
            args.address or os.environ.get("PUSOY_ADDRESS", DEFAULT_ADDRESS),
            token,
            name=args.name or "",
            want_legal_plays=not args.no_legal_plays,
            limits=limits,
            tls=tls,
        )
    )
    return int(code)


def _cmd_bot(args: argparse.Namespace) -> int:
    from referee.bots.process import EXIT_USAGE, UsageError, play, settings
    from referee.client.tls import TlsError

    try:
        bot = settings(
            args.name,
            address=args.address,
            token_file=args.token_file,
            token_flag=args.token,
            tls=client_tls(args),
            reconnect_window_ms=args.reconnect_window_ms,
            batch_events=args.batch_events,
            seed=args.seed,
        )
    except (UsageError, TlsError) as exc:
        return error_exit("bot", exc, EXIT_USAGE)
    code, line = play(bot)
    print(printable(line), file=sys.stdout if code == 0 else sys.stderr)
    return code


LLM_BOT_EPILOG = """\
examples (a seat of a match on a `referee serve`, the model at your own endpoint):
  referee organiser create --hands 2 --seat-clock 0:60000 --tokens-dir seats
  referee llm-bot gemma.toml --token-file seats/seat-0.token --trace-dir traces
  OPENAI_API_KEY=... referee llm-bot gpt.toml --address ref.example:50051 --tls-ca ca.pem

SETTINGS is the model seat's TOML file (docs/llm.md): the endpoint, the model, the
prompt's switches; its API key comes from the file or variable the settings name, never
from the command line. The trace (MATCH.seatN.trace.ndjson in --trace-dir) is bound to
the referee's log by a hash per action, but it is your own account of what your model
saw and said: the referee never saw the model. Exit status: as referee bot's.
"""


def _cmd_llm_bot(args: argparse.Namespace) -> int:
    from pathlib import Path

    from referee.bots.process import (
        EXIT_USAGE,
        BotSettings,
        UsageError,
        reconnect_window_s,
        seat_token,
    )
    from referee.client.channels import DEFAULT_ADDRESS
    from referee.client.tls import TlsError
    from referee.llm.process import run_model_bot
    from referee.llm.settings import load_model_settings
    from referee.toml_table import ConfigError

    try:
        if args.token is not None:
            raise UsageError("--token is not taken: give --token-file FILE or PUSOY_TOKEN")
        model = load_model_settings(Path(args.settings)).with_key()
        bot = BotSettings(
            name=model.name,
            address=args.address or os.environ.get("PUSOY_ADDRESS") or DEFAULT_ADDRESS,
            token=seat_token(args.token_file, os.environ),
            tls=client_tls(args),
            reconnect_window_s=reconnect_window_s(args.reconnect_window_ms, os.environ),
        )
    except ConfigError as exc:
        return error_exit("llm-bot", f"{args.settings}: {exc}", EXIT_USAGE)
    except (UsageError, TlsError) as exc:
        return error_exit("llm-bot", exc, EXIT_USAGE)
    code, line = run_model_bot(model, bot, Path(args.trace_dir))
    print(printable(line), file=sys.stdout if code == 0 else sys.stderr)
    return code


ADDRESS_HELP = "the referee (default: PUSOY_ADDRESS, else 127.0.0.1:50051)"


def _add_seat_client_flags(p: argparse.ArgumentParser, token_file: str, reconnect: str) -> None:
    """How a bot process of ours reaches its seat (``referee bot``, ``llm-bot``): the
    referee, the seat's token from a file (``--token`` is refused: ps shows it), TLS, and
    how long to retry; ``token_file`` and ``reconnect`` are those flags' help."""
    p.add_argument("--address", help=ADDRESS_HELP)
    p.add_argument("--token-file", metavar="FILE", help=token_file)
    p.add_argument("--token", help=argparse.SUPPRESS)  # refused: see _cmd_bot
    add_client_tls_flags(p)
    p.add_argument("--reconnect-window-ms", type=int, metavar="N", help=reconnect)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee stdio-bot`` and ``referee bot``."""
    stdio = add_command(
        sub,
        "stdio-bot",
        "play a seat with a program that speaks JSON lines on stdin/stdout (no gRPC)",
        STDIO_BOT_EPILOG,
    )
    stdio.add_argument("--address", help=ADDRESS_HELP)
    stdio.add_argument(
        "--token",
        help="the seat's token (default and better: PUSOY_TOKEN; a command line is visible "
        "to every user of the machine in ps)",
    )
    add_client_tls_flags(stdio)
    stdio.add_argument("--name", help="the bot's name for the log (default: the program's name)")
    stdio.add_argument(
        "--no-legal-plays", action="store_true", help="leave legal_plays out of the prompts"
    )
    stdio.add_argument(
        "--max-line-bytes",
        type=count,
        default=4096,
        metavar="N",
        help="the longest answer line; a longer one is a malformed action (default 4096)",
    )
    stdio.add_argument(
        "--max-pending-bytes",
        type=count,
        default=1 << 20,
        metavar="N",
        help="input the bot has not read yet before it is taken for hung and stopped "
        "(default 1048576)",
    )
    stdio.add_argument(
        "--reconnect-window-s",
        type=float,
        default=30.0,
        metavar="S",
        help="give up after this long without a word from the referee (default 30)",
    )
    stdio.add_argument("command", nargs=argparse.REMAINDER, help="-- the bot's command")
    stdio.set_defaults(func=_cmd_stdio_bot)

    bot = add_command(
        sub,
        "bot",
        "play a seat of a match on a running referee with a built-in bot (random, "
        "greedy), as a kit's bot does",
        BOT_EPILOG,
    )
    bot.add_argument(
        "name",
        metavar="NAME",
        help="a built-in bot: random, greedy, or a benchmark anchor: expert, search, policy",
    )
    _add_seat_client_flags(
        bot,
        token_file="the seat's token, one word in a file such as organiser create --tokens-dir "
        "writes (default: PUSOY_TOKEN)",
        reconnect="retry this long to reach the referee or the seat again (default: "
        "PUSOY_RECONNECT_WINDOW_MS, else 60000)",
    )
    bot.add_argument(
        "--batch-events",
        action="store_true",
        help="events batched into the prompts (or PUSOY_BATCH_EVENTS=1; docs/kits.md 10)",
    )
    bot.add_argument("--seed", type=int, help="the random bot's seed, for a repeatable run")
    bot.set_defaults(func=_cmd_bot)

    llm = add_command(
        sub,
        "llm-bot",
        "play a seat of a match on a running referee with a language model (any "
        "OpenAI-compatible endpoint), its trace kept in a folder",
        LLM_BOT_EPILOG,
    )
    llm.add_argument("settings", metavar="SETTINGS", help="the model seat's TOML file")
    _add_seat_client_flags(
        llm,
        token_file="the seat's token in a file (default: PUSOY_TOKEN)",
        reconnect="retry this long to reach the referee (default: PUSOY_RECONNECT_WINDOW_MS, "
        "else 60000)",
    )
    llm.add_argument(
        "--trace-dir",
        default="traces",
        metavar="DIR",
        help="where the trace is written (default: traces), as MATCH.seatN.trace.ndjson",
    )
    llm.set_defaults(func=_cmd_llm_bot)
