"""Who a request to the ladder's web comes from: a team's API key (``Authorization:
Bearer``, for scripts) or a browser's session (signed in at ``/team``).

A key is accepted only over TLS or from this machine (or anywhere with ``insecure``),
refused keys are throttled per client address by the ``KeyGuard`` (behind a trusted
proxy, the address it forwards: ``referee.web.forwarded``); a browser's session cookie
holds an HMAC of the team and its key's public id under the web's own secret
(``session_secret``), and its forms carry a CSRF token derived from the session.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

import structlog
from aiohttp import web

from referee.ladder.config import LadderConfig
from referee.ladder.errors import KeyRefused, LadderError, TooManyGuesses
from referee.ladder.storage.keys import KeyGuard
from referee.ladder.storage.records import Team
from referee.ladder.storage.store import LadderStore
from referee.ladder.web import content, pages
from referee.ladder.web.common import html, json_response, loopback, message, off_loop
from referee.web.forwarded import TrustedProxies

log = structlog.get_logger("referee.ladder.web")

SESSION_KEY_FILE = "web-session.key"
COOKIE = "ladder_session"
SIGN_IN_COOKIE = "ladder_signin"
_NONCE = re.compile(r"[0-9a-f]{32}")
MAX_NOTE_CHARS = 300


def session_secret(state_dir: Path) -> bytes:
    """The web's own secret, made once (mode 0600): sessions outlive a restart."""
    path = state_dir / SESSION_KEY_FILE
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
    return path.read_bytes()


def query_string(**values: str) -> str:
    from urllib.parse import urlencode

    return urlencode(values)


