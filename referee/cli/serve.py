"""``referee serve``: the referee server, its listeners, limits and web pages."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.cli.flags import add_command, add_logging_flags, count, error_exit, positive

if TYPE_CHECKING:
    from referee.server.limits import ServerLimits


SERVE_EPILOG = """\
examples:
  referee serve --address 127.0.0.1:50051 --log-dir matches
  grpcurl -plaintext -H "authorization: Bearer $(cat .referee/organiser-token)" \\
      127.0.0.1:50051 pusoy.referee.v1.MatchService/ListMatches
  referee serve --address 0.0.0.0:50051 --tls-cert server.pem --tls-key server.key \\
      --tls-client-ca bots-ca.pem --organiser-address 127.0.0.1:50052
  referee serve --http 127.0.0.1:8080        # and open http://127.0.0.1:8080/ to watch
  referee serve --http 127.0.0.1:8080 --http-access organiser  # a closed event: sign in
                                             # at /login with .referee/organiser-token

The organiser's token and the log signing key are kept in the state folder (.referee,
mode 0700), never in the log folder; both are created on the first start. While it runs
the referee records where it listens in STATE_DIR/serving.json, so that `referee
organiser` run here needs no flag. Every limit below has a safe default; 0 turns a count
limit off. Spectating is public by design: with --http, anyone who reaches that port sees
the match list and live public events (--http-access organiser to close them).

