"""The teams' side of the ladder's web (``referee.ladder.web``): API keys, browser
sessions, uploads and a team's own bots' output. ``LadderWeb`` is built on ``TeamSide``,
which keeps here what only a team may do; the public pages stay in ``web.py``.

A key is accepted only over TLS or from this machine (or anywhere with ``insecure``),
refused keys are throttled per client address by the ``KeyGuard`` (behind a trusted
proxy, the address it forwards: ``referee.web.forwarded``); a browser's session cookie
holds an HMAC of the team and its key's public id under the web's own secret, and its
forms carry a CSRF token derived from the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import ipaddress
import json
import os
import re
import secrets
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
from aiohttp import BodyPartReader, web
from sqlalchemy import select

from referee.ladder import api, pages
from referee.ladder.config import LadderConfig
from referee.ladder.errors import (
    Conflict,
    KeyRefused,
    LadderError,
    NotFound,
    QuotaExceeded,
    TooManyGuesses,
)
from referee.ladder.keys import KeyGuard
from referee.ladder.schema import (
    bots,
    match_seats,
    seat_results,
    versions,
)
from referee.ladder.store import LadderStore, check_name
from referee.ladder.submit import submit
from referee.ladder.types import Team
from referee.table.output import tail_bytes
from referee.web.forwarded import TrustedProxies

log = structlog.get_logger("referee.ladder.web")

COOKIE = "ladder_session"
SIGN_IN_COOKIE = "ladder_signin"
_NONCE = re.compile(r"[0-9a-f]{32}")
MAX_STDERR_BYTES = 1 << 20
MAX_NOTE_CHARS = 300
FORM_SLACK_BYTES = 64 * 1024
"""An upload's body past its archive: the multipart framing and the small fields."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclasses.dataclass(frozen=True, slots=True)
class UploadRefused:
    """An upload refused before its body is read: the HTTP status and why."""

    status: int
    why: str
    retry_after: float = 0.0


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_MATCH_ID = re.compile(r"L[0-9]{7,12}-[0-9a-f]{1,16}-[0-9]{1,2}")
"""A ladder's match id (``MatchQueue.schedule``), in ASCII (``\\d`` takes any script's digits)."""
_VERSION_ID = re.compile(r"[0-9]{1,12}")
"""A version's id in a path or a form: ASCII digits only (``str.isdigit`` takes others)."""


def valid_match_id(text: str) -> bool:
    return _MATCH_ID.fullmatch(text) is not None


def valid_version_id(text: str) -> bool:
    return _VERSION_ID.fullmatch(text) is not None


def query_string(**values: str) -> str:
    from urllib.parse import urlencode

    return urlencode(values)


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(
        data, status=status, headers=headers, dumps=lambda v: json.dumps(v, ensure_ascii=True)
    )


