"""``referee serve --http``: web pages for spectators, next to the gRPC server.

aiohttp runs on the same event loop as grpc.aio: one process, no second server to install,
a maintained asyncio library whose server, streaming responses and test client come in
one package. Pages:

- ``/``: the matches the server holds (running and finished), kept up to date from
  ``/events``, a stream of the list as it changes (one shared task looks at the registry
  each second while anyone watches, and each watcher counts as a live viewer);
- ``/matches/ID``: a running match's live view (the viewer page fed by
  ``/matches/ID/events``, a stream of Server-Sent Events carrying the viewer's ops folded
  from the public events), or a redirect to the replay once the match is over;
- ``/matches/ID/replay``: the full replay (``referee view``'s page) of a match that is over.

Only public information is served, to anyone: spectating is public by design (or, with
``--http-access organiser``, to the organiser only: ``access.py``). Every resource is
bounded: open connections (past the limit a connection gets 503 and is closed), live
viewers per match and in all, how long a write to a viewer may wait (then it is cut
off), replay pages built at once (in a worker thread, so the event loop and the matches
it runs never wait for one) and kept in a small cache. A request that does not parse is
a few log lines per cause a minute, not a traceback each (``errors.py``). A match's
events are folded once for all its viewers (``MatchChannel``), so a viewer adds no work
per event and no buffer of its own.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import web

from referee.log.reader import LogTooLarge
from referee.view.index import page_shell
from referee.view.page import live_page as viewer_live_page
from referee.view.page import replay_page
from referee.view.standings import esc
from referee.web.access import OrganiserOnly
from referee.web.channels import LiveChannels, send_live, woken
from referee.web.common import (
    LOOK_S,
    last_event_id,
    listen_address,
    listen_url,
    security_headers,
    viewer_gone,
)
from referee.web.errors import RequestErrors
from referee.web.feed import (
    MatchFacts,
    NoSuchMatch,
    PublicFeed,
    valid_match_id,
)

if TYPE_CHECKING:
    from referee.server.metrics import Metrics

log = structlog.get_logger("referee.web")


@dataclasses.dataclass(frozen=True, slots=True)
class WebLimits:
    """The web front's bounds; each is a ``referee serve`` option."""

    max_connections: int = 256
    """Open HTTP connections at once; more are answered 503 and closed."""
    max_viewers: int = 200
    """Live event streams at once, all matches together."""
    max_viewers_per_match: int = 50
    """Live event streams of one match."""
    max_backlog: int = 4096
    """Events that may wait for a match's feed task before the server cuts it off
    (viewers share one feed per match and keep no buffer of their own)."""
    write_timeout_s: float = 10.0
    """How long one write to a viewer may wait for the network."""
    heartbeat_s: float = 15.0
    """A comment line on an idle stream, so a dead connection is noticed."""
    keepalive_s: float = 15.0
    """How long an idle keep-alive connection is held open."""
    replay_builds: int = 1
    """Replay pages built at once (each folds and verifies a log)."""
    replay_cache: int = 16
    """Replay pages kept in memory."""
    list_poll_s: float = 1.0
    """How often the match list is looked at while someone watches it."""


LIST = ""
"""The match list's key among the viewers (no match has an empty id)."""


_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 38\r\n"
    b"Retry-After: 5\r\nConnection: close\r\n\r\ntoo many connections; try again later\n"
)


