"""What several commands share: argument types, the logging, client TLS and match
settings flags, the one-line error."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from referee.match.settings import MAX_COUNT

if TYPE_CHECKING:
    from referee.client.tls import ClientTls
    from referee.match.settings import MatchSettings


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help: str,
    epilog: str,
    **more: object,
) -> argparse.ArgumentParser:
    """A command of ``referee`` (or of a family of them): its one-line ``help`` and its
    ``epilog`` (the examples of its ``--help``), shown as written."""
    more.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
    return sub.add_parser(name, help=help, epilog=epilog, **more)  # type: ignore[arg-type]


def error_exit(command: str, reason: object, status: int = 2) -> int:
    """Bad input as every command tells it: one line ``referee COMMAND: reason`` on
    stderr, no traceback; returns the exit status (2 by default, the usage error)."""
    print(f"referee {command}: {reason}", file=sys.stderr)
    return status


def count(text: str) -> int:
    """An argparse type for a whole number from 0 up to what the protocol carries."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_COUNT}, got {value}")
    return value


def positive(text: str) -> int:
    value = count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def seat(text: str) -> int:
    if text not in ("0", "1", "2", "3"):
        raise argparse.ArgumentTypeError(f"a seat is 0, 1, 2 or 3, not {text!r}")
    return int(text)


def add_logging_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-format",
        choices=["auto", "json", "console"],
        default="auto",
        help="server log format on stderr (default: console on a terminal, else JSON)",
    )
    p.add_argument("--log-level", default="warning", help="debug, info, warning or error")


def add_client_tls_flags(p: argparse.ArgumentParser) -> None:
    """How a client of the referee speaks TLS: ``referee stdio-bot`` and ``organiser``."""
    p.add_argument("--tls", action="store_true", help="TLS with the system's CAs (or PUSOY_TLS=1)")
    p.add_argument("--tls-ca", metavar="FILE", help="TLS: the referee's CA (default: PUSOY_TLS_CA)")
    p.add_argument(
        "--tls-cert", metavar="FILE", help="mutual TLS: client certificate (PUSOY_TLS_CERT)"
    )
    p.add_argument("--tls-key", metavar="FILE", help="mutual TLS: its key (PUSOY_TLS_KEY)")
    p.add_argument(
        "--tls-server-name",
        metavar="NAME",
        help="the name to check in the referee's certificate (PUSOY_TLS_SERVER_NAME)",
    )


def client_tls(args: argparse.Namespace) -> ClientTls | None:
    """The TLS of ``add_client_tls_flags`` (and the kits' PUSOY_TLS_* variables); None:
    plaintext. Raises TlsError."""
    from referee.client.tls import ClientTls

    env = os.environ.get
    files = {
        flag: Path(value) if value else None
        for flag, value in (
            ("ca", args.tls_ca or env("PUSOY_TLS_CA")),
            ("cert", args.tls_cert or env("PUSOY_TLS_CERT")),
            ("key", args.tls_key or env("PUSOY_TLS_KEY")),
        )
    }
    server_name = args.tls_server_name or env("PUSOY_TLS_SERVER_NAME") or ""
    if args.tls or env("PUSOY_TLS", "") in ("1", "true", "yes", "on") or any(files.values()):
        return ClientTls(files["ca"], files["cert"], files["key"], server_name)
    return None


def add_match_settings_flags(p: argparse.ArgumentParser) -> None:
    """The flags that describe a match: ``referee match`` and ``referee organiser create``."""
    p.add_argument(
        "--profile", default="pusoy-dos", help="pusoy-dos (default), pusoy-dos-chips or big-two"
    )
    p.add_argument("--seed", help="seed of the deals (default: from the OS random source)")
    match_end = p.add_mutually_exclusive_group()
    match_end.add_argument(
        "--hands", type=count, help="play this many hands (default: the profile's match end)"
    )
    match_end.add_argument(
        "--threshold", type=count, help="play until a total reaches this (instead of --hands)"
    )
    from referee.match.settings import SETTINGS

    for setting in SETTINGS:  # left out: MatchSettings' default
        if setting.flag:
            p.add_argument(
                setting.flag,
                type=count,
                metavar=setting.metavar,
                help=setting.help.format(default=setting.default),
            )
    p.add_argument(
        "--seat-clock",
        action="append",
        metavar="SEAT:TURN_MS[:BANK_MS]",
        help="a seat's own time per turn and time bank, e.g. 2:60000:120000 for a language "
        "model in seat 2 (the other seats keep the match's clock); once per seat",
    )
    p.add_argument(
        "--option",
        action="append",
        metavar="NAME=VALUE",
        help="any house-rule option of docs/rules.md",
    )
    from referee.rules import OPTION_NAMES

    for name in OPTION_NAMES:
        p.add_argument(
            f"--{name.replace('_', '-')}",
            dest=f"opt_{name}",
            metavar="VALUE",
            help=argparse.SUPPRESS,
        )


def match_settings(args: argparse.Namespace, seat_names: Sequence[str], seed: str) -> MatchSettings:
    """The match the flags of ``add_match_settings_flags`` describe: a flag left out
    takes MatchSettings' default, as a request's 0 does; no seat names, the default ones.
    Raises SettingsError."""
    from referee.match.settings import SETTINGS, SeatClock, match_rules, settings_from_values

    rules = match_rules(args.profile, _match_options(args), args.hands or 0, args.threshold or 0)
    given = {s.name: getattr(args, s.dest) for s in SETTINGS if s.flag}
    values = {name: value for name, value in given.items() if value is not None}
    clocks = [SeatClock.parse(text) for text in getattr(args, "seat_clock", None) or []]
    return settings_from_values(rules, values, seat_names, seed, clocks)


def _match_options(args: argparse.Namespace) -> dict[str, str]:
    from referee.rules import OPTION_NAMES

    options: dict[str, str] = {}
    for item in args.option or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"referee {args.command}: --option wants NAME=VALUE, got {item!r}")
        options[name.strip()] = value.strip()
    for name in OPTION_NAMES:
        value = getattr(args, f"opt_{name}", None)
        if value is not None:
            options[name] = value
    return options


class MatchHelp(argparse.RawDescriptionHelpFormatter):
    """Shows the placeholders of a bot's command, read only when help is asked for
    (importing them costs the protocol modules)."""

    def _format_text(self, text: str) -> str:
        if "@PLACEHOLDERS@" in text:
            from referee.table.bots import PLACEHOLDERS

            rows = [f"  {{{name}}}".ljust(16) + meaning for name, meaning in PLACEHOLDERS.items()]
            text = text.replace("@PLACEHOLDERS@", "\n".join(rows))
        return super()._format_text(text)