class TeamSide:
    """What a team may do on the ladder's web, behind its key or its session."""

    config: LadderConfig
    store: LadderStore
    guard: KeyGuard
    proxies: TrustedProxies
    secret: bytes
    insecure: bool
    _receiving: dict[str, int]
    """Team -> its uploads being received now (``_start_upload``)."""
    _receiving_bytes: dict[str, int]

    # -- plumbing -------------------------------------------------------------------------

    async def _db(self, fn: Callable[[], Any]) -> Any:
        """A database call off the event loop."""
        return await asyncio.to_thread(fn)

    def api(self, fn: Callable[[web.Request], Any]) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            try:
                data = await self._db(lambda: fn(request))
            except NotFound as exc:
                return json_response({"error": str(exc)}, 404)
            return json_response(data)

        return handler

    def _html(self, page: str, status: int = 200) -> web.Response:
        return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")

    def _message(self, status: int, title: str, text: str) -> web.Response:
        return self._html(pages.message_page(self.config.name, title, text), status)

    # -- keys and sessions --------------------------------------------------------------

    def _key_transport(self, request: web.Request) -> str | None:
        """Why a key may not be sent on this request (None: it may): never in clear
        over a network. Behind a trusted proxy, its word on the client's scheme and
        address counts; a proxy on this machine that says nothing counts as this machine."""
        if self.insecure:
            return None
        client = self.proxies.client(request)
        if client.secure or client.loopback:
            return None
        if client.secure is None and (request.secure or loopback(request.remote or "")):
            return None
        return "a key is accepted only over https (or from this machine)"

    def _authenticate(self, request: web.Request, key: str) -> Team:
        """The key's team, behind the guard (KeyRefused, TooManyGuesses), its refusals
        counted for the client (behind a trusted proxy, the one it names)."""
        address = self.proxies.client(request).address
        return self.guard.authenticate(self.store.team_by_key, key, address)

    async def _bearer(self, request: web.Request) -> Team | web.Response:
        why = self._key_transport(request)
        if why is not None:
            return json_response({"error": why}, 403)
        scheme, _, key = request.headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            return json_response(
                {"error": "give the team's key: Authorization: Bearer pdl_..."}, 401
            )
        try:
            team: Team = await self._db(lambda: self._authenticate(request, key.strip()))
        except TooManyGuesses as exc:
            return json_response(
                {"error": str(exc)}, 429, {"Retry-After": f"{exc.retry_after:.0f}"}
            )
        except KeyRefused:
            return json_response({"error": "that key opens no team"}, 401)
        return team

    def _session_value(self, team: Team) -> str:
        payload = f"{team.name}.{team.key_id}"
        mac = hmac.new(self.secret, b"session\0" + payload.encode(), hashlib.sha256)
        return f"{payload}.{mac.hexdigest()}"

    def _csrf(self, session: str) -> str:
        return hmac.new(self.secret, b"csrf\0" + session.encode(), hashlib.sha256).hexdigest()

    def _note_mac(self, session: str, note: str) -> str:
        data = b"note\0" + session.encode() + b"\0" + note.encode()
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()

    def _team_url(self, session: str, note: str) -> str:
        """The team page showing ``note``, one of the ladder's own messages: signed for
        this session, so a link of someone else's making shows nothing."""
        note = note[:MAX_NOTE_CHARS]
        return f"/team?{query_string(note=note, mac=self._note_mac(session, note))}"

    def _session_team(self, request: web.Request) -> tuple[Team, str] | None:
        """The signed-in team and its session value, if the cookie is good and its key
        has not changed since."""
        value = request.cookies.get(COOKIE, "")
        parts = value.split(".")
        if len(parts) != 3 or len(value) > 200:
            return None
        name, key_id, _ = parts
        try:
            team = self.store.team(name)
        except LadderError:
            return None
        if team.key_id != key_id or not hmac.compare_digest(value, self._session_value(team)):
            return None
        return team, value

    def _sign_in_token(self, nonce: str) -> str:
        return hmac.new(self.secret, b"sign-in\0" + nonce.encode(), hashlib.sha256).hexdigest()

    def _sign_in(self, request: web.Request, note: str = "", status: int = 200) -> web.Response:
        """The sign-in page, its form's token bound to a random value in this browser's
        sign-in cookie (``SameSite=Strict``: never sent with another site's post), which
        is made the first time."""
        nonce = request.cookies.get(SIGN_IN_COOKIE, "")
        fresh = _NONCE.fullmatch(nonce) is None
        if fresh:
            nonce = secrets.token_hex(16)
        page = pages.sign_in_page(self.config.name, self._sign_in_token(nonce), note)
        response = self._html(page, status)
        if fresh:
            response.set_cookie(
                SIGN_IN_COOKIE,
                nonce,
                path="/team",
                httponly=True,
                samesite="Strict",
                secure=request.secure,
            )
        return response

    def _same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None or origin == "null":
            # None: not a browser's cross-site post. "null": what a browser sends under
            # this site's Referrer-Policy: no-referrer; the SameSite=Strict cookie and
            # the form's token still stand.
            return True
        return origin == f"{request.scheme}://{request.host}"

    async def team(self, request: web.Request) -> web.Response:
        signed = await self._db(lambda: self._session_team(request))
        if signed is None:
            return self._sign_in(request)
        team, session = signed
        data = await self._db(lambda: api.team_json(self.store, team.name))
        note = request.query.get("note", "")
        mac = request.query.get("mac", "")
        if len(note) > MAX_NOTE_CHARS or not hmac.compare_digest(
            mac.encode(), self._note_mac(session, note).encode()
        ):
            note = ""  # not the ladder's: never shown
        return self._html(pages.team_page(self.config.name, data, self._csrf(session), note))

    async def login(self, request: web.Request) -> web.Response:
        """The sign-in form's post: this site's form (its token, the sign-in cookie it is
        bound to), then the key. ``Origin: null``, which browsers send under this site's
        ``Referrer-Policy: no-referrer``, says nothing either way: the token decides."""
        why = self._key_transport(request)
        if why is not None:
            return self._sign_in(request, why, 403)
        if not self._same_origin(request):
            return self._message(403, "Refused", "A sign-in from another site.")
        form = await request.post()
        token, key = form.get("token"), form.get("key")
        nonce = request.cookies.get(SIGN_IN_COOKIE, "")
        if (
            not isinstance(token, str)
            or _NONCE.fullmatch(nonce) is None
            or not hmac.compare_digest(token.encode(), self._sign_in_token(nonce).encode())
        ):
            log.info("sign-in without this site's form token", address=request.remote)
            note = "This sign-in did not come from this site's form: sign in here."
            return self._sign_in(request, note, 403)
        key = key.strip() if isinstance(key, str) else ""
        try:
            team: Team = await self._db(lambda: self._authenticate(request, key))
        except TooManyGuesses as exc:
            return self._sign_in(request, str(exc), 429)
        except KeyRefused:
            return self._sign_in(request, "That key opens no team.", 401)
        response = web.Response(status=303, headers={"Location": "/team"})
        response.set_cookie(
            COOKIE,
            self._session_value(team),
            path="/",
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )
        response.del_cookie(SIGN_IN_COOKIE, path="/team")
        return response

    async def _form_session(self, request: web.Request, csrf: str) -> tuple[Team, str] | None:
        signed: tuple[Team, str] | None = await self._db(lambda: self._session_team(request))
        if signed is None or not self._same_origin(request):
            return None
        if not hmac.compare_digest(csrf, self._csrf(signed[1])):
            return None
        return signed

    async def logout(self, request: web.Request) -> web.Response:
        form = await request.post()
        csrf = form.get("csrf")
        if await self._form_session(request, csrf if isinstance(csrf, str) else "") is None:
            return self._message(403, "Refused", "Sign out from your team's page.")
        response = web.Response(status=303, headers={"Location": "/team"})
        response.del_cookie(COOKIE, path="/")
        return response

    async def stderr(self, request: web.Request) -> web.StreamResponse:
        signed = await self._db(lambda: self._session_team(request))
        if signed is None:
            return web.Response(status=401, text="sign in at /team first\n")
        match_id, seat = request.match_info["match_id"], request.match_info["seat"]
        if not valid_match_id(match_id) or seat not in ("0", "1", "2", "3"):
            return web.Response(status=404, text="no such output\n")
        team = signed[0]

        def find() -> str | None:
            with self.store.reading() as conn:
                row = conn.execute(
                    select(seat_results.c.stderr_path)
                    .select_from(
                        seat_results.join(
                            match_seats,
                            (match_seats.c.match_id == seat_results.c.match_id)
                            & (match_seats.c.seat == seat_results.c.seat),
                        )
                        .join(versions, versions.c.id == match_seats.c.version_id)
                        .join(bots)
                    )
                    .where(seat_results.c.match_id == match_id, seat_results.c.seat == int(seat))
                    .where(bots.c.team_id == team.id)
                ).first()
            return str(row.stderr_path) if row is not None and row.stderr_path else None

        rel = await self._db(find)
        if rel is None:
            return web.Response(status=404, text="no such output of your team's\n")
        path = (self.config.folder / rel).resolve()
        if self.config.stderr_dir.resolve() not in path.parents:
            return web.Response(status=404, text="no such output\n")
        data = await asyncio.to_thread(tail_bytes, path, MAX_STDERR_BYTES)
        return web.Response(
            body=data, content_type="text/plain", charset="utf-8",
            headers={"Content-Disposition": "inline"},
        )  # fmt: skip

    # -- uploads -----------------------------------------------------------------------

    async def _start_upload(self, team: Team, request: web.Request) -> int | UploadRefused:
        """Whether the team's upload may be received now, decided before a byte of its
        body is read: its declared size, the uploads being received (the team's and
        everyone's), the team's uploads this hour and its disk. The bytes it may take,
        its slot taken (give it back with ``_end_upload``), or why not."""
        limit = self.config.archive_limits.max_archive_bytes
        length = request.content_length
        if length is not None and length > limit + FORM_SLACK_BYTES:
            return UploadRefused(413, f"the archive is over {limit} bytes")
        mine = self._receiving.get(team.name, 0)
        if mine >= self.config.team_uploads_at_once:
            why = f"{mine} uploads of your team are being received: wait for them"
            return UploadRefused(429, why, 5)
        if sum(self._receiving.values()) >= self.config.uploads_at_once:
            why = "the ladder is receiving too many uploads: try again in a moment"
            return UploadRefused(503, why, 5)
        size = min(length, limit) if length is not None else limit
        in_flight_bytes = self._receiving_bytes.get(team.name, 0)
        self._receiving[team.name] = mine + 1  # taken before the database is asked
        self._receiving_bytes[team.name] = in_flight_bytes + size
        try:
            await self._db(
                lambda: self.store.check_upload(
                    team.name,
                    size,
                    self.config.team_limits,
                    in_flight=mine,
                    in_flight_bytes=in_flight_bytes,
                )
            )
        except QuotaExceeded as exc:
            self._end_upload(team, size)
            if exc.retry_after is None:
                return UploadRefused(413, str(exc))
            return UploadRefused(429, str(exc), exc.retry_after)
        except LadderError as exc:
            self._end_upload(team, size)
            return UploadRefused(403, str(exc))
        return size

    def _end_upload(self, team: Team, size: int) -> None:
        self._receiving[team.name] -= 1
        self._receiving_bytes[team.name] -= size
        if self._receiving[team.name] <= 0:
            del self._receiving[team.name], self._receiving_bytes[team.name]

    async def _receive(
        self, request: web.Request, csrf: str | None
    ) -> tuple[dict[str, str], Path | None, str]:
        """The multipart fields (small) and the archive, streamed to a private file no
        larger than the limit; an error text instead when the request is not one.
        ``csrf``: the form's token, which must come, and be right, before the file (so a
        forged form writes nothing); None for the API (a key, no cookie)."""
        limit = self.config.archive_limits.max_archive_bytes
        fields: dict[str, str] = {}
        archive: Path | None = None
        try:
            reader = await request.multipart()
        except (AssertionError, ValueError, KeyError):
            return fields, None, "send multipart/form-data with bot and archive"
        scratch = self.config.work_dir / "uploads"
        scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            while True:
                part = await reader.next()
                if part is None:
                    break
                if not isinstance(part, BodyPartReader):
                    return fields, archive, "nested multipart is not accepted"
                if part.name == "archive":
                    if archive is not None:
                        return fields, archive, "one archive per upload"
                    if csrf is not None and not hmac.compare_digest(
                        fields.get("csrf", ""), csrf
                    ):  # checked before a byte of the file is written
                        return fields, archive, "the form's token must come before the file"
                    fd, name = tempfile.mkstemp(dir=scratch, suffix=".upload")
                    archive = Path(name)
                    size = 0
                    with os.fdopen(fd, "wb") as out:
                        while chunk := await part.read_chunk(1 << 16):
                            size += len(chunk)
                            if size > limit:
                                return fields, archive, f"the archive is over {limit} bytes"
                            out.write(chunk)
                elif part.name in ("bot", "csrf") and part.name not in fields:
                    data = await part.read_chunk(256)
                    if not part.at_eof():
                        return fields, archive, f"the field {part.name} is too long"
                    fields[part.name] = data.decode("utf-8", "replace").strip()
                else:
                    return fields, archive, "unknown field (send bot and archive)"
        except ValueError as exc:
            return fields, archive, f"not a form: {exc}"
        if archive is None or "bot" not in fields:
            return fields, archive, "send both bot and archive"
        return fields, archive, ""

    async def _submit(self, team: Team, bot: str, archive: Path) -> dict[str, Any]:
        try:
            check_name("bot", bot)
            version = await self._db(
                lambda: submit(self.store, self.config, team.name, bot, archive)
            )
        except LadderError as exc:
            return {"error": str(exc)}
        log.info("version uploaded", version=version.label)
        return api.version_json(version)

    async def api_upload(self, request: web.Request) -> web.Response:
        who = await self._bearer(request)
        if isinstance(who, web.Response):
            return who
        slot = await self._start_upload(who, request)
        if isinstance(slot, UploadRefused):
            headers = {"Retry-After": f"{slot.retry_after:.0f}"} if slot.retry_after else None
            return json_response({"error": slot.why}, slot.status, headers)
        archive: Path | None = None
        try:
            fields, archive, error = await self._receive(request, csrf=None)
            if error:
                return json_response({"error": error}, 413 if "over" in error else 400)
            assert archive is not None
            answer = await self._submit(who, fields["bot"], archive)
        finally:
            if archive is not None:
                archive.unlink(missing_ok=True)
            self._end_upload(who, slot)
        return json_response(answer, 400 if "error" in answer else 201)

    async def upload_form(self, request: web.Request) -> web.Response:
        signed = await self._db(lambda: self._session_team(request))
        if signed is None or not self._same_origin(request):
            return self._message(403, "Refused", "Upload from your team's page, signed in.")
        team, session = signed
        slot = await self._start_upload(team, request)
        if isinstance(slot, UploadRefused):
            raise web.HTTPSeeOther(self._team_url(session, f"Refused: {slot.why}"))
        archive: Path | None = None
        try:
            fields, archive, error = await self._receive(request, csrf=self._csrf(session))
            if not hmac.compare_digest(fields.get("csrf", ""), self._csrf(session)):
                return self._message(403, "Refused", "The form's token is missing or stale.")
            if error:
                note = error
            else:
                assert archive is not None
                answer = await self._submit(team, fields["bot"], archive)
                note = (
                    f"Refused: {answer['error']}"
                    if "error" in answer
                    else f"{answer['label']} uploaded: it plays its validation match first."
                )
        finally:
            if archive is not None:
                archive.unlink(missing_ok=True)
            self._end_upload(team, slot)
        raise web.HTTPSeeOther(self._team_url(session, note))

    async def api_team(self, request: web.Request) -> web.Response:
        who = await self._bearer(request)
        if isinstance(who, web.Response):
            return who
        return json_response(await self._db(lambda: api.team_json(self.store, who.name)))

    # -- retiring a version -------------------------------------------------------------

    async def _retire(self, team: Team, version_text: str, reason: str) -> tuple[int, Any]:
        """Retire one of ``team``'s versions: (HTTP status, the version's JSON or an
        error text). Another team's version reads as a missing one."""
        if not valid_version_id(version_text):
            return 404, "no such version"
        try:
            version = await self._db(
                lambda: self.store.retire(
                    int(version_text), reason or "retired by its team", team=team.name
                )
            )
        except NotFound as exc:
            return 404, str(exc)
        except Conflict as exc:
            return 409, str(exc)
        except LadderError as exc:
            return 400, str(exc)
        log.info("version retired", version=version.label, by="team")
        return 200, api.version_json(version)

    async def api_retire(self, request: web.Request) -> web.Response:
        """``POST /api/versions/{id}/retire``, with an optional JSON body
        ``{"reason": "..."}``."""
        who = await self._bearer(request)
        if isinstance(who, web.Response):
            return who
        reason = ""
        body = await request.read()  # at most the app's client_max_size
        if body.strip():
            try:
                data = json.loads(body)
            except (ValueError, RecursionError):  # not JSON; nested past the parser
                return json_response({"error": 'send no body, or JSON {"reason": "..."}'}, 400)
            if not isinstance(data, dict) or set(data) - {"reason"}:
                return json_response({"error": 'send no body, or JSON {"reason": "..."}'}, 400)
            if not isinstance(data.get("reason", ""), str):
                return json_response({"error": "the reason is a string"}, 400)
            reason = data.get("reason", "")
        status, answer = await self._retire(who, request.match_info["id"], reason)
        return json_response(answer if status == 200 else {"error": answer}, status)

    async def retire_form(self, request: web.Request) -> web.Response:
        """The team page's retire button: signed in, same origin, the form's token."""
        form = await request.post()
        fields = {k: form.get(k) for k in ("csrf", "version", "reason")}
        text = {k: v if isinstance(v, str) else "" for k, v in fields.items()}
        signed = await self._form_session(request, text["csrf"])
        if signed is None:
            return self._message(403, "Refused", "Retire from your team's page, signed in.")
        status, answer = await self._retire(signed[0], text["version"], text["reason"])
        note = (
            f"{answer['label']} retired: its queued matches are cancelled, its history stays."
            if status == 200
            else f"Refused: {answer}"
        )
        raise web.HTTPSeeOther(self._team_url(signed[1], note))