class TeamAuth:
    """A team's key or session on a request; the sign-in page, signing in and out."""

    def __init__(
        self,
        config: LadderConfig,
        store: LadderStore,
        guard: KeyGuard,
        *,
        insecure: bool = False,
    ) -> None:
        """``insecure``: keys accepted over plain HTTP from anywhere (behind a TLS proxy
        that is not on this machine, e.g. a container's)."""
        self.config = config
        self.store = store
        self.guard = guard
        self.insecure = insecure
        self.proxies = TrustedProxies(config.trusted_proxies)
        self.secret = session_secret(config.state_dir)

    def key_transport(self, request: web.Request) -> str | None:
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

    def authenticate(self, request: web.Request, key: str) -> Team:
        """The key's team, behind the guard (KeyRefused, TooManyGuesses), its refusals
        counted for the client (behind a trusted proxy, the one it names)."""
        address = self.proxies.client(request).address
        return self.guard.authenticate(self.store.team_by_key, key, address)

    async def bearer(self, request: web.Request) -> Team | web.Response:
        why = self.key_transport(request)
        if why is not None:
            return json_response({"error": why}, 403)
        scheme, _, key = request.headers.get("Authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            return json_response(
                {"error": "give the team's key: Authorization: Bearer pdl_..."}, 401
            )
        try:
            team: Team = await off_loop(lambda: self.authenticate(request, key.strip()))
        except TooManyGuesses as exc:
            return json_response(
                {"error": str(exc)}, 429, {"Retry-After": f"{exc.retry_after:.0f}"}
            )
        except KeyRefused:
            return json_response({"error": "that key opens no team"}, 401)
        return team

    def session_value(self, team: Team) -> str:
        payload = f"{team.name}.{team.key_id}"
        mac = hmac.new(self.secret, b"session\0" + payload.encode(), hashlib.sha256)
        return f"{payload}.{mac.hexdigest()}"

    def csrf(self, session: str) -> str:
        return hmac.new(self.secret, b"csrf\0" + session.encode(), hashlib.sha256).hexdigest()

    def _note_mac(self, session: str, note: str) -> str:
        data = b"note\0" + session.encode() + b"\0" + note.encode()
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()

    def team_url(self, session: str, note: str) -> str:
        """The team page showing ``note``, one of the ladder's own messages: signed for
        this session, so a link of someone else's making shows nothing."""
        note = note[:MAX_NOTE_CHARS]
        return f"/team?{query_string(note=note, mac=self._note_mac(session, note))}"

    def session_team(self, request: web.Request) -> tuple[Team, str] | None:
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
        if team.key_id != key_id or not hmac.compare_digest(value, self.session_value(team)):
            return None
        return team, value

    async def form_session(self, request: web.Request, csrf: str) -> tuple[Team, str] | None:
        signed: tuple[Team, str] | None = await off_loop(lambda: self.session_team(request))
        if signed is None or not self.same_origin(request):
            return None
        if not hmac.compare_digest(csrf, self.csrf(signed[1])):
            return None
        return signed

    def _sign_in_token(self, nonce: str) -> str:
        return hmac.new(self.secret, b"sign-in\0" + nonce.encode(), hashlib.sha256).hexdigest()

    def sign_in(self, request: web.Request, note: str = "", status: int = 200) -> web.Response:
        """The sign-in page, its form's token bound to a random value in this browser's
        sign-in cookie (``SameSite=Strict``: never sent with another site's post), which
        is made the first time."""
        nonce = request.cookies.get(SIGN_IN_COOKIE, "")
        fresh = _NONCE.fullmatch(nonce) is None
        if fresh:
            nonce = secrets.token_hex(16)
        page = pages.sign_in_page(self.config.name, self._sign_in_token(nonce), note)
        response = html(page, status)
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

    def same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None or origin == "null":
            # None: not a browser's cross-site post. "null": what a browser sends under
            # this site's Referrer-Policy: no-referrer; the SameSite=Strict cookie and
            # the form's token still stand.
            return True
        return origin == f"{request.scheme}://{request.host}"

    async def team(self, request: web.Request) -> web.Response:
        signed = await off_loop(lambda: self.session_team(request))
        if signed is None:
            return self.sign_in(request)
        team, session = signed
        data = await off_loop(lambda: content.team_json(self.store, team.name))
        note = request.query.get("note", "")
        mac = request.query.get("mac", "")
        if len(note) > MAX_NOTE_CHARS or not hmac.compare_digest(
            mac.encode(), self._note_mac(session, note).encode()
        ):
            note = ""  # not the ladder's: never shown
        return html(pages.team_page(self.config.name, data, self.csrf(session), note))

    async def login(self, request: web.Request) -> web.Response:
        """The sign-in form's post: this site's form (its token, the sign-in cookie it is
        bound to), then the key. ``Origin: null``, which browsers send under this site's
        ``Referrer-Policy: no-referrer``, says nothing either way: the token decides."""
        why = self.key_transport(request)
        if why is not None:
            return self.sign_in(request, why, 403)
        if not self.same_origin(request):
            return message(self.config.name, 403, "Refused", "A sign-in from another site.")
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
            return self.sign_in(request, note, 403)
        key = key.strip() if isinstance(key, str) else ""
        try:
            team: Team = await off_loop(lambda: self.authenticate(request, key))
        except TooManyGuesses as exc:
            return self.sign_in(request, str(exc), 429)
        except KeyRefused:
            return self.sign_in(request, "That key opens no team.", 401)
        response = web.Response(status=303, headers={"Location": "/team"})
        response.set_cookie(
            COOKIE,
            self.session_value(team),
            path="/",
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )
        response.del_cookie(SIGN_IN_COOKIE, path="/team")
        return response

    async def logout(self, request: web.Request) -> web.Response:
        form = await request.post()
        csrf = form.get("csrf")
        if await self.form_session(request, csrf if isinstance(csrf, str) else "") is None:
            return message(self.config.name, 403, "Refused", "Sign out from your team's page.")
        response = web.Response(status=303, headers={"Location": "/team"})
        response.del_cookie(COOKIE, path="/")
        return response
