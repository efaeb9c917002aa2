"""The organiser's client of a running ``referee serve``: the one MatchService client,
used by ``referee organiser`` and by the table's ``ServerReferee`` (tournaments with
``[referee] server``).

A thin layer over the MatchService (docs/protocol.md): every call carries the
organiser's token when one is known, and every refusal or lost connection becomes an
``OrganiserError`` that says which call failed and why, for a person to read: a
``CallFailed`` with the call and its status, an ``Unreachable`` when the referee cannot
be reached or does not answer in time. ``wait_over`` is the one wait for a match's end.

The referee it talks to is not trusted further than it must be: a CreateMatch reply
with other than four plain seat tokens is refused before a token is written anywhere
(``check_created``), and a log is streamed to a private temporary file beside its
destination, in bounded memory and up to the largest log a referee writes, and is moved
into place only once its caller accepts it (``fetch_log``), so a broken, endless or
forged stream never leaves a file that looks like a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc

from referee.client.channels import DEFAULT_ADDRESS, client_channel, organiser_channel
from referee.client.serving import SERVING_FILE, ServingError, read_serving
from referee.client.spectate import follow_match
from referee.client.tls import ClientTls, TlsError
from referee.client.tokens import TokenError, read_token
from referee.protocol import (
    common,
    match_service,
    match_service_grpc,
)
from referee.text import printable

CALL_TIMEOUT_S = 30.0
"""How long one unary call may take (a referee that does not answer is an error)."""
POLL_S = 0.5
"""Between two looks at a match that is not over yet (``wait_over``), and before a
failed look is made again."""
REWATCH_PAUSE_S = 0.5
"""Before following a match's public events again after their stream ended or broke."""
WATCHED_POLL_S = 5.0
"""Between two looks at a match whose public events are followed, when none comes (a
stream can stall without breaking)."""
CHANGES = frozenset(
    {"seat_connected", "seat_disconnected", "hand_dealt", "hand_ended", "match_ended"}
)
"""The public events after which GetMatch may answer otherwise (``wait_over``)."""
OVER = (common.MATCH_STATUS_FINISHED, common.MATCH_STATUS_CANCELLED)
"""The statuses of a match that is over."""
UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
"""The statuses of a call that did not reach the referee, or that it did not answer."""
SEATS = 4
PLAIN = re.compile(r"[A-Za-z0-9._~+/=-]{1,64}")
"""What a seat token or a match id from a referee may be: ASCII letters, digits and a few
marks, at most 64 (what a referee takes back in a request: ``ServerLimits.max_id_chars``).
Anything else would be written to a token file, a kit's command line or a terminal."""
MAX_FETCHED_LOG_BYTES = 65 * 1024 * 1024
"""The most ``fetch_log`` takes for one log: a referee cancels a match once its log
passes 64 MiB (the server's ``DEFAULT_MAX_LOG_BYTES``, which a test holds below this),
and the last decision, its end and the trailer are far smaller than the margin."""
WRITE_CHUNK = 1024 * 1024
"""Bytes of a streamed log held in memory before they are written out."""
T = TypeVar("T")


class OrganiserError(Exception):
    """A call the referee refused, or a referee that cannot be reached."""


class BadReply(OrganiserError):
    """A reply no honest referee sends (it is refused whole: nothing of it is used)."""


class LogStreamTooLarge(OrganiserError):
    """The referee streamed more than any log of a referee holds."""


class CallFailed(OrganiserError):
    """A call that ended with an error status: ``call``, ``code`` and ``details`` (made
    printable) say which; ``what`` is them in one line."""

    def __init__(self, text: str, call: str, code: grpc.StatusCode, details: str) -> None:
        super().__init__(text)
        self.call, self.code, self.details = call, code, details

    @property
    def what(self) -> str:
        return f"{self.call}: {self.code.name}: {self.details}".rstrip(": ")


class Unreachable(CallFailed):
    """A call that did not reach the referee, or that it did not answer in time."""


def plain_problem(text: str) -> str | None:
    """Why ``text`` is not a plain token or id (None: it is).

    >>> plain_problem("3f9a"), plain_problem("a\\nb"), plain_problem("\\x1b[2J")
    (None, 'it holds a control character', 'it holds a control character')
    >>> plain_problem("é"), plain_problem("x" * 65), plain_problem("")
    ('it holds a character outside ASCII', 'it is over 64 characters', 'it is empty')
    """
    if PLAIN.fullmatch(text):
        return None
    if not text:
        return "it is empty"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return "it holds a control character"
    if not text.isascii():
        return "it holds a character outside ASCII"
    if len(text) > 64:
        return "it is over 64 characters"
    return "it holds a space or a mark other than . _ ~ + / = -"


