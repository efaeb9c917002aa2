"""Connection settings: address, token, windows and margins, TLS (docs/kits.md, section 7)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
RECONNECT_WINDOW_S = 60.0
"""Retry for this long after losing the seat (or from the start) before giving up."""
SAFETY_MARGIN_S = 0.05
"""Answer this long before the end of the budget."""

# Let gRPC's own reconnection follow ours: retry a refused connection within a second,
# not after gRPC's default backoff of up to two minutes.
CHANNEL_OPTIONS: list[tuple[str, int | str]] = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class UsageError(Exception):
    """Bad flags or settings (exit 64)."""


@dataclasses.dataclass(frozen=True)
class Options:
    """How to reach the referee and how to pace the bot."""

    address: str = DEFAULT_ADDRESS
    token: str = ""
    reconnect_window_s: float = RECONNECT_WINDOW_S
    safety_margin_s: float = SAFETY_MARGIN_S
    tls: bool = False
    """TLS with the system's trusted CAs (implied by any of the files below)."""
    tls_ca: str | None = None
    """PEM file of the CA that signs the referee's certificate."""
    tls_cert: str | None = None
    """PEM client certificate for mutual TLS (with ``tls_key``)."""
    tls_key: str | None = None
    tls_server_name: str | None = None
    """The name to check in the referee's certificate instead of the address's host."""
    batch_events: bool = False
    """Ask for the events batched into the prompts (Hello.batch_events, docs/protocol.md
    3.5): fewer messages; the bot's hooks still see every event, just before its turn."""

    @property
    def uses_tls(self) -> bool:
        return self.tls or bool(self.tls_ca or self.tls_cert or self.tls_key)

    def credentials(self) -> grpc.ChannelCredentials:
        """TLS credentials from the files; UsageError when one cannot be read."""
        if bool(self.tls_cert) != bool(self.tls_key):
            raise UsageError("--tls-cert and --tls-key go together")

        def read(path: str | None, what: str) -> bytes | None:
            if not path:
                return None
            try:
                return Path(path).read_bytes()
            except OSError as exc:
                raise UsageError(f"cannot read the {what} {path}: {exc.strerror}") from None

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.tls_ca, "CA file"),
            private_key=read(self.tls_key, "client key"),
            certificate_chain=read(self.tls_cert, "client certificate"),
        )

    def channel(self) -> grpc.aio.Channel:
        """A channel to the referee, with TLS when asked for."""
        if not self.uses_tls:
            return grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS)
        opts = list(CHANNEL_OPTIONS)
        if self.tls_server_name:
            opts.append(("grpc.ssl_target_name_override", self.tls_server_name))
        return grpc.aio.secure_channel(self.address, self.credentials(), options=opts)

    def check(self) -> Options:
        """Fail early (UsageError) on settings that cannot work."""
        if not self.token:
            raise UsageError("a seat token is needed: --token or PUSOY_TOKEN")
        if self.reconnect_window_s < 0 or self.safety_margin_s < 0:
            raise UsageError("the reconnect window and the safety margin cannot be negative")
        if self.uses_tls:
            self.credentials()
        return self


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def parser(description: str) -> argparse.ArgumentParser:
    """The flags every kit's bot takes; each defaults to its environment variable."""
    p = _Parser(description=description)
    p.add_argument("--address", help=f"the referee (PUSOY_ADDRESS; default {DEFAULT_ADDRESS})")
    p.add_argument("--token", help="the seat token (PUSOY_TOKEN)")
    p.add_argument("--reconnect-window-ms", type=int, help="PUSOY_RECONNECT_WINDOW_MS (60000)")
    p.add_argument("--safety-margin-ms", type=int, help="PUSOY_SAFETY_MARGIN_MS (50)")
    p.add_argument("--tls", action="store_true", default=None, help="TLS (PUSOY_TLS=1)")
    p.add_argument("--tls-ca", metavar="FILE", help="CA of the referee (PUSOY_TLS_CA)")
    p.add_argument("--tls-cert", metavar="FILE", help="client certificate (PUSOY_TLS_CERT)")
    p.add_argument("--tls-key", metavar="FILE", help="client key (PUSOY_TLS_KEY)")
    p.add_argument("--tls-server-name", metavar="NAME", help="PUSOY_TLS_SERVER_NAME")
    p.add_argument(
        "--batch-events",
        action="store_true",
        default=None,
        help="events batched into the prompts (PUSOY_BATCH_EVENTS=1)",
    )
    return p


def _on(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes", "on")


def from_command_line(
    argv: Sequence[str] | None,
    env: Mapping[str, str] | None = None,
    *,
    description: str = "Play a seat against a pusoy-referee.",
    extra: argparse.ArgumentParser | None = None,
) -> tuple[Options, argparse.Namespace]:
    """Options from flags, then the environment, then the defaults; UsageError if bad."""
    env = os.environ if env is None else env
    p = extra or parser(description)
    args = p.parse_args(argv)

    def pick(flag: object, var: str) -> str | None:
        return str(flag) if flag is not None else env.get(var) or None

    def ms(flag: object, var: str, default_s: float) -> float:
        text = pick(flag, var)
        if text is None:
            return default_s
        try:
            return int(text) / 1000
        except ValueError:
            raise UsageError(f"{var}: not a number of milliseconds: {text!r}") from None

    opts = Options(
        address=pick(args.address, "PUSOY_ADDRESS") or DEFAULT_ADDRESS,
        token=pick(args.token, "PUSOY_TOKEN") or "",
        reconnect_window_s=ms(
            args.reconnect_window_ms, "PUSOY_RECONNECT_WINDOW_MS", RECONNECT_WINDOW_S
        ),
        safety_margin_s=ms(args.safety_margin_ms, "PUSOY_SAFETY_MARGIN_MS", SAFETY_MARGIN_S),
        tls=bool(args.tls) or _on(env.get("PUSOY_TLS")),
        tls_ca=pick(args.tls_ca, "PUSOY_TLS_CA"),
        tls_cert=pick(args.tls_cert, "PUSOY_TLS_CERT"),
        tls_key=pick(args.tls_key, "PUSOY_TLS_KEY"),
        tls_server_name=pick(args.tls_server_name, "PUSOY_TLS_SERVER_NAME"),
        batch_events=bool(args.batch_events) or _on(env.get("PUSOY_BATCH_EVENTS")),
    )
    return opts.check(), args


__all__ = ["Options", "UsageError", "from_command_line", "parser"]
