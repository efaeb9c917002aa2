"""Who may see the spectators' web pages: anyone (the default), or the organiser only.

Spectating is public by design: with ``--http`` on, the match list, ``/api/matches``,
the live pages and their event streams show live match ids and public events to
anyone who reaches the port (never a hidden card: ``referee.web.feed``). For a closed
event, ``referee serve --http-access organiser`` puts every page behind the organiser's
token:

- a script sends it as ``Authorization: Bearer <token>``, as it does over gRPC;
- a browser signs in once at ``/login``, a form that posts the token (never in a URL,
  where history and proxies would keep it), and gets a session cookie: ``HttpOnly``
  (no script reads it), ``SameSite=Strict`` (no other site's page makes the browser
  send it), ``Path=/``, for the browser's session. The cookie holds an HMAC of the
  token, not the token: it opens these pages and nothing else, and a new token (a new
  ``organiser-token``) ends every session. ``/logout`` forgets it.

A request without a credential is refused with 401 (a page: the sign-in form; the API
and the event streams: a line of text), counted under
``pusoy_referee_organiser_refusals_total{via="web"}`` and logged a few lines a minute per
cause, as refused organiser calls over gRPC are.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
from typing import TYPE_CHECKING, Any

from aiohttp import web

from referee.service.rates import limited_log
from referee.view.index import page_shell
from referee.view.standings import esc

if TYPE_CHECKING:
    from referee.server.metrics import Metrics

COOKIE = "referee_session"
CONTEXT = b"pusoy-referee web session v1"
REFUSAL_LINES_PER_MINUTE = 5
MAX_TOKEN_CHARS = 512
_NEXT = re.compile(r"/[A-Za-z0-9/_.-]{0,200}")
"""Where a sign-in may return to: a path of this server, never another site."""


class HttpAccess(enum.Enum):
    """``referee serve --http-access``."""

    PUBLIC = "public"
    ORGANISER = "organiser"


def session_value(token: str) -> str:
    """The cookie that stands for ``token`` on the web pages (and only there)."""
    mac = hmac.new(token.encode("utf-8"), CONTEXT, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def _same(given: str, expected: str) -> bool:
    """Compared in constant time, both sides hashed first (any length, any text)."""
    a = hashlib.sha256(given.encode("utf-8", "replace")).digest()
    b = hashlib.sha256(expected.encode("utf-8")).digest()
    return hmac.compare_digest(a, b)


def _next_path(text: str) -> str:
    return text if _NEXT.fullmatch(text) and not text.startswith("//") else "/"


class OrganiserOnly:
    """The web front's gate when its pages are the organiser's: a middleware, and the
    sign-in and sign-out routes."""

    def __init__(self, token: str, metrics: Metrics | None = None) -> None:
        self._token = token
        self._session = session_value(token)
        self.metrics = metrics
        self.log = limited_log("referee.web.access", REFUSAL_LINES_PER_MINUTE)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/login", self.login_page)
        app.router.add_post("/login", self.login)
        app.router.add_post("/logout", self.logout)

    def refusal(self, request: web.Request) -> str | None:
        """Why ``request`` may not be served (None: it may)."""
        cookie = request.cookies.get(COOKIE)
        header = request.headers.get("Authorization", "")
        if cookie is None and not header:
            return "no_credential"
        if cookie is not None and _same(cookie, self._session):
            return None
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() == "bearer" and _same(token.strip(), self._token):
            return None
        return "wrong_credential"

    def _refused(self, request: web.Request, why: str) -> None:
        if self.metrics is not None:
            self.metrics.organiser_refused("web", why)
        self.log.warning(
            why, "web request refused", why=why, peer=request.remote or "", path=request.path[:100]
        )

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path in ("/login", "/logout"):
            response: web.StreamResponse = await handler(request)
            return response
        why = self.refusal(request)
        if why is None:
            response = await handler(request)
            return response
        self._refused(request, why)
        if request.path.startswith("/api/") or request.path.endswith("/events"):
            return web.Response(
                status=401,
                text="the organiser's token is needed: 'Authorization: Bearer <token>', "
                "or sign in at /login\n",
                headers={"WWW-Authenticate": 'Bearer realm="referee"'},
            )
        return _sign_in(request.path, wrong=why == "wrong_credential")

    async def login_page(self, request: web.Request) -> web.Response:
        return _sign_in(request.query.get("next", "/"), status=200)

    async def login(self, request: web.Request) -> web.Response:
        form = await request.post()  # at most client_max_size bytes
        token = form.get("token")
        target = _next_path(str(form.get("next", "/")))
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
            token = ""
        if not _same(token.strip(), self._token):
            self._refused(request, "wrong_credential" if token else "no_credential")
            return _sign_in(target, wrong=True)
        response = web.Response(status=303, headers={"Location": target})
        response.set_cookie(
            COOKIE,
            self._session,
            path="/",
            httponly=True,
            samesite="Strict",
            secure=request.secure,  # plain HTTP on loopback; https behind a TLS proxy
        )
        return response

    async def logout(self, request: web.Request) -> web.Response:
        response = web.Response(status=303, headers={"Location": "/login"})
        response.del_cookie(COOKIE, path="/")
        return response


def _sign_in(next_path: str, *, wrong: bool = False, status: int = 401) -> web.Response:
    """The sign-in page: a form that posts the organiser's token to /login."""
    note = (
        '<p class="muted">That is not the organiser\'s token (or it changed since you '
        "signed in).</p>"
        if wrong
        else '<p class="muted">The matches on this server are shown to the organiser only.</p>'
    )
    body = (
        f"<h1>Sign in</h1>{note}"
        '<form method="post" action="/login">'
        "<p><label>Organiser token (the file <code>organiser-token</code> in the referee's "
        'state folder) <input type="password" name="token" autocomplete="current-password" '
        "required></label></p>"
        f'<input type="hidden" name="next" value="{esc(_next_path(next_path))}">'
        '<p><button type="submit">Sign in</button></p></form>'
    )
    page = page_shell("Sign in", body, form_action="'self'")
    return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")