class _Busy(asyncio.Protocol):
    """Answers a connection past the limit with 503 and closes it."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_BUSY)
        transport.close()


class WebFront:
    """The spectators' web server: ``await start()``, then ``await stop()``."""

    def __init__(
        self,
        feed: PublicFeed,
        address: str,
        limits: WebLimits | None = None,
        *,
        metrics: Metrics | None = None,
        access: OrganiserOnly | None = None,
    ) -> None:
        """``metrics``: where malformed requests are counted (the server's). ``access``:
        every page behind the organiser's token (None: public, the default)."""
        self.feed = feed
        self.requested = address
        self.limits = limits or WebLimits()
        self.live = LiveChannels()
        self.viewers = self.live.viewers
        self._builds = asyncio.Semaphore(self.limits.replay_builds)
        self._pages: collections.OrderedDict[tuple[str, int, int], str] = collections.OrderedDict()
        self._streams: set[asyncio.Task[Any]] = set()
        self._list: ListChannel | None = None
        middlewares = [security_headers] + ([access.middleware] if access else [])
        app = web.Application(middlewares=middlewares, client_max_size=1024)
        if access is not None:
            access.add_routes(app)
        app.router.add_get("/", self.index)
        app.router.add_get("/events", self.list_events)
        app.router.add_get("/api/matches", self.api_matches)
        app.router.add_get("/matches/{match_id}", self.match)
        app.router.add_get("/matches/{match_id}/events", self.events)
        app.router.add_get("/matches/{match_id}/replay", self.replay)
        self.runner = web.AppRunner(
            app,
            access_log=None,
            keepalive_timeout=self.limits.keepalive_s,
            shutdown_timeout=1.0,
            logger=RequestErrors(metrics),  # a line per cause, not a traceback per request
        )
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return listen_url(self.requested, self.port)

    async def start(self) -> None:
        """Listen; OSError when the address cannot be used."""
        host, port = listen_address(self.requested)
        await self.runner.setup()
        handler = self.runner.server
        assert handler is not None
        limit = self.limits.max_connections

        def factory() -> asyncio.Protocol:
            if len(handler.connections) >= limit:
                return _Busy()
            return handler()

        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(factory, host, port, reuse_address=True)
        except OSError as exc:
            await self.runner.cleanup()
            raise OSError(f"cannot listen on {self.requested} for --http: {exc.strerror}") from exc
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("web front serving", url=self.url)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._streams):
            task.cancel()
        self.live.close()
        if self._list is not None:
            self._list.close()
        await self.runner.cleanup()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # -- pages ----------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        matches = self.feed.list_matches()
        rows = "".join(_list_row(m) for m in matches)
        running = sum(1 for m in matches if not m.over)
        body = (
            f'<header><h1>Matches</h1><p class="muted" id="list-status">{running} running, '
            f'{len(matches) - running} over.</p><p class="muted small">A running match opens '
            "live; a finished one opens its full replay. This list follows the server as "
            'matches start and end.</p></header><section class="card"><div class="scroll">'
            '<table class="live-list"><thead><tr><th>match</th><th>status</th><th>profile</th>'
            '<th>seats</th><th>hands</th><th>totals</th></tr></thead><tbody id="live-matches" '
            f'data-events="/events">{rows}</tbody></table></div><p class="muted" id="no-match"'
            f"{' hidden' if rows else ''}>No match yet.</p></section>"
        )
        return _html(
            page_shell("Matches", body, scripts=("live.js", "matches.js"), connect="'self'")
        )

    async def api_matches(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"matches": [_facts_json(m) for m in self.feed.list_matches()]},
            dumps=lambda v: json.dumps(v, ensure_ascii=True),
        )

    async def match(self, request: web.Request) -> web.StreamResponse:
        match_id = request.match_info["match_id"]
        facts = self.feed.facts(match_id)
        if facts is None:
            return _not_found(match_id)
        if facts.over:
            raise web.HTTPFound(f"/matches/{match_id}/replay")
        page = viewer_live_page(
            match_id, f"/matches/{match_id}/events", f"/matches/{match_id}/replay"
        )
        return _html(page)

    async def replay(self, request: web.Request) -> web.StreamResponse:
        match_id = request.match_info["match_id"]
        facts = self.feed.facts(match_id)
        if facts is None:
            return _not_found(match_id)
        path = self.feed.finished_log(match_id)
        if path is None:
            raise web.HTTPFound(f"/matches/{match_id}")
        try:
            page = await self._replay_page(path)
        except LogTooLarge as exc:
            return _message(413, "Too large", str(exc).replace(str(path), "the log"))
        except OSError:
            return _message(500, "Unreadable", "The match's log cannot be read.")
        return _html(page)

    async def _replay_page(self, path: Path) -> str:
        stat = await asyncio.to_thread(path.stat)
        key = (path.name, stat.st_size, stat.st_mtime_ns)
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
            return page
        async with self._builds:
            page = self._pages.get(key)
            if page is None:
                page = await asyncio.to_thread(replay_page, path)
                self._pages[key] = page
                while len(self._pages) > self.limits.replay_cache:
                    self._pages.popitem(last=False)
        return page

    # -- the live event stream --------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        match_id = request.match_info["match_id"]
        if not valid_match_id(match_id) or self.feed.facts(match_id) is None:
            return _not_found(match_id)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        refusal = ""
        if self.live.total >= self.limits.max_viewers:
            refusal = "this server has as many live viewers as it serves; try again later"
        elif self.viewers[match_id] >= self.limits.max_viewers_per_match:
            refusal = "this match has as many live viewers as it takes; try again later"
        channel = None
        if not refusal:
            try:  # the match's shared channel, started by its first viewer
                channel = self.live.join(
                    match_id, lambda: self.feed.subscribe(match_id, self.limits.max_backlog)
                )
            except NoSuchMatch:
                refusal = "over"
        await response.prepare(request)
        if channel is None:
            kind = "over" if refusal == "over" else "refused"
            await response.write(f"event: {kind}\ndata: {refusal}\n\n".encode())
            return response
        last = last_event_id(request)
        task = asyncio.current_task()
        if task is not None:
            self._streams.add(task)
        try:
            await send_live(
                request,
                response,
                channel,
                last=last,
                write_timeout_s=self.limits.write_timeout_s,
                heartbeat_s=self.limits.heartbeat_s,
            )
        except TimeoutError:
            log.info("live viewer cut off", match_id=match_id, reason="write timeout")
        except ConnectionResetError:
            pass
        finally:
            self.live.leave(match_id, channel)
            if task is not None:
                self._streams.discard(task)
        return response

    async def list_events(self, request: web.Request) -> web.StreamResponse:
        """The match list as Server-Sent Events: the whole list (``matches``) at once, then
        each time it changes. A watcher is a live viewer: it counts against
        ``max_viewers``, is cut off after a write that takes too long, and costs no work
        of its own (one task builds the list for all of them)."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        if self.live.total >= self.limits.max_viewers:
            why = "this server has as many live viewers as it serves; reload later"
            await response.write(f"event: refused\ndata: {why}\n\n".encode())
            return response
        if self._list is None:
            self._list = ListChannel(self.feed, self.limits.list_poll_s)
        channel = self._list
        self.viewers[LIST] += 1
        task = asyncio.current_task()
        if task is not None:
            self._streams.add(task)
        timeout = self.limits.write_timeout_s
        seen = -1
        quiet = time.monotonic()
        try:
            await asyncio.wait_for(response.write(b"retry: 2000\n\n"), timeout)
            while not viewer_gone(request):
                if channel.version != seen and channel.message:
                    seen = channel.version
                    await asyncio.wait_for(response.write(channel.message), timeout)
                    quiet = time.monotonic()
                    continue
                idle = not await channel.wait(seen, LOOK_S)
                if idle and time.monotonic() - quiet > self.limits.heartbeat_s:
                    await asyncio.wait_for(response.write(b": ping\n\n"), timeout)
                    quiet = time.monotonic()
        except TimeoutError:
            log.info("match list viewer cut off", reason="write timeout")
        except ConnectionResetError:
            pass
        finally:
            self.viewers[LIST] -= 1
            if self.viewers[LIST] <= 0:
                del self.viewers[LIST]
                if self._list is channel:
                    self._list = None
                channel.close()
            if task is not None:
                self._streams.discard(task)
        return response


class ListChannel:
    """The match list, looked at every ``poll_s`` seconds while it has watchers; each
    change becomes one encoded message that every watcher sends as it is."""

    def __init__(self, feed: PublicFeed, poll_s: float) -> None:
        self.feed = feed
        self.poll_s = poll_s
        self.version = 0
        self.message = b""
        self._grew = asyncio.Event()
        self._task = asyncio.create_task(self._pump(), name="web match list")

    def _snapshot(self) -> None:
        matches = self.feed.list_matches()
        doc = {
            "matches": [_facts_json(m) for m in matches],
            "running": sum(1 for m in matches if not m.over),
        }
        data = json.dumps(doc, ensure_ascii=True, separators=(",", ":"))
        message = f"event: matches\ndata: {data}\n\n".encode()
        if message != self.message:
            self.message = message
            self.version += 1
            self._grew.set()
            self._grew = asyncio.Event()

    async def _pump(self) -> None:
        while True:
            try:
                self._snapshot()
            except Exception:  # the list is a courtesy: never let it take the server down
                log.exception("building the match list failed")
            await asyncio.sleep(self.poll_s)

    async def wait(self, seen: int, wait_s: float) -> bool:
        """Until the list is newer than version ``seen``; False after ``wait_s`` s."""
        if self.version != seen and self.message:
            return True
        return await woken(self._grew, wait_s)

    def close(self) -> None:
        self._task.cancel()


def _list_row(m: MatchFacts) -> str:
    """A row of the match list (``matches.js`` draws the same from the stream)."""
    totals = ", ".join(str(t) for t in m.totals)
    seats = " · ".join(esc(n) for n in m.seat_names)
    return (
        f'<tr data-id="{esc(m.match_id)}"><td><a href="/matches/{esc(m.match_id)}">'
        f'{esc(m.match_id)}</a></td><td class="status s-{esc(m.status)}">{esc(m.status)}</td>'
        f"<td>{esc(m.profile)}</td><td>{seats}</td>"
        f'<td class="num">{m.hands_played}</td><td class="num">{esc(totals)}</td></tr>'
    )


def _facts_json(m: MatchFacts) -> dict[str, Any]:
    return {
        "match_id": m.match_id,
        "status": m.status,
        "profile": m.profile,
        "seat_names": list(m.seat_names),
        "hands_played": m.hands_played,
        "totals": list(m.totals),
    }


def _html(page: str, status: int = 200) -> web.Response:
    return web.Response(text=page, status=status, content_type="text/html", charset="utf-8")


def _message(status: int, title: str, message: str) -> web.Response:
    body = f'<h1>{esc(title)}</h1><p>{esc(message)}</p><p><a href="/">All matches</a></p>'
    return _html(page_shell(title, body), status)


def _not_found(match_id: str) -> web.Response:
    return _message(404, "No such match", f"This server holds no match {match_id!r}.")
