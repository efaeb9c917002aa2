"""The organiser's client of a running ``referee serve``: ``referee organiser``.

A thin layer over the MatchService (docs/protocol.md): every call carries the
organiser's token when one is known, and every refusal or lost connection becomes an
``OrganiserError`` that says which call failed and why, for a person to read. Logs are
fetched whole into a ``.part`` file first, so a broken stream never leaves a log that
looks complete.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import grpc

from referee.protocol import common, match_service, match_service_grpc
from referee.server.auth import organiser_channel
from referee.server.tls import ClientTls, TlsError, client_channel

CALL_TIMEOUT_S = 30.0
"""How long one unary call may take (a referee that does not answer is an error)."""
POLL_S = 0.5
"""Between two looks at a match that is not over yet (``wait_over``)."""
OVER = (common.MATCH_STATUS_FINISHED, common.MATCH_STATUS_CANCELLED)
"""The statuses of a match that is over."""
MAX_TOKEN_BYTES = 4096
T = TypeVar("T")


class OrganiserError(Exception):
    """A call the referee refused, or a referee that cannot be reached."""


def read_token(path: Path, what: str = "organiser token") -> str:
    """A token from its file: the organiser's, as ``referee serve`` keeps it, or a seat's,
    as ``referee organiser create --tokens-dir`` writes it (``what`` names it)."""
    not_one = f"{path} is not {'an' if what[:1] in 'aeiou' else 'a'} {what} file"
    try:
        if not path.is_file() and path.exists():
            raise OrganiserError(f"{not_one} (not a regular file)")
        with path.open("rb") as f:
            raw = f.read(MAX_TOKEN_BYTES + 1)
    except OSError as exc:
        raise OrganiserError(f"cannot read the {what} file {path}: {exc.strerror}") from None
    if len(raw) > MAX_TOKEN_BYTES:
        raise OrganiserError(f"{not_one} (over {MAX_TOKEN_BYTES} bytes)")
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise OrganiserError(f"{not_one} (not ASCII)") from None
    if not token or any(c.isspace() for c in token):
        raise OrganiserError(f"{not_one} (one word expected)")
    return token


@dataclass(frozen=True)
class Target:
    """Which referee, and how to talk to it."""

    address: str
    token: str = ""
    """Empty: only the calls anyone may make (GetMatch, GetServerInfo, finished logs)."""
    tls: ClientTls | None = None
    token_hint: str = ""
    """Said with an UNAUTHENTICATED or PERMISSION_DENIED refusal: where a token comes from."""


async def fetch_log(
    stub: match_service_grpc.MatchServiceAsyncStub, match_id: str, dest: Path
) -> int:
    """The match's log, exactly as the referee streams it, at ``dest``; its line count.
    Written whole to ``dest.part`` first, then renamed into place."""
    lines = stub.GetMatchLog(match_service.GetMatchLogRequest(match_id=match_id))
    text = [f"{item.line}\n" async for item in lines]
    partial = dest.with_name(dest.name + ".part")
    await asyncio.to_thread(partial.write_text, "".join(text), "utf-8")
    os.replace(partial, dest)
    return len(text)


class Organiser:
    """``async with Organiser(target) as o: await o.create(request)``."""

    def __init__(self, target: Target) -> None:
        self.target = target
        try:
            if target.token:
                self._channel = organiser_channel(target.address, target.token, target.tls)
            else:
                self._channel = client_channel(target.address, target.tls)
        except TlsError as exc:
            raise OrganiserError(str(exc)) from None
        self._stub = match_service_grpc.MatchServiceStub(self._channel)

    async def __aenter__(self) -> Organiser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._channel.close(grace=None)

    def _error(self, call: str, exc: grpc.aio.AioRpcError) -> OrganiserError:
        code = exc.code()
        text = f"{call}: {code.name}: {exc.details() or ''}".rstrip(": ")
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            text = f"cannot reach the referee at {self.target.address} ({text})"
        elif self.target.token_hint and code in (
            grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.PERMISSION_DENIED,
        ):
            text += f" ({self.target.token_hint})"
        return OrganiserError(text)

    async def _unary(self, call: str, reply: Awaitable[T]) -> T:
        """One call's reply, or its refusal as an OrganiserError naming the call."""
        try:
            return await reply
        except grpc.aio.AioRpcError as exc:
            raise self._error(call, exc) from None

    async def info(self) -> match_service.GetServerInfoResponse:
        request = match_service.GetServerInfoRequest()
        return await self._unary(
            "GetServerInfo", self._stub.GetServerInfo(request, timeout=CALL_TIMEOUT_S)
        )

    async def create(
        self, request: match_service.CreateMatchRequest
    ) -> match_service.CreateMatchResponse:
        return await self._unary(
            "CreateMatch", self._stub.CreateMatch(request, timeout=CALL_TIMEOUT_S)
        )

    async def list(
        self, status: common.MatchStatus.ValueType = common.MATCH_STATUS_UNSPECIFIED
    ) -> list[match_service.MatchInfo]:
        request = match_service.ListMatchesRequest(status=status)
        found = await self._unary(
            "ListMatches", self._stub.ListMatches(request, timeout=CALL_TIMEOUT_S)
        )
        return list(found.matches)

    async def get(self, match_id: str) -> match_service.MatchInfo:
        request = match_service.GetMatchRequest(match_id=match_id)
        found = await self._unary("GetMatch", self._stub.GetMatch(request, timeout=CALL_TIMEOUT_S))
        return found.match

    async def cancel(self, match_id: str, reason: str) -> match_service.MatchInfo:
        request = match_service.CancelMatchRequest(match_id=match_id, reason=reason)
        done = await self._unary(
            "CancelMatch", self._stub.CancelMatch(request, timeout=CALL_TIMEOUT_S)
        )
        return done.match

    async def wait_over(self, match_id: str) -> AsyncIterator[match_service.MatchInfo]:
        """The match as it goes (each change of status, hands or connected seats), until
        it is over; the last one yielded is over."""
        seen: tuple[object, ...] = ()
        while True:
            info = await self.get(match_id)
            now = (info.status, info.hands_played, tuple(info.connected))
            if now != seen:
                seen = now
                yield info
            if info.status in OVER:
                return
            await asyncio.sleep(POLL_S)

    async def fetch_log(self, match_id: str, dest: Path) -> int:
        return await self._unary("GetMatchLog", fetch_log(self._stub, match_id, dest))
