"""What the house's two web fronts share: ``referee serve --http`` (``app.py``) and the
ladder's public web (``referee/ladder/web/site.py``). Their security headers, how ``--http``
names the address to listen on, and the pieces of a Server-Sent Events stream (where a
viewer resumes, when it has gone, the server's clock)."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
"""Sent with every response (unless a handler set its own)."""


@web.middleware
async def security_headers(request: web.Request, handler: Any) -> web.StreamResponse:
    response: web.StreamResponse = await handler(request)
    for key, value in HEADERS.items():
        response.headers.setdefault(key, value)
    return response


def listen_address(text: str) -> tuple[str, int]:
    """``--http HOST:PORT`` (``[::1]:8080`` for IPv6, ``:8080`` for loopback) -> host,
    port; OSError, as a listener that cannot start, when it is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise OSError(f"--http wants HOST:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def listen_url(requested: str, port: int, scheme: str = "http") -> str:
    """The URL of a front listening on ``requested`` (``--http``), bound to ``port``."""
    host, _ = listen_address(requested)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


def last_event_id(request: web.Request) -> int:
    """Where a reconnecting viewer's stream resumes (its ``Last-Event-ID``; 0 if none)."""
    text = request.headers.get("Last-Event-ID", "")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else 0


LOOK_S = 1.0
"""How often an idle stream looks whether its viewer has gone (its slot is then free)."""


def viewer_gone(request: web.Request) -> bool:
    """The viewer closed its connection (noticed without writing to it)."""
    transport = request.transport
    return transport is None or transport.is_closing()


def clock_event() -> bytes:
    """The server's time (ms since the epoch), for a page to count a turn's deadline down
    in the server's clock whatever its own says."""
    return f"event: clock\ndata: {time.time_ns() // 1_000_000}\n\n".encode()