def check_created(reply: match_service.CreateMatchResponse) -> None:
    """Refuse (``BadReply``) a CreateMatch reply that is not one match with four plain
    seat tokens: a fifth token, or one holding a newline, would be written to a token
    file or handed to a bot's command line."""
    what = "the referee's CreateMatch reply is refused"
    problem = plain_problem(reply.match_id)
    if problem is not None:
        raise BadReply(f"{what}: its match id is not a plain id ({problem})")
    if len(reply.seat_tokens) != SEATS:
        raise BadReply(f"{what}: it holds {len(reply.seat_tokens)} seat tokens, not {SEATS}")
    for seat, token in enumerate(reply.seat_tokens):
        problem = plain_problem(token)
        if problem is not None:
            raise BadReply(f"{what}: seat {seat}'s token is not a plain token ({problem})")


@dataclass(frozen=True)
class Target:
    """Which referee, and how to talk to it."""

    address: str
    token: str = ""
    """Empty: only the calls anyone may make (GetMatch, GetServerInfo, finished logs)."""
    tls: ClientTls | None = None
    token_hint: str = ""
    """Said with an UNAUTHENTICATED or PERMISSION_DENIED refusal: where a token comes from."""


@dataclass
class FetchedLog:
    """A log streamed to a temporary file beside its destination: ``keep()`` moves it
    into place; left unkept, it is removed."""

    partial: Path
    dest: Path
    lines: int = 0
    size: int = 0
    kept: bool = field(default=False, init=False)

    def keep(self) -> None:
        os.replace(self.partial, self.dest)
        self.kept = True


def find_target(
    address: str | None,
    token_file: str | None,
    state_dir: Path,
    tls: ClientTls | None,
    *,
    needs_token: bool,
    env: Mapping[str, str] = os.environ,
) -> tuple[Target, str]:
    """Which referee to call, with which token and TLS, and a line that says where each
    came from: flags first, then the environment (``PUSOY_ADDRESS``, as the kits read it,
    and ``PUSOY_ORGANISER_TOKEN_FILE``, as ``referee serve`` reads it), then what a
    running ``referee serve`` records in ``state_dir``, then the defaults.

    The token a record names is sent only to the address it records: a token is never
    handed to another referee because this folder's one runs."""
    record_path = state_dir / SERVING_FILE
    notes: list[str] = []
    try:
        record = read_serving(state_dir)
    except ServingError as exc:
        record = None
        notes.append(f"{exc}: ignored")
    if record is not None and not record.running():
        notes.append(
            f"{record_path} is stale (referee serve, pid {record.pid}, is no longer running)"
        )
        record = None
    recorded = f"recorded in {record_path}"
    if address:
        where, why = address, "--address"
    elif env.get("PUSOY_ADDRESS"):
        where, why = env["PUSOY_ADDRESS"], "PUSOY_ADDRESS"
    elif record is not None:
        where, why = record.organiser_address, f"{recorded} by referee serve, pid {record.pid}"
    else:
        where, why = DEFAULT_ADDRESS, "the default"
    here = record if record is not None and record.organiser_address == where else None

    flag_or_env = token_file or env.get("PUSOY_ORGANISER_TOKEN_FILE")
    if token_file:
        path, source = Path(token_file), "--token-file"
    elif flag_or_env:
        path, source = Path(flag_or_env), "PUSOY_ORGANISER_TOKEN_FILE"
    elif here is not None:
        path, source = Path(here.token_file), recorded
    else:
        path, source = state_dir / "organiser-token", "the state folder"
    if flag_or_env or here is not None or path.exists():
        try:
            token, hint = read_token(path), f"the token read from {path}"
        except TokenError as exc:
            raise OrganiserError(str(exc)) from None
        said_token = f"the token in {path} ({source})"
    elif needs_token:
        raise OrganiserError(
            f"no organiser token: {path} is absent; give --token-file PATH (the file "
            "`referee serve` names when it starts), or run this where `referee serve` "
            "keeps its state (--state-dir)"
        )
    else:
        token, hint = "", f"no token: give --token-file ({path} is absent)"
        said_token = "no token (none needed)"

    said_tls = "TLS" if tls is not None else "plaintext"
    if tls is None and here is not None and here.tls != "off":
        if here.tls == "mutual":
            raise OrganiserError(
                f"the referee {recorded} serves mutual TLS: give --tls-cert and --tls-key "
                "(and --tls-ca), or PUSOY_TLS_CERT and PUSOY_TLS_KEY"
            )
        tls = ClientTls()
        said_tls = "TLS as recorded, the certificate checked with the system's CAs (--tls-ca)"
    said = f"the referee at {where} ({why}), {said_token}, {said_tls}"
    if notes:
        said += "; " + "; ".join(notes)
    return Target(where, token, tls, token_hint=hint), printable(said)


