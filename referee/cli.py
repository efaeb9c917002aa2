"""The ``referee`` command line: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from referee import __version__
from referee.program import referee_program
from referee.text import printable

if TYPE_CHECKING:
    from referee.protocol import match_service
    from referee.server.limits import ServerLimits
    from referee.server.tls import ClientTls
    from referee.table.bots import Seat

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
    from referee.rules.judge import judge, run_lines

    run_lines(judge, sys.stdin, sys.stdout)
    return 0


def _cmd_moves(args: argparse.Namespace) -> int:
    from referee.rules.judge import moves, run_lines

    run_lines(moves, sys.stdin, sys.stdout)
    return 0


POSITIONS_EPILOG = """\
Each line is a judge request (profile, options, hand, table, ...) with the bot's answer
as "play" and the turn's facts under "about": feed the lines to `referee rules judge`
or `referee rules moves`. See docs/judge.md.

examples:
  referee rules positions matches/20261201-101500-1a2b3c4d.jsonl --seat 0 > seat0.jsonl
  referee rules moves < seat0.jsonl
"""


def _cmd_positions(args: argparse.Namespace) -> int:
    import json

    from referee.log import LogFormatError
    from referee.log.positions import PositionsError, read_positions

    try:
        read, found = read_positions(Path(args.log), args.seat)
    except (OSError, LogFormatError, PositionsError) as exc:
        print(f"referee rules positions: {args.log}: {exc}", file=sys.stderr)
        return 1
    for request in found:
        print(json.dumps(request, ensure_ascii=False))
    if not read.complete:
        print(f"referee rules positions: {args.log}: {read.status()}", file=sys.stderr)
    return 0


def _seat(text: str) -> int:
    if text not in ("0", "1", "2", "3"):
        raise argparse.ArgumentTypeError(f"a seat is 0, 1, 2 or 3, not {text!r}")
    return int(text)


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

MATCH_EPILOG = """\
examples:
  referee match                                   # greedy vs random, pusoy-dos
  referee match --profile big-two --hands 3 --seed demo
  referee match --bot greedy --bot random --bot "{python} mybot.py" --name mine \\
      --bot "./otherbot --address {address}" --revolution true
  referee match --bot "stdio:clients/stdio/c/bot" --bot greedy --bot greedy --bot random
  referee match --dry-run --bot "{python} mybot/bot.py" --bot greedy --bot greedy --bot random

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

ORGANISER_EPILOG = """\
examples (a `referee serve` started in this folder: found from what it records in
.referee, its state folder, with its token):
  referee organiser info
  referee organiser create --profile big-two --hands 4 --name alice --name bob \\
      --name carol --name dave --tokens-dir seats      # seats/seat-0.token ... (mode 0600)
  referee organiser list --status running
  referee organiser show 20261202-101500-1a2b3c4d
  referee organiser log 20261202-101500-1a2b3c4d --wait --output game.jsonl \\
      --public-key .referee/signing-key.pub
  referee organiser cancel 20261202-101500-1a2b3c4d --reason "bot swapped"
  referee organiser list --address referee.example:50051 --tls-ca ca.pem \\
      --token-file secrets/organiser-token

Where the referee and the token come from, first found first: --address and
--token-file; PUSOY_ADDRESS and PUSOY_ORGANISER_TOKEN_FILE; what the `referee serve` of
--state-dir records while it runs (STATE_DIR/serving.json: its address, token file and
TLS; its token only ever goes to its address); 127.0.0.1:50051 and
STATE_DIR/organiser-token. The first line on stderr says which were used.

Every command takes --json for scripts (the reply in protobuf's JSON mapping). `log`
fetches into a temporary file and keeps it only once it verifies: with --public-key,
against that key; without, against the key the same referee publishes (GetServerInfo),
which a referee that forges logs would forge too (the output says which key was used).
Of a match still running it fetches the log so far (organiser only: it holds hidden
cards). A CreateMatch reply with other than four plain seat tokens is refused and
nothing is written. The organiser's token is sent with every call; `info`, `show` and
the log of a match that is over need none.

exit status:
  0  done
  1  the log did not verify and was not kept (log), or the match was cancelled (log --wait)
  2  bad arguments, no token, the referee refused the call, cannot be reached, or sent a
     reply no referee sends
"""

REPLAY_EPILOG = """\
examples:
  referee replay matches/20261201-101500-1a2b3c4d.jsonl
  referee replay matches/20261201-101500-1a2b3c4d.jsonl --seat 2 --hand 3
"""

VIEW_EPILOG = """\
examples:
  referee view matches/20261201-101500-1a2b3c4d.jsonl      # writes ...-1a2b3c4d.html beside it
  referee view match.jsonl -o replay.html                  # one file: mail it, attach it
  referee view night1                                      # a tournament: night1/view/index.html
  referee view --with-stderr matches/20261201-101500-1a2b3c4d.jsonl  # each bot's output too

The page opens offline in any browser: step with the arrow keys, choose a seat's view, link
a moment (#hand=3&move=41). It records what `referee verify` says of the log.
"""

