"""What the spectators' web server says about requests it could not serve.

aiohttp logs every request that does not parse (a port scan, a TLS hello on the plaintext
port, a header too long) with a ten-line traceback: 2,000 such requests wrote 1.3 MB to
the server's log, and a real problem drowned in them. The web front gives aiohttp this
logger instead: a request that does not parse is one structured line for its cause, a
few lines per cause a minute whoever sends them, and a count
(``pusoy_referee_malformed_requests_total{listener="http", cause=...}``). A failure of a
page's own code is still logged with its traceback, at the same bounded rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import http_exceptions as bad

from referee.service.rates import limited_log
from referee.text import printable

if TYPE_CHECKING:
    from referee.server.metrics import Metrics

LINES_PER_MINUTE = 5
"""Log lines per cause a minute, over all clients."""

CAUSES: tuple[tuple[type[bad.HttpProcessingError], str], ...] = (
    (bad.BadHttpMethod, "bad_method"),  # before BadStatusLine, its base
    (bad.BadStatusLine, "bad_request_line"),
    (bad.LineTooLong, "line_too_long"),
    (bad.InvalidURLError, "bad_url"),
    (bad.InvalidHeader, "bad_header"),
    (bad.PayloadEncodingError, "bad_body"),
    (bad.HttpProcessingError, "bad_message"),
)
"""aiohttp's parser errors, most specific first, and the cause each is counted under
(the labels of ``metrics.MALFORMED_CAUSES["http"]``)."""


def cause_of(exc: BaseException) -> str | None:
    """The cause a parser error is counted under; None for any other exception.

    >>> cause_of(bad.LineTooLong(b"...", 8190)), cause_of(bad.BadHttpMethod("\\x16\\x03"))
    ('line_too_long', 'bad_method')
    >>> cause_of(ValueError("a bug")) is None
    True
    """
    for kind, cause in CAUSES:
        if isinstance(exc, kind):
            return cause
    return None


class RequestErrors:
    """The ``logger`` of aiohttp's request handler (it calls ``debug`` and ``exception``
    only, with the exception as ``exc_info``)."""

    def __init__(self, metrics: Metrics | None = None) -> None:
        self.metrics = metrics
        self.log = limited_log("referee.web", LINES_PER_MINUTE)

    def _request_error(self, exc: BaseException | None) -> bool:
        """Count and log a request that does not parse; False for anything else."""
        cause = cause_of(exc) if exc is not None else None
        if cause is None:
            return False
        if self.metrics is not None:
            self.metrics.malformed_request("http", cause)
        message = str(getattr(exc, "message", "") or type(exc).__name__)
        detail = printable(message[:200])  # it quotes what the client sent
        self.log.warning(cause, "malformed http request", cause=cause, detail=detail)
        return True

    def exception(self, msg: str, *args: Any, exc_info: Any = None, **_: Any) -> None:
        exc = exc_info if isinstance(exc_info, BaseException) else None
        if self._request_error(exc):
            return
        name = type(exc).__name__ if exc is not None else "error"
        detail = printable(((msg % args) if args else msg)[:200])
        self.log.warning(name, "web request failed", detail=detail, exc_info=exc)

    def debug(self, msg: str, *args: Any, exc_info: Any = None, **_: Any) -> None:
        """aiohttp logs a bad method on a connection's first request here (non-HTTP
        traffic); other debug lines are dropped."""
        exc = exc_info if isinstance(exc_info, BaseException) else None
        self._request_error(exc)

    def warning(self, msg: str, *args: Any, **_: Any) -> None:  # not called by aiohttp today
        detail = printable(((msg % args) if args else msg)[:200])
        self.log.warning("warning", "web server warning", detail=detail)

    error = warning
    info = debug
