"""``referee organiser``: what each of its commands prints and writes.

The referee it calls is a program it does not control, so everything that came from it
is printed through ``printable`` (match ids, names, hashes, versions, keys, refusals),
a status it does not know is shown as a number, a CreateMatch reply is checked before a
token is written (``Organiser.create``), and a log is moved into place only once it
verifies, with the key the organiser pins (``--public-key``) or, said as such, the key
that same referee publishes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from referee.client.organiser import (
    OVER,
    BadReply,
    LogStreamTooLarge,
    Organiser,
    OrganiserError,
    Target,
    find_target,
)
from referee.program import referee_program
from referee.text import printable

if TYPE_CHECKING:
    from google.protobuf.message import Message

    from referee.client.tls import ClientTls
    from referee.protocol import common, match_service

EXIT_OK, EXIT_NOT_VERIFIED, EXIT_USAGE = 0, 1, 2
NEEDS_TOKEN = ("create", "list", "cancel")


def run_organiser(
    args: argparse.Namespace,
    request: match_service.CreateMatchRequest | None,
    tls: ClientTls | None,
) -> int:
    """One ``referee organiser`` command; its exit status."""
    me = f"referee organiser {args.organiser_command}"
    try:
        target, said = find_target(
            args.address,
            args.token_file,
            Path(args.state_dir),
            tls,
            needs_token=args.organiser_command in NEEDS_TOKEN,
        )
        print(f"{me}: {said}", file=sys.stderr, flush=True)
        return asyncio.run(_call(args, target, request))
    except OrganiserError as exc:
        print(f"{me}: {exc}", file=sys.stderr)
        return EXIT_USAGE


async def _call(
    args: argparse.Namespace,
    target: Target,
    request: match_service.CreateMatchRequest | None,
) -> int:
    async with Organiser(target) as org:
        command = args.organiser_command
        if command == "info":
            return await _info(args, org)
        if command == "create":
            assert request is not None
            return await _create(args, org, request)
        if command == "list":
            return await _list(args, org)
        if command == "show":
            info = await org.get(args.match_id)
            print(_json(info) if args.json else "\n".join(match_lines(info)))
            return EXIT_OK
        if command == "cancel":
            info = await org.cancel(args.match_id, args.reason)
            print(_json(info) if args.json else f"Cancelled {printable(info.match_id)}.")
            return EXIT_OK
        return await _log(args, org)


def _json(message: Message) -> str:
    """The reply in protobuf's JSON mapping; strings come out escaped (ASCII only)."""
    from google.protobuf import json_format

    return json_format.MessageToJson(message, preserving_proto_field_name=True, indent=2)


def status_name(status: common.MatchStatus.ValueType) -> str:
    """A MatchStatus as ``--status`` spells it (``running``); a number this version does
    not know as ``status 7``."""
    from referee.protocol.names import MATCH_STATUS

    name = MATCH_STATUS.text(status)
    return f"status {int(status)}" if name.isdigit() else name


def _at(seq: Sequence[object], i: int, default: object) -> object:
    return seq[i] if 0 <= i < len(seq) else default


def match_lines(info: match_service.MatchInfo) -> list[str]:
    """A match's public summary, for a person."""
    names = [printable(n) for n in info.config.seat_names]
    status = status_name(info.status)
    lines = [f"Match {printable(info.match_id)}: {status}, hands played: {info.hands_played}"]
    for seat, name in enumerate(names):
        here = _at(info.connected, seat, False)
        total = _at(info.totals, seat, 0)
        lines.append(f"  seat {seat} {name}: total {total}{', connected' if here else ''}")
    for st in info.standings:
        who = " & ".join(str(_at(names, i, i)) for i in st.seats)
        lines.append(f"  {st.place}. {who}: total {st.total}, hands won: {st.hands_won}")
    if info.failure:
        lines.append(f"  failure: {printable(info.failure)}")
    lines.append(f"  seed commitment: {printable(info.seed_commitment)}")
    if info.final_hash:
        lines.append(f"  log: {info.log_lines} lines, final hash {printable(info.final_hash)}")
    return lines


def write_tokens(folder: Path, tokens: Sequence[str]) -> list[Path]:
    """Each seat's token in FOLDER/seat-N.token, readable by its owner only, written whole."""
    from referee.files import replace_private_file

    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"seat-{seat}.token" for seat in range(len(tokens))]
    for path, token in zip(paths, tokens, strict=True):
        replace_private_file(path, token.encode("ascii") + b"\n")
    return paths


async def _info(args: argparse.Namespace, org: Organiser) -> int:
    info = await org.info()
    if args.json:
        print(_json(info))
        return EXIT_OK
    limits = ", ".join(f"{f.name} {v}" for f, v in info.limits.ListFields())
    versions = ", ".join(map(str, info.protocol_versions))
    print(f"Referee {printable(info.software_version)} at {printable(org.target.address)}")
    print(f"Protocol versions: {versions}")
    algorithm, key = printable(info.signing_algorithm), printable(info.signing_public_key)
    print(f"Logs signed with {algorithm}: {key}")
    print(f"Limits: {limits or 'none'}")
    return EXIT_OK