Each live match holds about five file descriptors (four bots' connections and its log):
at start the referee raises its open-file limit to the hard limit (`ulimit -Hn`) and
warns when that is short of --max-live-matches (docs/deploy.md, "Many matches at once").
A connection that finishes no handshake within --handshake-timeout-ms, or holds no call
for --idle-timeout-ms, is closed, and connections are capped so that each live match's
log keeps a descriptor (--max-connections).

A referee started again on the same --log-dir and --state-dir after a crash resumes every
unfinished match: bots reconnect with their same seat tokens (docs/log-format.md, section 7).
SIGTERM or SIGINT stops it and cancels the running matches; SIGUSR1 stops it and leaves
them to resume at the next start (an upgrade).

Prometheus metrics (docs/deploy.md):
  referee serve --metrics-address 127.0.0.1:9464   # then: curl 127.0.0.1:9464/metrics
"""


def _serve_limits(args: argparse.Namespace) -> ServerLimits:
    from referee.server.limits import LIMITS, ServerLimits

    return ServerLimits(**{limit.name: getattr(args, limit.dest) for limit in LIMITS if limit.flag})


def _listen_address(text: str) -> str:
    """``PORT`` alone means loopback: ``127.0.0.1:PORT``."""
    return f"127.0.0.1:{text}" if text.isdigit() else text


def _cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from referee.client.serving import Serving
    from referee.client.tls import TlsError
    from referee.log.writer import FsyncPolicy
    from referee.rules.options import MAX_HANDS_CAP
    from referee.server.app import RefereeServer
    from referee.server.registry import LogPolicy
    from referee.server.secrets import (
        SecretsError,
        forget_serving,
        load_server_secrets,
        local_address,
        record_serving,
    )
    from referee.server.tls import check_plaintext_http, server_tls
    from referee.service.logging import configure_logging

    # Server logs on one stream, these lines for people on the other, so that a log
    # collector reading JSON from stdout (--log-stream stdout) reads nothing else.
    logs, notes = (
        (sys.stdout, sys.stderr) if args.log_stream == "stdout" else (sys.stderr, sys.stdout)
    )
    configure_logging(args.log_format, args.log_level, logs)
    if args.max_message_bytes < 4096:
        return error_exit("serve", "--max-message-bytes is at least 4096")
    if args.max_hands > MAX_HANDS_CAP:
        return error_exit("serve", f"--max-hands is at most {MAX_HANDS_CAP}")
    try:
        tls = server_tls(args.tls_cert, args.tls_key, args.tls_client_ca)
        for flag, value in (("--http", args.http), ("--metrics-address", args.metrics_address)):
            if value:
                check_plaintext_http(flag, value, args.insecure)
    except TlsError as exc:
        return error_exit("serve", exc)
    from referee.server.app import ORGANISER_CONNECTIONS
    from referee.server.openfiles import connection_budget, open_files_warning
    from referee.service.endpoint import MAX_CONNECTIONS as METRICS_CONNECTIONS

    server_limits = _serve_limits(args)
    short = open_files_warning(server_limits, args.http_max_connections if args.http else 0)
    if short is not None:
        print(f"referee serve: warning: {short}", file=sys.stderr)
    if not server_limits.max_connections:  # what the open-file limit leaves, logs in reserve
        others = (
            (args.http_max_connections if args.http else 0)
            + (METRICS_CONNECTIONS if args.metrics_address else 0)
            + (ORGANISER_CONNECTIONS if args.organiser_address else 0)
        )
        budget = connection_budget(server_limits, others)
        server_limits = dataclasses.replace(server_limits, max_connections=budget)
    log_dir = Path(args.log_dir)
    try:
        secrets = load_server_secrets(
            Path(args.state_dir),
            log_dir,
            Path(args.organiser_token_file) if args.organiser_token_file else None,
            Path(args.signing_key) if args.signing_key else None,
        )
    except SecretsError as exc:
        return error_exit("serve", exc)

    async def serve() -> None:
        server = RefereeServer(
            _listen_address(args.address),
            log_dir,
            args.keep_finished,
            state_dir=Path(args.state_dir),
            resume=not args.no_resume,
            logs=LogPolicy(fsync=FsyncPolicy(args.fsync), publish=args.publish_logs),
            metrics_address=args.metrics_address,
            organiser_token=secrets.token,
            organiser_address=(
                _listen_address(args.organiser_address) if args.organiser_address else None
            ),
            tls=tls,
            insecure=args.insecure,
            signer=secrets.signer,
            limits=server_limits,
        )
        await server.start()  # OSError: an address or the log folder cannot be used
        web = None
        if args.http:
            from referee.web.access import HttpAccess, OrganiserOnly
            from referee.web.app import WebFront, WebLimits
            from referee.web.feed import PublicFeed

            limits = WebLimits(
                max_connections=args.http_max_connections,
                max_viewers=args.http_max_viewers,
                max_viewers_per_match=args.http_max_viewers_per_match,
            )
            access = None
            if args.http_access == HttpAccess.ORGANISER.value:
                access = OrganiserOnly(server.organiser_token, server.metrics)
            web = WebFront(
                PublicFeed(server.registry),
                args.http,
                limits,
                metrics=server.metrics,
                access=access,
            )
            try:
                await web.start()
            except OSError:
                await server.stop(grace=0)
                raise

        def announce() -> None:  # once a signal would stop the server gracefully
            for resumed in server.resumed:
                what = "resumed" if resumed.resumed else f"not resumed: {resumed.problem}"
                what += f" ({resumed.cut})" if resumed.cut else ""
                print(f"match {resumed.match_id} {what}", file=notes, flush=True)
            where = f"{server.address}; logs in {args.log_dir}"
            print(f"referee listening on {where}", file=notes, flush=True)
            if web is not None:
                print(f"spectators' web pages on {web.url}/", file=notes, flush=True)
            if server.metrics_endpoint is not None:
                address = server.metrics_endpoint.address
                print(f"metrics on http://{address}/metrics", file=notes, flush=True)
            made = " (created now)" if secrets.token_created else ""
            organiser = server.organiser_address
            on = "" if organiser == server.address else f" on {organiser}"
            print(
                f"organiser token{on}: {secrets.token_file}{made}; send it as "
                "'authorization: Bearer <token>'",
                file=notes,
                flush=True,
            )
            public = f" (also in {secrets.public_key_file})" if secrets.public_key_file else ""
            key = secrets.signer.public_key_text
            print(f"logs signed with ed25519 public key {key}{public}", file=notes, flush=True)
            state = "mutual" if tls and tls.client_ca else "on" if tls else "off"
            print(f"TLS: {state}", file=notes, flush=True)

        state_dir = Path(args.state_dir)
        serving = Serving(
            address=local_address(server.address),
            organiser_address=local_address(server.organiser_address),
            tls="mutual" if tls and tls.client_ca else "on" if tls else "off",
            token_file=str(secrets.token_file.resolve()),
            pid=os.getpid(),
        )
        try:  # for `referee organiser` on this machine
            record_serving(state_dir, serving)
        except OSError as exc:
            print(
                f"referee serve: warning: cannot record where it listens in {state_dir} "
                f"({exc.strerror}): referee organiser needs --address",
                file=sys.stderr,
            )
        try:
            await server.wait_for_signal(announce)
        finally:
            forget_serving(state_dir, os.getpid())
            if web is not None:
                await web.stop()

    try:
        asyncio.run(serve())
    except (ValueError, OSError) as exc:
        return error_exit("serve", exc)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee serve``."""
    serve = add_command(sub, "serve", "run the referee server (gRPC) until SIGTERM", SERVE_EPILOG)
    serve.add_argument(
        "--address",
        default="127.0.0.1:50051",
        help="host:port to listen on (a port alone: loopback); an address other machines "
        "can reach needs TLS or --insecure",
    )
    serve.add_argument("--log-dir", default="matches", help="folder for match event logs")
    serve.add_argument(
        "--publish-logs",
        action="store_true",
        help="make each log readable by every local user (0644) once its match is over "
        "(a live log is private, 0600: it holds every hand)",
    )
    serve.add_argument(
        "--keep-finished",
        type=count,
        default=1000,
        metavar="N",
        help="finished matches held in memory for GetMatch and spectators (older ones: "
        "their logs only; default 1000)",
    )
    serve.add_argument(
        "--state-dir",
        default=".referee",
        help="private folder (mode 0700) for what logs must not show: the organiser token, "
        "the log signing key, the seeds of running matches; never the log folder "
        "(default: .referee)",
    )
    serve.add_argument(
        "--no-resume",
        action="store_true",
        help="do not resume the unfinished match logs found in the log folder at start",
    )
    serve.add_argument(
        "--fsync",
        choices=["every-event", "every-hand", "never"],
        default="never",
        help="when match logs are forced to disk: every decision before it is sent, at each "
        "hand's end, or only when a log is closed (default: never). Lines always reach the "
        "OS at once, so a killed referee loses nothing; fsync guards against a lost machine "
        "and blocks the server while the disk answers (bench/RESULTS.md)",
    )
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="also serve web pages for spectators here: the matches, a live view of each "
        "(public information only), and each finished match's replay",
    )
    serve.add_argument(
        "--http-access",
        choices=["public", "organiser"],
        default="public",
        help="who may see the --http pages, /api/matches and the live event streams: "
        "anyone (spectating is public by design; default), or only the organiser, who "
        "signs in once at /login with its token (scripts: 'Authorization: Bearer <token>')",
    )
    serve.add_argument(
        "--http-max-connections",
        type=positive,
        default=256,
        metavar="N",
        help="open HTTP connections at once (more get 503; default 256)",
    )
    serve.add_argument(
        "--http-max-viewers",
        type=positive,
        default=200,
        metavar="N",
        help="live match views at once, all matches together (default 200)",
    )
    serve.add_argument(
        "--http-max-viewers-per-match",
        type=positive,
        default=50,
        metavar="N",
        help="live views of one match at once (default 50)",
    )
    serve.add_argument(
        "--metrics-address",
        metavar="HOST:PORT",
        help="serve Prometheus metrics over HTTP at http://HOST:PORT/metrics (default: off; "
        "an address other machines can reach needs --insecure: it has no TLS)",
    )
    serve.add_argument(
        "--organiser-token-file",
        metavar="PATH",
        default=os.environ.get("PUSOY_ORGANISER_TOKEN_FILE") or None,
        help="the organiser's token (created, mode 0600, when absent; default "
        "$PUSOY_ORGANISER_TOKEN_FILE, else STATE_DIR/organiser-token)",
    )
    serve.add_argument(
        "--organiser-address",
        metavar="HOST:PORT",
        help="serve the organiser's API on this listener only (a port alone: loopback)",
    )
    serve.add_argument(
        "--signing-key",
        metavar="PATH",
        help="Ed25519 private key (PEM) to sign logs with (default: STATE_DIR/signing-key.pem, "
        "created when absent)",
    )
    serve.add_argument("--tls-cert", metavar="PEM", help="the server's certificate chain")
    serve.add_argument("--tls-key", metavar="PEM", help="the server's private key")
    serve.add_argument(
        "--tls-client-ca",
        metavar="PEM",
        help="require client certificates signed by this CA (mutual TLS)",
    )
    serve.add_argument(
        "--insecure",
        action="store_true",
        help="allow plaintext on an address other machines can reach",
    )
    from referee.server.limits import LIMITS  # each limit declared once, with its flag

    limits = serve.add_argument_group("limits")
    for limit in LIMITS:
        if limit.flag:
            limits.add_argument(
                limit.flag,
                type=positive if limit.positive else count,
                default=limit.default,
                metavar=limit.metavar,
                help=limit.help,
            )
    add_logging_flags(serve)
    serve.add_argument(
        "--log-stream",
        choices=["stderr", "stdout"],
        default="stderr",
        help="where server logs go; the lines for people go to the other one (default: stderr)",
    )
    serve.set_defaults(func=_cmd_serve, log_level="info")
