"""A built-in bot as a client process of its own: ``referee bot NAME``.

It takes a seat of a match on a running ``referee serve`` the way a kit's bot does (the
same ``--address``, ``PUSOY_*`` variables, TLS settings and exit codes: docs/kits.md,
section 7), so that an organiser can fill seats without writing a bot. The seat token
comes from a file or ``PUSOY_TOKEN``, never from the command line, where every local
user could read it in the process list.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

import grpc

from referee.bots.player import play_seat
from referee.bots.strategies import BUILTIN_BOTS, builtin_bot
from referee.client.channels import DEFAULT_ADDRESS
from referee.client.seat import SEAT_CHANNEL_OPTIONS, SeatOutcome, SeatRefused
from referee.client.tls import ClientTls, TlsError
from referee.client.tokens import TokenError, read_token
from referee.text import printable

RECONNECT_WINDOW_MS = 60_000
"""The kits' default: long enough for a referee restart of several seconds."""

EXIT_OK, EXIT_ERROR, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_RPC = 0, 1, 2, 3, 4
EXIT_USAGE = 64
"""The kits' exit codes (docs/kits.md, section 7)."""


class UsageError(Exception):
    """Settings that cannot work: no token, an unreadable file, a bad number (exit 64)."""


@dataclasses.dataclass(frozen=True)
class BotSettings:
    """How a built-in bot reaches its seat."""

    name: str
    address: str
    token: str
    tls: ClientTls | None = None
    reconnect_window_s: float = RECONNECT_WINDOW_MS / 1000
    batch_events: bool = False
    seed: int | None = None


def _on(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes", "on")


def seat_token(token_file: str | None, env: Mapping[str, str]) -> str:
    """The seat token: ``--token-file`` (as ``organiser create --tokens-dir`` writes it),
    else ``PUSOY_TOKEN``. Raises UsageError."""
    if token_file:
        try:
            return read_token(Path(token_file), what="seat token")
        except TokenError as exc:
            raise UsageError(str(exc)) from None
    token = env.get("PUSOY_TOKEN", "").strip()
    if not token:
        raise UsageError(
            "a seat token is needed: --token-file FILE (e.g. the seat-N.token that "
            "`referee organiser create --tokens-dir DIR` writes) or PUSOY_TOKEN"
        )
    return token


def reconnect_window_s(flag: int | None, env: Mapping[str, str]) -> float:
    """``--reconnect-window-ms``, else ``PUSOY_RECONNECT_WINDOW_MS``, else 60 s."""
    text = str(flag) if flag is not None else env.get("PUSOY_RECONNECT_WINDOW_MS", "")
    if not text:
        return RECONNECT_WINDOW_MS / 1000
    try:
        ms = int(text)
    except ValueError:
        raise UsageError(f"the reconnect window is not a whole number of ms: {text!r}") from None
    if ms < 0:
        raise UsageError("the reconnect window cannot be negative")
    return ms / 1000


def settings(
    name: str,
    *,
    address: str | None,
    token_file: str | None,
    tls: ClientTls | None,
    token_flag: str | None = None,
    reconnect_window_ms: int | None = None,
    batch_events: bool = False,
    seed: int | None = None,
    env: Mapping[str, str] | None = None,
) -> BotSettings:
    """Flags first, then the kits' variables, then the defaults. Raises UsageError, also
    for a token given as a flag (``token_flag``), which it refuses."""
    env = os.environ if env is None else env
    if name not in BUILTIN_BOTS:
        raise UsageError(
            f"no built-in bot {printable(name)!r}: choose one of {', '.join(BUILTIN_BOTS)} "
            "(a bot of your own runs as a program of its own)"
        )
    if token_flag is not None:
        raise UsageError(
            "--token is not taken: a token on the command line is visible to every user of "
            "this machine (ps); give --token-file FILE or PUSOY_TOKEN"
        )
    return BotSettings(
        name=name,
        address=address or env.get("PUSOY_ADDRESS") or DEFAULT_ADDRESS,
        token=seat_token(token_file, env),
        tls=tls,
        reconnect_window_s=reconnect_window_s(reconnect_window_ms, env),
        batch_events=batch_events or _on(env.get("PUSOY_BATCH_EVENTS")),
        seed=seed,
    )


def outcome_line(name: str, outcome: SeatOutcome) -> str:
    """The one line a bot prints when its match is over."""
    head = f"{name}: match {outcome.match_id} over, seat {outcome.seat}"
    ended = outcome.ended
    if ended is None:
        return f"{head} (it ended while the bot was away)"
    place = next((s.place for s in ended.standings if outcome.seat in s.seats), None)
    total = ended.totals[outcome.seat] if outcome.seat < len(ended.totals) else 0
    return f"{head} placed {place}, total {total}" if place else f"{head}, total {total}"


def run_seat(
    name: str,
    bot: BotSettings,
    seat: Coroutine[Any, Any, SeatOutcome],
    done: Callable[[SeatOutcome], str],
) -> tuple[int, str]:
    """Run ``seat`` (a player at ``bot``'s seat) to its match's end: the kits' exit code
    and line (docs/kits.md, section 7), one for any seat process; ``done``: the line of a
    match played out."""
    try:
        outcome = asyncio.run(seat)
    except TlsError as exc:
        return EXIT_USAGE, f"{name}: {exc}"
    except SeatRefused as exc:
        return EXIT_REFUSED, f"{name}: the referee refused the seat: {exc}"
    except ConnectionError as exc:
        return EXIT_UNREACHABLE, f"{name}: {exc} (tried for {bot.reconnect_window_s:g} s)"
    except grpc.aio.AioRpcError as exc:
        return EXIT_RPC, f"{name}: the stream failed: {exc.code().name}: {exc.details()}"
    return EXIT_OK, done(outcome)


def play(bot: BotSettings) -> tuple[int, str]:
    """Play the seat until its match ends: the exit code and the line to print."""
    seat = play_seat(
        builtin_bot(bot.name, bot.seed),
        bot.address,
        bot.token,
        tls=bot.tls,
        channel_options=SEAT_CHANNEL_OPTIONS,
        reconnect_window_s=bot.reconnect_window_s,
        batch_events=bot.batch_events,
    )
    return run_seat(bot.name, bot, seat, lambda outcome: outcome_line(bot.name, outcome))