async def _create(
    args: argparse.Namespace, org: Organiser, request: match_service.CreateMatchRequest
) -> int:
    created = await org.create(request)  # four plain seat tokens, or BadReply
    match_id, address = printable(created.match_id), printable(org.target.address)
    if args.json:
        print(_json(created))
    else:
        print(f"Created {match_id} at {address}")
        print(f"Seed commitment: {printable(created.seed_commitment)}")
    if args.tokens_dir:
        for path in write_tokens(Path(args.tokens_dir), created.seat_tokens):
            print(f"Token: {path}", file=sys.stderr if args.json else sys.stdout)
    elif not args.json:
        names = created.match.config.seat_names
        for seat, token in enumerate(created.seat_tokens):
            print(f"seat {seat} {printable(str(_at(names, seat, f'seat {seat}')))}: {token}")
    if not args.json:
        print(
            f"Each bot connects to {address} with its seat's token "
            "(a kit's --address and --token, or PUSOY_ADDRESS and PUSOY_TOKEN)."
        )
        if args.tokens_dir:  # a built-in bot takes a seat from its file
            seat0 = shlex.quote(str(Path(args.tokens_dir) / "seat-0.token"))
            print(
                f"A built-in bot: {referee_program()} bot greedy --address "
                f"{shlex.quote(org.target.address)} --token-file {seat0}"
            )
    return EXIT_OK


async def _list(args: argparse.Namespace, org: Organiser) -> int:
    from referee.protocol import common, match_service
    from referee.protocol.names import MATCH_STATUS

    status = common.MatchStatus.ValueType(MATCH_STATUS.from_text(args.status or "") or 0)
    found = await org.list(status)
    if args.json:
        print(_json(match_service.ListMatchesResponse(matches=found)))
        return EXIT_OK
    for info in found:
        now = status_name(info.status)
        names = ", ".join(printable(n) for n in info.config.seat_names)
        print(
            f"{printable(info.match_id)}  {now:<9}  {info.hands_played:>3} hands  "
            f"{sum(info.connected)}/4 connected  {names}"
        )
    if not found:
        print("No matches.")
    return EXIT_OK


async def _log(args: argparse.Namespace, org: Organiser) -> int:
    from referee.log.signing import SigningKeyError, decode_public_key, public_key_argument

    pinned = None
    if args.public_key:
        try:
            pinned = public_key_argument(args.public_key)
        except SigningKeyError as exc:
            raise OrganiserError(str(exc)) from None
    # NOT_FOUND (either way) before anything is written.
    if args.wait:
        async for info in org.wait_over(args.match_id):
            if not args.json:
                print(match_lines(info)[0], file=sys.stderr, flush=True)
    else:
        info = await org.get(args.match_id)
    over = info.status in OVER
    key, whose = pinned, "pinned with --public-key"
    if over and key is None:  # trust on first use: the key this same referee publishes
        published = (await org.info()).signing_public_key
        key = decode_public_key(published)
        if key is None:
            shown = printable(published[:100])
            raise OrganiserError(f"the referee published no usable signing key ({shown!r})")
        whose = (
            f"as the referee at {printable(org.target.address)} publishes it (GetServerInfo); "
            "a referee that forges a log publishes its own key too: pin the key you trust "
            "with --public-key"
        )
    dest = Path(args.output or f"{args.match_id}.jsonl")
    try:
        return await _fetch(args, org, info, dest, key, whose, pinned is not None)
    except OSError as exc:  # the folder of --output cannot be written
        raise OrganiserError(f"cannot write the log beside {dest}: {exc.strerror}") from None
    except (LogStreamTooLarge, BadReply) as exc:  # nothing was written at dest
        if args.json:
            failed = {"log": str(dest), "over": over, "verified": False, "summary": str(exc)}
            print(json.dumps(failed))
        else:
            print(f"Log: not saved ({dest} was not written)")
            print(f"FAILED: {exc}")
        return EXIT_NOT_VERIFIED


async def _fetch(
    args: argparse.Namespace,
    org: Organiser,
    info: match_service.MatchInfo,
    dest: Path,
    key: bytes | None,
    whose: str,
    pinned: bool,
) -> int:
    """The log at ``dest`` once it verifies (a match still running: once it is whole)."""
    from referee.log.signing import public_key_text
    from referee.log.verify import verify_log
    from referee.protocol import common

    over = info.status in OVER
    async with org.fetch_log(args.match_id, dest) as fetched:
        if not over:  # its hash chain so far, which no trailer signs yet
            fetched.keep()
            status = status_name(info.status)
            if args.json:
                print(json.dumps({"log": str(dest), "lines": fetched.lines, "over": False}))
            else:
                print(
                    f"Log so far: {dest} ({fetched.lines} lines; the match is {status}: "
                    "--wait fetches its whole log, verified, once it is over)"
                )
            return EXIT_OK
        assert key is not None
        report = await asyncio.to_thread(verify_log, fetched.partial, key)
        report = dataclasses.replace(report, path=dest)
        if report.ok:
            fetched.keep()
    key_text = public_key_text(key)
    if args.json:
        summary = {"log": str(dest), "lines": fetched.lines, "over": True, "verified": report.ok}
        summary |= {"public_key": key_text, "key_pinned": pinned}
        print(json.dumps({**summary, "summary": printable(report.summary())}))
    else:
        print(f"Log: {dest}" if report.ok else f"Log: not saved ({dest} was not written)")
        print(printable(report.summary()))
        print(f"Key: {key_text}, {whose}")
    if not report.ok:
        return EXIT_NOT_VERIFIED
    cancelled = args.wait and info.status == common.MATCH_STATUS_CANCELLED
    return EXIT_NOT_VERIFIED if cancelled else EXIT_OK