VERIFY_EPILOG = """\
examples:
  referee verify --public-key .referee/signing-key.pub matches/*.jsonl
  OK: matches/20261201-101500-1a2b3c4d.jsonl: 412 lines, 10 hands verified, signed by ...
  referee verify matches/*.jsonl     # the rules only (and a trailer's own signature)
  referee verify --tournament night1  # every log (with night1/signing-key.pub), every deal group

With --public-key (the base64 text `referee serve` prints and GetServerInfo serves, or a
file holding it or a PEM key), a log must end with a signature trailer by that key: a
log without one is reported UNSIGNED (cut short before the referee closed it), a changed
log FAILED.
"""

DATASET_EPILOG = """\
examples:
  referee dataset night1 -o night1.parquet          # a tournament folder (its logs and key)
  referee dataset matches/ --public-key .referee/signing-key.pub -o matches.parquet
  referee dataset m.jsonl -o m-rows.jsonl --full-information   # JSON lines, every hand

One row per decision: the seat's observation and mask (docs/rl.md), the action, its time,
the hand's outcome for the seat. Every log is verified first (with its signature when a
key is given); a log that does not verify is named and left out (exit status 1). Needs
the rl extra: pip install "pusoy-referee[rl]".
"""

TOURNAMENT_EPILOG = """\
examples:
  referee tournament examples/tournament.toml    # results in examples/tournament-results
  referee tournament club.toml --out night1 --concurrency 4  # run again to resume
  referee tournament club.toml --dry-run       # every check of a run, and the plan
      (prints e.g. "sandbox: bubblewrap 0.8.0; per bot 1024 MB, ..." or why bots
      cannot be sandboxed here; [sandbox] and [[bot]] limits in docs/tournaments.md)
  referee verify --tournament night1
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


def _serve_limits(args: argparse.Namespace) -> ServerLimits:
    from referee.server.limits import ServerLimits

    return ServerLimits(
        max_hands=args.max_hands,
        max_waiting_matches=args.max_waiting_matches,
        max_live_matches=args.max_live_matches,
        max_connect_timeout_ms=args.max_connect_timeout_ms,
        max_spectators_per_match=args.max_spectators_per_match,
        max_spectators=args.max_spectators,
        max_reconnects_per_minute=args.max_reconnects_per_minute,
        max_failed_hellos_per_minute=args.max_failed_hellos_per_minute,
        max_message_bytes=args.max_message_bytes,
        handshake_timeout_ms=args.handshake_timeout_ms,
        idle_timeout_ms=args.idle_timeout_ms,
        max_connections=args.max_connections,
    )


def _listen_address(text: str) -> str:
    """``PORT`` alone means loopback: ``127.0.0.1:PORT``."""
    return f"127.0.0.1:{text}" if text.isdigit() else text


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from referee.log.writer import FsyncPolicy
    from referee.rules.options import MAX_HANDS_CAP
    from referee.server.app import RefereeServer
    from referee.server.logging import configure_logging
    from referee.server.state import (
        Serving,
        StateError,
        forget_serving,
        load_server_secrets,
        local_address,
        record_serving,
    )
    from referee.server.tls import ServerTls, is_loopback

    # Server logs on one stream, these lines for people on the other, so that a log
    # collector reading JSON from stdout (--log-stream stdout) reads nothing else.
    logs, notes = (
        (sys.stdout, sys.stderr) if args.log_stream == "stdout" else (sys.stderr, sys.stdout)
    )
    configure_logging(args.log_format, args.log_level, logs)
    if args.max_message_bytes < 4096:
        print("referee serve: --max-message-bytes is at least 4096", file=sys.stderr)
        return 2
    if args.max_hands > MAX_HANDS_CAP:
        print(f"referee serve: --max-hands is at most {MAX_HANDS_CAP}", file=sys.stderr)
        return 2
    if bool(args.tls_cert) != bool(args.tls_key):
        print("referee serve: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if args.tls_client_ca and not args.tls_cert:
        print("referee serve: --tls-client-ca needs --tls-cert and --tls-key", file=sys.stderr)
        return 2
    # The web pages and the metrics have no TLS of their own: the gRPC listeners' rule.
    for flag, value in (("--http", args.http), ("--metrics-address", args.metrics_address)):
        host, _, port = (value or "").rpartition(":")
        if value and not args.insecure and not is_loopback(f"{host or '127.0.0.1'}:{port}"):
            print(
                f"referee serve: refusing to serve {flag} {value} in plaintext: it is "
                "reachable from other machines (--insecure to serve it anyway, or a TLS "
                "proxy in front of a loopback address)",
                file=sys.stderr,
            )
            return 2
    tls = (
        ServerTls(
            Path(args.tls_cert),
            Path(args.tls_key),
            Path(args.tls_client_ca) if args.tls_client_ca else None,
        )
        if args.tls_cert
        else None
    )
    from referee.server.app import ORGANISER_CONNECTIONS
    from referee.server.metrics import MAX_CONNECTIONS as METRICS_CONNECTIONS
    from referee.server.openfiles import connection_budget, open_files_warning

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
    except StateError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2

    async def serve() -> None:
        server = RefereeServer(
            _listen_address(args.address),
            log_dir,
            args.keep_finished,
            state_dir=Path(args.state_dir),
            resume=not args.no_resume,
            fsync=FsyncPolicy(args.fsync),
            metrics_address=args.metrics_address,
            organiser_token=secrets.token,
            organiser_address=(
                _listen_address(args.organiser_address) if args.organiser_address else None
            ),
            tls=tls,
            insecure=args.insecure,
            signer=secrets.signer,
            limits=server_limits,
            publish_logs=args.publish_logs,
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
    except ValueError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"referee serve: {exc}", file=sys.stderr)
        return 2
    return 0


def _match_request(
    args: argparse.Namespace, seat_names: tuple[str, str, str, str] | None
) -> match_service.CreateMatchRequest:
    """The match the flags of ``_add_match_settings_flags`` describe, as a CreateMatch
    request (no seed given: none in the request). Raises OptionsError or SettingsError."""
    from referee.match.settings import MatchSettings
    from referee.rules import Rules

    rules = Rules.for_profile(args.profile, _match_options(args))
    if args.hands:
        rules = rules.with_options({"match_end": f"hands {args.hands}"})
    if args.threshold:
        rules = rules.with_options({"match_end": f"threshold {args.threshold}"})
    given = {
        field: getattr(args, dest)
        for dest, field in MATCH_SETTINGS.items()
        if getattr(args, dest) is not None
    }
    settings = MatchSettings(
        rules,
        seed=args.seed or "",
        drill_disconnect_after_prompts=args.drill_disconnect_after,
        **given,
    )
    request = settings.request_pb()
    if seat_names is not None:
        request.seat_names[:] = seat_names
    else:
        del request.seat_names[:]  # the referee's defaults
    return request


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


MATCH_SETTINGS = {
    "turn_time_ms": "turn_time_ms",
    "connect_timeout_ms": "connect_timeout_ms",
    "time_bank_ms": "time_bank_ms",
    "max_rejections": "max_rejections_per_turn",
    "max_strikes": "max_strikes",
    "max_actions_out_of_turn": "max_actions_out_of_turn",
}
"""``referee match`` flags (argparse dest) and the MatchSettings field each sets."""


class _MatchHelp(argparse.RawDescriptionHelpFormatter):
    """Shows MatchSettings' default for a flag left unset, and the placeholders of a bot's
    command, read only when help is asked for (importing them costs the protocol
    modules)."""

    def _format_text(self, text: str) -> str:
        if "@PLACEHOLDERS@" in text:
            from referee.table.bots import PLACEHOLDERS

            rows = [f"  {{{name}}}".ljust(16) + meaning for name, meaning in PLACEHOLDERS.items()]
            text = text.replace("@PLACEHOLDERS@", "\n".join(rows))
        return super()._format_text(text)

    def _expand_help(self, action: argparse.Action) -> str:
        field = MATCH_SETTINGS.get(action.dest)
        if field is None:
            return super()._expand_help(action)
        from referee.match.settings import MatchSettings

        default = MatchSettings.__dataclass_fields__[field].default
        return (action.help or "") % {"setting": default}


class _BotAction(argparse.Action):
    """``--bot``: one more seat, in seat order."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        seats = list(getattr(namespace, self.dest, None) or [])
        seats.append([str(values), None])
        setattr(namespace, self.dest, seats)