@contextlib.asynccontextmanager
async def fetch_log(
    stub: match_service_grpc.MatchServiceAsyncStub,
    match_id: str,
    dest: Path,
    max_bytes: int = MAX_FETCHED_LOG_BYTES,
) -> AsyncIterator[FetchedLog]:
    """The match's log, exactly as the referee streams it, in a private temporary file
    (mode 0600) beside ``dest``: ``async with fetch_log(...) as log: ...; log.keep()``.

    Memory holds at most ``WRITE_CHUNK`` bytes of it at a time; past ``max_bytes``, or
    at a line holding a line break, the stream is dropped (``LogStreamTooLarge``,
    ``BadReply``). Raises grpc.aio.AioRpcError as the call fails; the temporary file is
    removed on any error, and whenever ``keep()`` was not called."""
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    log = FetchedLog(Path(name), dest)
    try:
        with os.fdopen(fd, "wb") as out:
            chunk: list[bytes] = []
            held = 0
            stream = stub.GetMatchLog(match_service.GetMatchLogRequest(match_id=match_id))
            try:
                async for item in stream:
                    line = item.line
                    if "\n" in line or "\r" in line:
                        raise BadReply(
                            f"GetMatchLog: line {log.lines + 1} holds a line break: not a log"
                        )
                    data = line.encode("utf-8") + b"\n"
                    log.lines += 1
                    log.size += len(data)
                    if log.size > max_bytes:
                        raise LogStreamTooLarge(
                            f"GetMatchLog: the referee streamed more than {max_bytes} bytes "
                            "for one log, more than a referee writes: not a log"
                        )
                    chunk.append(data)
                    held += len(data)
                    if held >= WRITE_CHUNK:
                        await asyncio.to_thread(out.write, b"".join(chunk))
                        chunk, held = [], 0
            finally:
                stream.cancel()
            await asyncio.to_thread(out.write, b"".join(chunk))
        yield log
    finally:
        if not log.kept:
            with contextlib.suppress(OSError):
                log.partial.unlink()


