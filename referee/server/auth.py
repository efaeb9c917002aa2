"""The organiser's authority: one secret token, checked at the edge of the server.

Creating, cancelling and listing matches, and reading the log of a match that is not
over (it holds every hidden card), need the organiser's token, sent by the client as
the metadata ``authorization: Bearer <token>``. Bots and spectators never have it. The
check is an interceptor, so the servicers stay thin; GetMatchLog, which is public once
a match is over, asks the gate itself (``OrganiserGate.authorise``) when it is not.

Without the header a call fails with UNAUTHENTICATED, with a wrong token with
PERMISSION_DENIED; each refusal is counted (``pusoy_referee_organiser_refusals_total``)
and logged, a few lines per cause a minute whoever sends them (the lines left out are
counted on the next one), so that a guesser rotating addresses cannot flood the log.
A server with an organiser listener of its own refuses organiser calls everywhere else,
token or not.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from referee.client.tokens import TokenError, read_token
from referee.files import create_private_file
from referee.server.rpc import Context, Handler, HandlerInterceptor, checked_first
from referee.service.rates import limited_log

if TYPE_CHECKING:
    from referee.server.metrics import Metrics


_SERVICE = "/pusoy.referee.v1.MatchService/"


class Access(enum.Enum):
    PUBLIC = "public"
    ORGANISER = "organiser"
    ORGANISER_WHILE_LIVE = "organiser while the match is live"


ACCESS: dict[str, Access] = {
    _SERVICE + "CreateMatch": Access.ORGANISER,
    _SERVICE + "ListMatches": Access.ORGANISER,
    _SERVICE + "CancelMatch": Access.ORGANISER,
    _SERVICE + "GetMatchLog": Access.ORGANISER_WHILE_LIVE,
    _SERVICE + "GetMatch": Access.PUBLIC,
    _SERVICE + "GetServerInfo": Access.PUBLIC,
}
"""Every MatchService method; any method of any other service is public."""

MIN_TOKEN_CHARS = 16
REFUSAL_LINES_PER_MINUTE = 5
"""Log lines per cause of refusal a minute, over all clients."""


def new_token() -> str:
    return secrets.token_urlsafe(32)


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """The token in ``path``, or a fresh one written there (mode 0600); True when created.

    The file holds the token on one line. A file others can read is refused: the token
    is the organiser's whole authority. Raises TokenError.
    """
    path = Path(path)
    if not path.exists():
        token = new_token()
        try:
            if create_private_file(path, (token + "\n").encode("ascii")):
                return token, True
        except OSError as exc:
            raise TokenError(
                f"cannot create the organiser token file {path}: {exc.strerror}"
            ) from None
        # Another process made it first: read theirs below.
    token = read_token(path, "organiser token", private=True)
    if len(token) < MIN_TOKEN_CHARS:
        raise TokenError(
            f"the organiser token in {path} should be one word of at least "
            f"{MIN_TOKEN_CHARS} characters"
        )
    return token, False


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", errors="replace")).digest()


class OrganiserGate(HandlerInterceptor):
    """Checks the organiser's token on one listener.

    ``here`` is False on the bots' listener of a server whose organiser API has a
    listener of its own: organiser calls are then refused outright.
    """

    def __init__(self, token: str, *, here: bool = True, metrics: Metrics | None = None) -> None:
        self._digest = _digest(token)
        self.here = here
        self.metrics = metrics
        self.log = limited_log("referee.auth", REFUSAL_LINES_PER_MINUTE)

    async def authorise(self, context: Context, method: str) -> None:
        """Return when the caller is the organiser; else abort the call (and log it)."""
        peer = context.peer()
        if not self.here:
            self._refused(peer, method, "wrong_listener")
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                "the organiser API is served on the organiser's own address, not here",
            )
        values = [v for k, v in context.invocation_metadata() or () if k == "authorization"]
        if not values:
            self._refused(peer, method, "no_credential")
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "this call needs the organiser's credential: metadata "
                "'authorization: Bearer <token>'",
            )
        value = values[0] if isinstance(values[0], str) else values[0].decode("latin-1")
        scheme, _, token = value.strip().partition(" ")
        # Both sides hashed first, so the comparison takes the same time for any input.
        good = scheme.lower() == "bearer" and hmac.compare_digest(
            _digest(token.strip()), self._digest
        )
        if len(values) != 1 or not good:
            self._refused(peer, method, "wrong_credential")
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, "the organiser's credential is wrong"
            )

    def _refused(self, peer: str, method: str, why: str) -> None:
        """Count a refusal (``why``: one of metrics.ORGANISER_REFUSALS["grpc"]) and log
        it, a few lines per cause a minute."""
        if self.metrics is not None:
            self.metrics.organiser_refused("grpc", why)
        self.log.warning(why, "organiser call refused", peer=peer, method=method, why=why)

    def wrap(self, method: str, handler: Handler) -> Handler:
        if ACCESS.get(method) is not Access.ORGANISER:
            return handler
        return self._guarded(handler, method.rsplit("/", 1)[-1])

    def _guarded(self, handler: Handler, method: str) -> Handler:
        async def check(_request: Any, context: Context) -> None:
            await self.authorise(context, method)

        guarded = checked_first(handler, check)
        if guarded is None:  # pragma: no cover
            raise TypeError("organiser methods are unary requests")
        return guarded