class _NameAction(argparse.Action):
    """``--name``: the name of the seat of the ``--bot`` just before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        seats = getattr(namespace, self.dest, None)
        if not seats:
            parser.error("--name names the --bot given before it: give a --bot first")
        if seats[-1][1] is not None:
            parser.error(f"--bot {seats[-1][0]!r} is given two names")
        seats[-1][1] = str(values)


def _match_seats(given: list[list[str | None]]) -> list[Seat]:
    """The four seats of ``referee match``; raises ValueError with a message for a
    person."""
    from referee.table.bots import (
        CommandBot,
        Seat,
        bot_name,
        check_name,
        check_program,
        distinct_names,
        parse_bot,
    )

    if len(given) != 4:
        raise ValueError(f"give 4 bots (--bot 4 times), got {len(given)}")
    bots = []
    for text, _ in given:
        assert text is not None
        bot = parse_bot(text)
        if isinstance(bot, CommandBot):
            problem = check_program(bot.own_argv, Path.cwd())
            if problem is not None:
                raise ValueError(f"cannot start bot {text!r}: {problem}")
        bots.append(bot)
    chosen = [name for _, name in given if name is not None]
    for name in chosen:
        problem = check_name(name)
        if problem is not None:
            raise ValueError(f"--name: {problem}")
        if chosen.count(name) > 1:
            raise ValueError(f"--name: two seats are named {name!r}")
    defaults = iter(
        distinct_names(
            [bot_name(b) for b, (_, name) in zip(bots, given, strict=True) if name is None],
            reserved=chosen,
        )
    )
    return [
        Seat(name if name is not None else next(defaults), bot)
        for bot, (_, name) in zip(bots, given, strict=True)
    ]


def _cmd_match(args: argparse.Namespace) -> int:
    import asyncio

    from referee.match.settings import SettingsError, settings_from_request
    from referee.rules import OptionsError
    from referee.sandbox import SandboxUnavailable
    from referee.server.logging import configure_logging
    from referee.server.state import StateError, load_signer
    from referee.table.jails import plan_jails
    from referee.table.readout import (
        EXIT_USAGE,
        exit_notice,
        exit_status,
        problem_lines,
        summary_lines,
    )
    from referee.table.referees import RefereeUnavailable
    from referee.table.table import BotExit, play_match

    configure_logging(args.log_format, args.log_level)
    try:
        seats = _match_seats(args.seats or [[b, None] for b in DEFAULT_BOTS])
    except ValueError as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        names = (seats[0].name, seats[1].name, seats[2].name, seats[3].name)
        settings = settings_from_request(_match_request(args, names))
    except (OptionsError, SettingsError) as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        plan = plan_jails(
            args.sandbox, seats, log_dir=Path(args.log_dir), state_dir=Path(args.state_dir)
        )
    except SandboxUnavailable as exc:
        print(f"referee match: --sandbox on: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.dry_run:
        print("\n".join([*plan.lines(), *plan.blocking, *plan.warnings]))
        return EXIT_USAGE if plan.blocking else 0
    for line in [*plan.blocking, *plan.warnings]:
        print(f"referee match: {line}", file=sys.stderr, flush=True)
    if plan.blocking:
        return EXIT_USAGE
    try:
        signer, public_key = load_signer(Path(args.state_dir), Path(args.log_dir))
    except StateError as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return EXIT_USAGE

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
    except (RefereeUnavailable, SettingsError) as exc:
        print(f"referee match: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in summary_lines(report):
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


ORGANISER_STATUSES = ("waiting", "running", "finished", "cancelled")
"""``--status`` names: MatchStatus values (common.proto) without their prefix."""


def _cmd_organiser(args: argparse.Namespace) -> int:
    from referee.match.settings import SettingsError, settings_from_request
    from referee.organiser_command import run_organiser
    from referee.rules import OptionsError
    from referee.server.tls import TlsError
    from referee.table.readout import EXIT_USAGE

    me = f"referee organiser {args.organiser_command}"
    request = None
    if args.organiser_command == "create":
        names = tuple(args.names or ())
        if names and len(names) != 4:
            print(
                f"{me}: give 4 seat names (--name 4 times) or none, got {len(names)}",
                file=sys.stderr,
            )
            return EXIT_USAGE
        try:
            request = _match_request(args, names or None)
            settings_from_request(request)  # refused here as the referee would refuse it
        except (OptionsError, SettingsError) as exc:
            print(f"{me}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    try:
        tls = _client_tls(args)
    except TlsError as exc:
        print(f"{me}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return run_organiser(args, request, tls)


def _folder_hint(folder: Path) -> str:
    """What to run on a folder given where one match's log is expected."""
    me, shown = referee_program(), printable(shlex.quote(str(folder)))
    tournament = (folder / "tournament.json").is_file()
    logs = sorted((folder / "logs" if tournament else folder).glob("*.jsonl"))
    lines = [f"{printable(str(folder))} is a folder; replay reads one match's log"]
    if logs:
        lines[0] += f", e.g.:\n  {me} replay {printable(shlex.quote(str(logs[-1])))}"
    lines.append("For all of its matches:")
    lines.append(f"  {me} view {shown}   (an HTML page for each match, and an index)")
    if tournament:
        lines.append(f"  {me} verify --tournament {shown}   (every log and deal group)")
    else:
        lines.append(f"  {me} verify {shown}/*.jsonl   (every log)")
    return "\n".join(lines)


