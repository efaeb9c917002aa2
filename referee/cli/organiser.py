"""``referee organiser``: the organiser's calls to a running ``referee serve``."""

from __future__ import annotations

import argparse

from referee.cli.flags import (
    MatchHelp,
    add_client_tls_flags,
    add_command,
    add_match_settings_flags,
    client_tls,
    error_exit,
    match_settings,
)

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


ORGANISER_STATUSES = ("waiting", "running", "finished", "cancelled")
"""``--status`` names: MatchStatus values (common.proto) without their prefix."""


def _cmd_organiser(args: argparse.Namespace) -> int:
    from referee.client.tls import TlsError
    from referee.match.settings import SettingsError
    from referee.organiser_command import run_organiser
    from referee.table.readout import EXIT_USAGE

    me = f"organiser {args.organiser_command}"
    request = None
    if args.organiser_command == "create":
        names = tuple(args.names or ())
        if names and len(names) != 4:
            return error_exit(
                me, f"give 4 seat names (--name 4 times) or none, got {len(names)}", EXIT_USAGE
            )
        try:  # refused here as the referee would refuse it
            request = match_settings(args, names, args.seed or "").request_pb()
        except SettingsError as exc:
            return error_exit(me, exc, EXIT_USAGE)
        if not names:
            del request.seat_names[:]  # the referee's defaults
    try:
        tls = client_tls(args)
    except TlsError as exc:
        return error_exit(me, exc, EXIT_USAGE)
    return run_organiser(args, request, tls)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``referee organiser`` and its commands."""
    org = add_command(
        sub,
        "organiser",
        "the organiser's calls to a running referee serve: create, list, show, cancel "
        "matches, fetch and verify their logs",
        ORGANISER_EPILOG,
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
    add_client_tls_flags(conn)
    conn.add_argument("--json", action="store_true", help="print the reply as JSON")
    org_info = org_sub.add_parser(
        "info", parents=[conn], help="the referee's version, signing key and limits"
    )
    org_create = org_sub.add_parser(
        "create",
        parents=[conn],
        help="create a match; prints its id and each seat's secret token",
        formatter_class=MatchHelp,
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
    add_match_settings_flags(org_create)
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