class Organiser:
    """``async with Organiser(target) as o: await o.create(request)``.

    ``watch_address``: where the referee serves spectators (its bots' listener); when
    given, ``wait_over`` is woken by the match's public events instead of polling, so
    that the end is seen as the bots see it. ``timeout_s``: how long a unary call may
    take before the referee counts as unreachable. Raises OrganiserError for TLS files
    that cannot be used."""

    def __init__(
        self, target: Target, *, watch_address: str = "", timeout_s: float = CALL_TIMEOUT_S
    ) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self._channels: list[grpc.aio.Channel] = []
        self._public: grpc.aio.Channel | None = None
        try:
            if target.token:
                channel = organiser_channel(target.address, target.token, target.tls)
            else:
                channel = client_channel(target.address, target.tls)
            self._channels.append(channel)
            if watch_address:
                public = client_channel(watch_address, target.tls)
                self._channels.append(public)
                self._public = public
        except TlsError as exc:
            raise OrganiserError(str(exc)) from None
        self._stub = match_service_grpc.MatchServiceStub(channel)

    async def __aenter__(self) -> Organiser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close(grace=None)

    def _error(self, call: str, exc: grpc.aio.AioRpcError) -> CallFailed:
        """The one mapping of a failed call to an error for a person (every string the
        referee sent made printable)."""
        code, details = exc.code(), printable(exc.details() or "")
        text = f"{call}: {code.name}: {details}".rstrip(": ")
        if code in UNREACHABLE:
            text = f"cannot reach the referee at {self.target.address} ({text})"
            return Unreachable(text, call, code, details)
        if self.target.token_hint and code in (
            grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.PERMISSION_DENIED,
        ):
            text += f" ({self.target.token_hint})"
        return CallFailed(text, call, code, details)

    async def _unary(self, call: str, reply: Awaitable[T]) -> T:
        """One call's reply, or its refusal as a CallFailed naming the call."""
        try:
            return await reply
        except grpc.aio.AioRpcError as exc:
            raise self._error(call, exc) from None

    async def info(self) -> match_service.GetServerInfoResponse:
        request = match_service.GetServerInfoRequest()
        return await self._unary(
            "GetServerInfo", self._stub.GetServerInfo(request, timeout=self.timeout_s)
        )

    async def create(
        self, request: match_service.CreateMatchRequest
    ) -> match_service.CreateMatchResponse:
        created = await self._unary(
            "CreateMatch", self._stub.CreateMatch(request, timeout=self.timeout_s)
        )
        check_created(created)
        return created

    async def list(
        self, status: common.MatchStatus.ValueType = common.MATCH_STATUS_UNSPECIFIED
    ) -> list[match_service.MatchInfo]:
        request = match_service.ListMatchesRequest(status=status)
        found = await self._unary(
            "ListMatches", self._stub.ListMatches(request, timeout=self.timeout_s)
        )
        return list(found.matches)

    async def get(self, match_id: str) -> match_service.MatchInfo:
        request = match_service.GetMatchRequest(match_id=match_id)
        found = await self._unary("GetMatch", self._stub.GetMatch(request, timeout=self.timeout_s))
        return found.match

    async def cancel(self, match_id: str, reason: str) -> match_service.MatchInfo:
        request = match_service.CancelMatchRequest(match_id=match_id, reason=reason)
        done = await self._unary(
            "CancelMatch", self._stub.CancelMatch(request, timeout=self.timeout_s)
        )
        return done.match

    async def wait_over(
        self, match_id: str, *, patience_s: float = 0.0
    ) -> AsyncIterator[match_service.MatchInfo]:
        """The match as it goes (each change of status, hands or connected seats), until
        it is over; the last one yielded is over.

        GetMatch is asked every POLL_S or, with a ``watch_address``, whenever a public
        event may have changed its answer (and every WATCHED_POLL_S). A look that fails
        is made again for ``patience_s`` (a network hiccup, a referee restarting) before
        its CallFailed is raised; NOT_FOUND is raised at once."""
        loop = asyncio.get_running_loop()
        seen: tuple[object, ...] = ()
        failing_since: float | None = None
        nudge = asyncio.Event()
        follow = None
        if self._public is not None:
            follow = asyncio.create_task(self._follow(self._public, match_id, nudge))
        try:
            while True:
                nudge.clear()  # before the look: an event during it brings another
                try:
                    info = await self.get(match_id)
                except CallFailed as exc:
                    failing_since = loop.time() if failing_since is None else failing_since
                    if exc.code == grpc.StatusCode.NOT_FOUND or (
                        loop.time() - failing_since >= patience_s
                    ):
                        raise
                    await asyncio.sleep(POLL_S)
                    continue
                failing_since = None
                now = (info.status, info.hands_played, tuple(info.connected))
                if now != seen:
                    seen = now
                    yield info
                if info.status in OVER:
                    return
                if follow is None:
                    await asyncio.sleep(POLL_S)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(nudge.wait(), WATCHED_POLL_S)
        finally:
            if follow is not None:
                follow.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await follow

    @staticmethod
    async def _follow(channel: grpc.aio.Channel, match_id: str, nudge: asyncio.Event) -> None:
        """Set ``nudge`` at each public event of the match that may change GetMatch's
        answer, and whenever the stream ends or breaks (it is followed again)."""

        def on_event(_seq: int, event: common.Event) -> None:
            if event.WhichOneof("kind") in CHANGES:
                nudge.set()

        while True:
            await follow_match(channel, match_id, on_event)
            nudge.set()
            await asyncio.sleep(REWATCH_PAUSE_S)

    @contextlib.asynccontextmanager
    async def fetch_log(self, match_id: str, dest: Path) -> AsyncIterator[FetchedLog]:
        """``fetch_log`` with a refusal as a CallFailed naming the call."""
        try:
            async with fetch_log(self._stub, match_id, dest) as log:
                yield log
        except grpc.aio.AioRpcError as exc:
            raise self._error("GetMatchLog", exc) from None
