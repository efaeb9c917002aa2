"""What the ladder's web site and its team routes share: what a path may name (ASCII
only: ``str.isdigit`` and a regular expression's ``\\d`` take any script's digits), how
an answer is made (a page with the ladder's name, JSON), database calls off the loop."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from referee.ladder.errors import NotFound
from referee.ladder.web import pages

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_MATCH_ID = re.compile(r"L[0-9]{7,12}-[0-9a-f]{1,16}-[0-9]{1,2}")
"""A ladder's match id (``MatchQueue.schedule``), in ASCII (``\\d`` takes any script's digits)."""
_VERSION_ID = re.compile(r"[0-9]{1,12}")
"""A version's id in a path or a form: ASCII digits only (``str.isdigit`` takes others)."""


def valid_ladder_match_id(text: str) -> bool:
    return _MATCH_ID.fullmatch(text) is not None


def valid_version_id(text: str) -> bool:
    return _VERSION_ID.fullmatch(text) is not None


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


async def off_loop(fn: Callable[[], Any]) -> Any:
    """A database call off the event loop."""
    return await asyncio.to_thread(fn)


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(
        data, status=status, headers=headers, dumps=lambda v: json.dumps(v, ensure_ascii=True)
    )


def api(fn: Callable[[web.Request], Any]) -> Handler:
    """A JSON route: ``fn`` runs off the loop; NotFound is a 404 with its words."""

    async def handler(request: web.Request) -> web.StreamResponse:
        try:
            data = await off_loop(lambda: fn(request))
        except NotFound as exc:
            return json_response({"error": str(exc)}, 404)
        return json_response(data)

    return handler


def html(page: str, status: int = 200) -> web.Response:
    return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")


def message(ladder: str, status: int, title: str, text: str) -> web.Response:
    """A page of the ladder's saying ``text``."""
    return html(pages.message_page(ladder, title, text), status)