def _cmd_replay(args: argparse.Namespace) -> int:
    from referee.log import LogFormatError, read_log
    from referee.log.replay import replay_lines

    if Path(args.log).is_dir():
        print(f"referee replay: {_folder_hint(Path(args.log))}", file=sys.stderr)
        return 2
    if args.seat is not None:
        return _seat_replay(args)
    try:
        read = read_log(Path(args.log))
    except (OSError, LogFormatError) as exc:
        print(f"referee replay: {exc}", file=sys.stderr)
        return 1
    for line in replay_lines(read, show_rejections=not args.no_rejections, hand=args.hand):
        print(line)
    return 0 if read.complete else 1


def _seat_replay(args: argparse.Namespace) -> int:
    from referee.view.logfile import LogTooLarge, fold_log
    from referee.view.text import seat_lines

    try:
        folded = fold_log(Path(args.log))
    except (OSError, LogTooLarge) as exc:
        print(f"referee replay: {exc}", file=sys.stderr)
        return 1
    for line in seat_lines(folded.ops, args.seat, args.hand):
        print(line)
    complete = any(op["t"] == "end" for op in folded.ops) and not folded.truncated
    return 0 if complete else 1


def _cmd_view(args: argparse.Namespace) -> int:
    from referee.view.index import write_index
    from referee.view.logfile import LogTooLarge
    from referee.view.page import replay_page
    from referee.view.stderr import files_beside

    source = Path(args.source)
    try:
        if source.is_dir():
            out_dir = Path(args.output) if args.output else None
            index, rows = write_index(source, out_dir, with_stderr=args.with_stderr)
            bad = sum(1 for r in rows if not r.verified)
            print(f"{index} ({len(rows)} matches, {bad} that do not verify or cannot be read)")
            return 0
        out = Path(args.output) if args.output else source.with_suffix(".html")
        files = files_beside(source) if args.with_stderr else None
        if args.with_stderr and not files:
            where = source.with_name(f"{source.stem}.seatN.stderr")
            print(f"referee view: no bot output beside the log ({where})", file=sys.stderr)
        html = replay_page(source, stderr=files)
        out.write_text(html, encoding="utf-8")
    except LogTooLarge as exc:
        print(f"referee view: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"referee view: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from referee.log.signing import SigningKeyError, load_public_key, public_key_argument
    from referee.log.verify import verify_log

    key = None
    if args.public_key:
        try:
            key = public_key_argument(args.public_key)
        except SigningKeyError as exc:
            print(f"referee verify: {exc}", file=sys.stderr)
            return 2
    if args.tournament:
        if key is None and (Path(args.tournament) / "signing-key.pub").is_file():
            try:
                key = load_public_key(Path(args.tournament) / "signing-key.pub")
            except SigningKeyError as exc:
                print(f"referee verify: {exc}", file=sys.stderr)
                return 2
        return _verify_tournament(args, key)
    if not args.logs:
        print("referee verify: give match logs, or --tournament DIR", file=sys.stderr)
        return 2
    failed = 0
    for path in args.logs:
        report = verify_log(Path(path), key)
        print(printable(report.summary()))
        failed += not report.ok
    return 1 if failed else 0


def _cmd_dataset(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401  (the rl extra's; Parquet)

        from referee.rl.dataset import run
    except ModuleNotFoundError as exc:
        print(
            f"referee dataset: {exc.name} is missing: the command needs the rl extra, "
            'pip install "pusoy-referee[rl]" (and "clients/python[numpy]" for the kit)',
            file=sys.stderr,
        )
        return 2
    return run(
        args.logs,
        args.output,
        fmt=args.format,
        full_information=args.full_information,
        public_key=args.public_key,
        progress=not args.no_progress,
    )


def _verify_tournament(args: argparse.Namespace, key: bytes | None) -> int:
    import os

    from referee.tournament.verify import verify_tournament

    folder = Path(args.tournament)
    if not (folder / "tournament.json").is_file():
        print(f"referee verify: {folder} holds no tournament (no tournament.json)", file=sys.stderr)
        return 2
    report = verify_tournament(
        folder, jobs=args.jobs or min(4, os.cpu_count() or 1), public_key=key
    )
    for log_report in report.logs:
        if not log_report.ok or args.all:
            print(log_report.summary())
    for problem in report.problems:
        print(f"FAILED: {problem}")
    for note in report.notes:
        print(f"note: {note}")
    print(report.summary())
    return 0 if report.ok else 1


def _cmd_tournament(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from referee.log.private import create_private_file
    from referee.server.logging import configure_logging
    from referee.tournament.config import ConfigError, load_config
    from referee.tournament.director import Tournament, TournamentError, TournamentSummary
    from referee.tournament.progress import Progress, format_duration
    from referee.tournament.report import (
        format_pairwise,
        format_standings,
        verify_command,
    )

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
        print(tournament.isolation.describe())
        for warning in tournament.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return 0
    try:
        tournament.prepare()
    except TournamentError as exc:
        print(f"referee tournament: {exc}", file=sys.stderr)
        return 2
    print(tournament.isolation.describe(), flush=True)
    if tournament.counts.done:
        print(f"Resuming: {tournament.counts.done} matches already recorded", flush=True)
    create_private_file(tournament.folder / "referee.log", b"", sync=False)
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
    names = [r.name for r in summary.standings]
    print(format_pairwise(names, summary.pairwise, scoring))
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


STDIO_BOT_EPILOG = """\
examples:
  referee match --bot "stdio:clients/stdio/c/bot" --bot greedy --bot greedy --bot random
  referee stdio-bot --address 127.0.0.1:50051 --token T --name mine -- ./mybot --fast
  referee stdio-bot --address ref.example:50051 --tls-ca ca.pem --token T -- ./mybot

The bot reads one JSON line per message of the Play stream on stdin and writes one
answer per line on stdout: cards ("5D 5C"), "pass", or an Action in JSON. See
docs/protocol.md, section 8. Exit status: 0 the match ended, 2 refused, 3 referee
unreachable, 4 the bot stopped reading, 5 the bot ended early, 127 it could not start.
"""


def _add_client_tls_flags(p: argparse.ArgumentParser) -> None:
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


def _client_tls(args: argparse.Namespace) -> ClientTls | None:
    """The TLS of ``_add_client_tls_flags`` (and the kits' PUSOY_TLS_* variables); None:
    plaintext. Raises TlsError."""
    from referee.server.tls import ClientTls

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


def _cmd_stdio_bot(args: argparse.Namespace) -> int:
    import asyncio
    import os

    from referee.server.tls import TlsError
    from referee.stdio.bridge import Limits, run_bridge

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        print("referee stdio-bot: give the bot's command after --", file=sys.stderr)
        return 2
    token = args.token or os.environ.get("PUSOY_TOKEN", "")
    if not token:
        print("referee stdio-bot: a seat token is needed: --token or PUSOY_TOKEN", file=sys.stderr)
        return 2
    limits = Limits(
        max_line_bytes=args.max_line_bytes,
        max_pending_bytes=args.max_pending_bytes,
        reconnect_window_s=args.reconnect_window_s,
    )
    try:
        tls = _client_tls(args)
    except TlsError as exc:
        print(f"referee stdio-bot: {exc}", file=sys.stderr)
        return 2
    code = asyncio.run(
        run_bridge(
            command,
            args.address or os.environ.get("PUSOY_ADDRESS", "127.0.0.1:50051"),
            token,
            name=args.name or "",
            want_legal_plays=not args.no_legal_plays,
            limits=limits,
            tls=tls,
        )
    )
    return int(code)


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


def _cmd_bot(args: argparse.Namespace) -> int:
    from referee.bots.process import EXIT_USAGE, UsageError, play, settings
    from referee.server.tls import TlsError

    try:
        bot = settings(
            args.name,
            address=args.address,
            token_file=args.token_file,
            token_flag=args.token,
            tls=_client_tls(args),
            reconnect_window_ms=args.reconnect_window_ms,
            batch_events=args.batch_events,
            seed=args.seed,
        )
    except (UsageError, TlsError) as exc:
        print(f"referee bot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    code, line = play(bot)
    print(printable(line), file=sys.stdout if code == 0 else sys.stderr)
    return code


def _add_logging_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-format",
        choices=["auto", "json", "console"],
        default="auto",
        help="server log format on stderr (default: console on a terminal, else JSON)",
    )
    p.add_argument("--log-level", default="warning", help="debug, info, warning or error")


def _add_match_settings_flags(p: argparse.ArgumentParser) -> None:
    """The flags that describe a match: ``referee match`` and ``referee organiser create``."""
    p.add_argument(
        "--profile", default="pusoy-dos", help="pusoy-dos (default), pusoy-dos-chips or big-two"
    )
    p.add_argument("--seed", help="seed of the deals (default: from the OS random source)")
    match_end = p.add_mutually_exclusive_group()
    match_end.add_argument(
        "--hands", type=_count, help="play this many hands (default: the profile's match end)"
    )
    match_end.add_argument(
        "--threshold", type=_count, help="play until a total reaches this (instead of --hands)"
    )
    # Left unset, each takes MatchSettings' default (shown by --help, see _MatchHelp).
    p.add_argument("--turn-time-ms", type=_count, help="time per turn (default: %(setting)s)")
    p.add_argument(
        "--connect-timeout-ms",
        type=_count,
        help="time for the bots to connect (default: %(setting)s)",
    )
    p.add_argument("--time-bank-ms", type=_count, help="reserve per seat (default: %(setting)s)")
    p.add_argument(
        "--max-rejections",
        type=_count,
        help="rejected attempts per turn before the default action (default: %(setting)s)",
    )
    p.add_argument(
        "--max-strikes",
        type=_count,
        help="strikes before a seat is played by default (0: no limit; default: %(setting)s)",
    )
    p.add_argument(
        "--max-actions-out-of-turn",
        type=_count,
        help="actions answering no prompt, between two prompts, before a seat's stream is "
        "closed (default: %(setting)s)",
    )
    p.add_argument(
        "--drill-disconnect-after",
        type=_count,
        default=0,
        metavar="N",
        help="close each seat's stream once after its Nth prompt, to check that bots "
        "reconnect (default: off)",
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


def build_parser() -> argparse.ArgumentParser:

    parser = argparse.ArgumentParser(
        prog="referee",
        description="A network referee for Pusoy Dos and Big Two.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rules = sub.add_parser(
        "rules", help="the reference judge: check plays without a server (docs/judge.md)"
    )
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
    pos = rules_sub.add_parser(
        "positions",
        help="the positions a seat met in a match log, as judge requests (JSON Lines)",
        epilog=POSITIONS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pos.add_argument("log", help="a match's .jsonl event log")
    pos.add_argument("--seat", type=_seat, required=True, help="the seat: 0, 1, 2 or 3")
    pos.set_defaults(func=_cmd_positions)

    serve = sub.add_parser(
        "serve",
        help="run the referee server (gRPC) until SIGTERM",
        epilog=SERVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
        type=_count,
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
        type=_positive,
        default=256,
        metavar="N",
        help="open HTTP connections at once (more get 503; default 256)",
    )
    serve.add_argument(
        "--http-max-viewers",
        type=_positive,
        default=200,
        metavar="N",
        help="live match views at once, all matches together (default 200)",
    )
    serve.add_argument(
        "--http-max-viewers-per-match",
        type=_positive,
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
    limits = serve.add_argument_group("limits")
    limits.add_argument(
        "--max-hands",
        type=_count,
        default=1000,
        metavar="N",
        help="hands per match; threshold matches end at N hands too (default 1000)",
    )
    limits.add_argument(
        "--max-waiting-matches",
        type=_count,
        default=100,
        metavar="N",
        help="matches waiting for their bots at once (default 100)",
    )
    limits.add_argument(
        "--max-live-matches",
        type=_count,
        default=500,
        metavar="N",
        help="matches not over at once (default 500)",
    )
    limits.add_argument(
        "--max-connect-timeout-ms",
        type=_count,
        default=600_000,
        metavar="MS",
        help="the longest a match may wait for its bots (default 600000)",
    )
    limits.add_argument(
        "--max-spectators-per-match",
        type=_count,
        default=32,
        metavar="N",
        help="WatchMatch streams per match (default 32)",
    )
    limits.add_argument(
        "--max-spectators",
        type=_count,
        default=512,
        metavar="N",
        help="WatchMatch streams on the server (default 512)",
    )
    limits.add_argument(
        "--max-reconnects-per-minute",
        type=_count,
        default=60,
        metavar="N",
        help="hellos per seat in any minute (default 60)",
    )
    limits.add_argument(
        "--max-failed-hellos-per-minute",
        type=_count,
        default=60,
        metavar="N",
        help="hellos with a bad token or key per client address in any minute (default 60)",
    )
    limits.add_argument(
        "--max-connections",
        type=_count,
        default=0,
        metavar="N",
        help="gRPC connections held at once; more are closed as they arrive (default 0: "
        "what the open-file limit leaves once a descriptor per live match's log is kept "
        "in reserve)",
    )
    limits.add_argument(
        "--handshake-timeout-ms",
        type=_positive,
        default=10_000,
        metavar="MS",
        help="a connection that has not finished its TLS and HTTP/2 handshakes by then is "
        "closed (default 10000)",
    )
    limits.add_argument(
        "--idle-timeout-ms",
        type=_count,
        default=60_000,
        metavar="MS",
        help="a connection with no call open this long is closed; clients connect again "
        "when they next call (default 60000; 0: never)",
    )
    limits.add_argument(
        "--max-message-bytes",
        type=_count,
        default=64 * 1024,
        metavar="N",
        help="the largest message a client may send (default 65536)",
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
        formatter_class=_MatchHelp,
    )
    match.add_argument(
        "--bot",
        action=_BotAction,
        dest="seats",
        metavar="BOT",
        help="a built-in bot (random, greedy), a command, or stdio:COMMAND for a bot that "
        "speaks JSON lines on stdin/stdout (docs/protocol.md section 8); give 4, in seat order "
        f"(default: {' '.join(DEFAULT_BOTS)})",
    )
    match.add_argument(
        "--name",
        action=_NameAction,
        dest="seats",
        metavar="NAME",
        help="the seat name of the --bot just before (default: the program's name, "
        "e.g. random_bot for 'python examples/random_bot.py')",
    )
    _add_match_settings_flags(match)
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
    _add_logging_flags(match)
    match.set_defaults(func=_cmd_match)

    org = sub.add_parser(
        "organiser",
        help="the organiser's calls to a running referee serve: create, list, show, cancel "
        "matches, fetch and verify their logs",
        epilog=ORGANISER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    org_sub = org.add_subparsers(dest="organiser_command", required=True, metavar="COMMAND")
    conn = argparse.ArgumentParser(add_help=False)
    conn.add_argument(
        "--address",
        metavar="HOST:PORT",
        help="the referee (default: $PUSOY_ADDRESS, else where the `referee serve` of "
        "--state-dir records it listens, else 127.0.0.1:50051)",
    )
    conn.add_argument(
        "--token-file",
        metavar="PATH",
        help="the organiser's token, as `referee serve` keeps it (default "
        "$PUSOY_ORGANISER_TOKEN_FILE, else the file that referee serve records, else "
        "STATE_DIR/organiser-token)",
    )
    conn.add_argument(
        "--state-dir",
        default=".referee",
        metavar="DIR",
        help="the state folder of a `referee serve` on this machine (default .referee)",
    )
    _add_client_tls_flags(conn)
    conn.add_argument("--json", action="store_true", help="print the reply as JSON")
    org_info = org_sub.add_parser(
        "info", parents=[conn], help="the referee's version, signing key and limits"
    )
    org_create = org_sub.add_parser(
        "create",
        parents=[conn],
        help="create a match; prints its id and each seat's secret token",
        formatter_class=_MatchHelp,
    )
    org_create.add_argument(
        "--name",
        action="append",
        dest="names",
        metavar="NAME",
        help="seat names, in seat order: give 4 or none (default: seat 0 ... seat 3)",
    )
    org_create.add_argument(
        "--tokens-dir",
        metavar="DIR",
        help="write each seat's token to DIR/seat-N.token (mode 0600) instead of printing it",
    )
    _add_match_settings_flags(org_create)
    org_list = org_sub.add_parser(
        "list", parents=[conn], help="the referee's matches, newest first"
    )
    org_list.add_argument("--status", choices=ORGANISER_STATUSES, help="only these")
    org_show = org_sub.add_parser(
        "show", parents=[conn], help="one match: status, seats, totals, standings, final hash"
    )
    org_show.add_argument("match_id", metavar="MATCH_ID")
    org_cancel = org_sub.add_parser("cancel", parents=[conn], help="cancel a match not yet over")
    org_cancel.add_argument("match_id", metavar="MATCH_ID")
    org_cancel.add_argument("--reason", default="cancelled by the organiser", help="logged")
    org_log = org_sub.add_parser(
        "log",
        parents=[conn],
        help="fetch a match's log and verify it with the referee's published key",
    )
    org_log.add_argument("match_id", metavar="MATCH_ID")
    org_log.add_argument("--output", "-o", metavar="FILE", help="default: MATCH_ID.jsonl")
    org_log.add_argument(
        "--wait", action="store_true", help="wait until the match is over, showing its progress"
    )
    org_log.add_argument(
        "--public-key",
        metavar="KEY",
        help="verify with this key (its base64 text, or a file holding it) instead of the "
        "one the referee publishes",
    )
    for p in (org_info, org_create, org_list, org_show, org_cancel, org_log):
        p.set_defaults(func=_cmd_organiser)

    replay = sub.add_parser(
        "replay",
        help="print a match log as readable text, hand by hand, trick by trick",
        epilog=REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("log", help="a match's .jsonl event log")
    replay.add_argument("--no-rejections", action="store_true", help="hide rejected attempts")
    replay.add_argument(
        "--seat",
        type=int,
        choices=range(4),
        metavar="N",
        help="only what seat N knew: its own cards, public plays, and at each of its turns "
        "its legal plays, its choice and its rejected attempts",
    )
    replay.add_argument("--hand", type=_count, metavar="N", help="only hand N")
    replay.set_defaults(func=_cmd_replay)

    view = sub.add_parser(
        "view",
        help="write a match log as one self-contained HTML replay (or a folder's index)",
        epilog=VIEW_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    view.add_argument("source", metavar="LOG|DIR", help="a match's .jsonl log, or a folder of them")
    view.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="the page to write (default: the log's name with .html); for a folder, the "
        "folder for its pages (default: DIR/view)",
    )
    view.add_argument(
        "--with-stderr",
        action="store_true",
        help="show each seat's own output beside its moves, from the files the log's folder "
        "holds (LOG-DIR/MATCH.seatN.stderr; a tournament's stderr/ folder)",
    )
    view.set_defaults(func=_cmd_view)

    verify = sub.add_parser(
        "verify",
        help="re-check a log: hash chain, deals against the seed, every verdict, the scores",
        epilog=VERIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("logs", nargs="*", help="match .jsonl event logs")
    verify.add_argument(
        "--public-key",
        metavar="KEY",
        help="the referee's public key: its base64 text (as serve prints it), or a file "
        "holding it (base64 or PEM); every log must be signed by it (with --tournament: "
        "default DIR/signing-key.pub)",
    )
    verify.add_argument(
        "--tournament",
        metavar="DIR",
        help="a tournament's folder: every log, the schedule, and that each deal group "
        "shared its deals in the documented seatings",
    )
    verify.add_argument(
        "--jobs", type=int, metavar="N", help="logs verified at once (default: up to 4)"
    )
    verify.add_argument(
        "--all", action="store_true", help="with --tournament: print every log's line"
    )
    verify.set_defaults(func=_cmd_verify)

    dataset = sub.add_parser(
        "dataset",
        help="training data from match logs: one row per decision, as Parquet or JSON lines",
        epilog=DATASET_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dataset.add_argument(
        "logs",
        nargs="+",
        metavar="LOGS_OR_TOURNAMENT_DIR",
        help="logs, folders of logs, or a tournament's folder",
    )
    dataset.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the file to write (.parquet, or .jsonl for JSON lines)",
    )
    dataset.add_argument(
        "--format", choices=("parquet", "jsonl"), help="default: from the output's name"
    )
    dataset.add_argument(
        "--full-information",
        action="store_true",
        help="add every seat's cards at each decision (for analysis: no seat knew them)",
    )
    dataset.add_argument(
        "--public-key",
        metavar="KEY",
        help="the referee's public key (as for "
        "verify); default: a tournament folder's signing-key.pub",
    )
    dataset.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    dataset.set_defaults(func=_cmd_dataset)

    stdio = sub.add_parser(
        "stdio-bot",
        help="play a seat with a program that speaks JSON lines on stdin/stdout (no gRPC)",
        epilog=STDIO_BOT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stdio.add_argument(
        "--address", help="the referee (default: PUSOY_ADDRESS, else 127.0.0.1:50051)"
    )
    stdio.add_argument("--token", help="the seat's token (default: PUSOY_TOKEN)")
    _add_client_tls_flags(stdio)
    stdio.add_argument("--name", help="the bot's name for the log (default: the program's name)")
    stdio.add_argument(
        "--no-legal-plays", action="store_true", help="leave legal_plays out of the prompts"
    )
    stdio.add_argument(
        "--max-line-bytes",
        type=_count,
        default=4096,
        metavar="N",
        help="the longest answer line; a longer one is a malformed action (default 4096)",
    )
    stdio.add_argument(
        "--max-pending-bytes",
        type=_count,
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

    bot = sub.add_parser(
        "bot",
        help="play a seat of a match on a running referee with a built-in bot (random, "
        "greedy), as a kit's bot does",
        epilog=BOT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bot.add_argument("name", metavar="NAME", help="a built-in bot: random or greedy")
    bot.add_argument("--address", help="the referee (default: PUSOY_ADDRESS, else 127.0.0.1:50051)")
    bot.add_argument(
        "--token-file",
        metavar="FILE",
        help="the seat's token, one word in a file such as organiser create --tokens-dir "
        "writes (default: PUSOY_TOKEN)",
    )
    bot.add_argument("--token", help=argparse.SUPPRESS)  # refused: see _cmd_bot
    _add_client_tls_flags(bot)
    bot.add_argument(
        "--reconnect-window-ms",
        type=int,
        metavar="N",
        help="retry this long to reach the referee or the seat again (default: "
        "PUSOY_RECONNECT_WINDOW_MS, else 60000)",
    )
    bot.add_argument(
        "--batch-events",
        action="store_true",
        help="events batched into the prompts (or PUSOY_BATCH_EVENTS=1; docs/kits.md 10)",
    )
    bot.add_argument("--seed", type=int, help="the random bot's seed, for a repeatable run")
    bot.set_defaults(func=_cmd_bot)

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
        "referee, whether bots can be sandboxed here) and print the schedule's size and the "
        "sandbox's limits; start nothing, change nothing",
    )
    tour.add_argument(
        "--log-level", default="warning", help="the referee's log level in DIR/referee.log"
    )
    tour.set_defaults(func=_cmd_tournament)

    from referee.ladder.cli import add_ladder_parser  # its parser alone: no extra needed

    add_ladder_parser(sub)
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
