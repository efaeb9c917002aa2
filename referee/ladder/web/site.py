"""``referee ladder serve``: the ladder's public web, its ``/api/`` and the teams' pages.

Public, to anyone: the leaderboard (``/``, ``/api/leaderboard``), a page per bot
(``/bots/TEAM/BOT``, ``/api/bots/TEAM/BOT``), the queue (``/queue``, kept current from
``/queue/events``; ``/api/queue``), a match (``/api/matches/ID``): live while a worker
plays it (its referee's public events relayed, ``referee.ladder.web.relay``, folded once for
all viewers by the spectators' web's ``MatchChannel``), its replay once recorded (the
viewer's page, from the signed log), and the ladder's status (``/api/status``). Nothing
there is private: ratings, results, failures' causes; never a bot's output.

A team's, behind its API key (``referee.ladder.storage.keys``; refused keys throttled per
client address by the ``KeyGuard``, a right key never refused for another's failures,
the address a trusted proxy forwards believed (``[web] trusted_proxies``), and a key
accepted only over TLS or from this machine):

- scripts send ``Authorization: Bearer <key>``: ``POST /api/versions`` (multipart
  ``bot`` and ``archive``: what ``referee ladder submit --url`` does), ``GET /api/team``,
  ``POST /api/versions/ID/retire`` (optional JSON ``{"reason": ...}``; another team's
  version answers as a missing one). No cookie is involved, so another site's page
  cannot make a browser do it;
- a browser signs in at ``/team`` with a form that posts the key and a token bound to
  a sign-in cookie (so another site's page cannot sign a browser into a team of its
  choosing: ``Origin: null``, which browsers send under this site's no-referrer policy,
  decides nothing), and gets a session cookie (``HttpOnly``, ``SameSite=Strict``)
  holding an HMAC of the team and its key's public id under the web's own secret
  (``state/web-session.key``): a new key ends every session. Its forms (upload, retire,
  sign out) carry a CSRF token derived from the session and are refused without it, or
  from another origin. Its page shows only the ladder's own notes (signed for the
  session). Its bots' output files are served from ``/team/stderr/MATCH/SEAT``, to that
  team only.

An upload is taken or refused before its body is read (the key, its declared size, the
team's uploads this hour and disk, the uploads being received at once: ``[web]``), then
streamed to a private file, never past ``[limits] archive_mb``, and goes through the
same ``referee.ladder.uploads.submit`` as ``referee ladder submit`` does. The team's
routes are ``referee.ladder.web.teams`` (``TeamRoutes``), who a request comes from
``referee.ladder.web.sessions`` (``TeamAuth``); ``LadderWeb`` holds both.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from sqlalchemy import select

from referee.ladder.config import LadderConfig
from referee.ladder.errors import NotFound
from referee.ladder.storage.keys import KeyGuard
from referee.ladder.storage.records import LadderMatchState
from referee.ladder.storage.schema import matches
from referee.ladder.storage.store import LadderStore
from referee.ladder.web import content, pages
from referee.ladder.web.common import (
    NAME_PATTERN,
    api,
    html,
    message,
    off_loop,
    valid_ladder_match_id,
    valid_version_id,
)
from referee.ladder.web.relay import RelaySubscription
from referee.ladder.web.sessions import TeamAuth
from referee.ladder.web.teams import TeamRoutes
from referee.log.reader import LogTooLarge
from referee.view.page import live_page, replay_page
from referee.web.app import WebLimits
from referee.web.channels import LiveChannels, send_live
from referee.web.common import (
    last_event_id,
    listen_address,
    listen_url,
    security_headers,
    viewer_gone,
)
from referee.web.feed import ViewerTooSlow

log = structlog.get_logger("referee.ladder.web")

MAX_FORM_BYTES = 16 * 1024
QUEUE_POLL_S = 1.0


class LadderWeb:
    """The ladder's web server: ``await start()``, then ``await stop()``."""

    def __init__(
        self,
        config: LadderConfig,
        store: LadderStore,
        address: str,
        *,
        guard: KeyGuard | None = None,
        limits: WebLimits | None = None,
        tls: ssl.SSLContext | None = None,
        insecure: bool = False,
    ) -> None:
        """``guard`` and ``insecure`` go to the team's sign-in (``TeamAuth``)."""
        self.config = config
        self.store = store
        self.requested = address
        self.auth = TeamAuth(config, store, guard or KeyGuard(), insecure=insecure)
        self.teams = TeamRoutes(config, store, self.auth)
        self.limits = limits or WebLimits()
        self.tls = tls
        self.live = LiveChannels()
        self.viewers = self.live.viewers
        self._replays = asyncio.Semaphore(self.limits.replay_builds)
        app = web.Application(middlewares=[security_headers], client_max_size=MAX_FORM_BYTES)
        r = app.router
        r.add_get("/", self.leaderboard)
        r.add_get("/queue", self.queue)
        r.add_get("/queue/events", self.queue_events)
        r.add_get("/bots/{team}/{bot}", self.bot)
        r.add_get("/matches/{match_id}", self.match)
        r.add_get("/matches/{match_id}/replay", self.replay)
        r.add_get("/matches/{match_id}/events", self.events)
        self.teams.add_routes(r)
        r.add_get("/api/leaderboard", api(lambda _: {"leaderboard": self._board()}))
        r.add_get("/api/status", api(lambda _: content.status_json(self.store)))
        r.add_get("/api/queue", api(lambda _: content.queue_json(self.store)))
        r.add_get("/api/bots/{team}/{bot}", api(self._bot_json))
        r.add_get("/api/matches/{match_id}", api(self._match_json))
        r.add_get("/api/versions/{id}", api(self._version_json))
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return listen_url(self.requested, self.port, "https" if self.tls else "http")

    async def start(self) -> None:
        host, port = listen_address(self.requested)
        await self.runner.setup()
        site = web.TCPSite(self.runner, host, port, ssl_context=self.tls, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            await self.runner.cleanup()
            raise OSError(f"cannot listen on {self.requested}: {exc.strerror}") from exc
        server = site._server
        assert server is not None and isinstance(server, asyncio.Server)
        self._server = server
        self.port = server.sockets[0].getsockname()[1]
        log.info("ladder web serving", url=self.url)

    async def stop(self) -> None:
        self.live.close()
        await self.runner.cleanup()

    def _board(self) -> list[dict[str, Any]]:
        return content.leaderboard_json(self.store)

    def _bot_json(self, request: web.Request) -> dict[str, Any]:
        team, bot = request.match_info["team"], request.match_info["bot"]
        if not (NAME_PATTERN.fullmatch(team) and NAME_PATTERN.fullmatch(bot)):
            raise NotFound("no such bot")
        return content.bot_json(self.store, team, bot, self.config.folder)

    def _match_json(self, request: web.Request) -> dict[str, Any]:
        match_id = request.match_info["match_id"]
        if not valid_ladder_match_id(match_id):
            raise NotFound("no such match")
        return content.match_json(self.store, match_id)

    def _version_json(self, request: web.Request) -> dict[str, Any]:
        text = request.match_info["id"]
        if not valid_version_id(text):
            raise NotFound("no such version")
        return content.version_json(self.store.version(int(text)))

    # -- public pages -------------------------------------------------------------------

    async def leaderboard(self, request: web.Request) -> web.Response:
        rows, status = await off_loop(lambda: (self._board(), content.status_json(self.store)))
        return html(pages.leaderboard_page(self.config.name, rows, status))

    async def queue(self, request: web.Request) -> web.Response:
        data = await off_loop(lambda: content.queue_json(self.store))
        return html(pages.queue_page(self.config.name, data))

    async def bot(self, request: web.Request) -> web.Response:
        try:
            data = await off_loop(lambda: self._bot_json(request))
        except NotFound:
            return message(self.config.name, 404, "No such bot", "This ladder has no such bot.")
        return html(pages.bot_page(self.config.name, data))

    async def queue_events(self, request: web.Request) -> web.StreamResponse:
        """The queue as Server-Sent Events (``event: queue``), each time it changes."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        if self.live.total >= self.limits.max_viewers:
            await response.write(b"event: refused\ndata: too many viewers\n\n")
            return response
        self.viewers[""] += 1
        last = b""
        quiet = time.monotonic()
        try:
            await response.write(b"retry: 2000\n\n")
            while not viewer_gone(request):
                data = await off_loop(lambda: content.queue_json(self.store))
                text = json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()
                if text != last or time.monotonic() - quiet > self.limits.heartbeat_s:
                    message = (
                        b"event: queue\ndata: " + text + b"\n\n" if text != last else b": -\n\n"
                    )
                    await asyncio.wait_for(response.write(message), self.limits.write_timeout_s)
                    last, quiet = text, time.monotonic()
                await asyncio.sleep(QUEUE_POLL_S)
        except (TimeoutError, ConnectionResetError):
            pass
        finally:
            self.viewers[""] -= 1
        return response

    async def match(self, request: web.Request) -> web.StreamResponse:
        match_id = request.match_info["match_id"]
        row = await off_loop(lambda: self._match_row(match_id))
        if row is None:
            return message(self.config.name, 404, "No such match", "This ladder has no such match.")
        if row.log_path:
            raise web.HTTPFound(f"/matches/{match_id}/replay")
        if row.state == LadderMatchState.RUNNING and row.live_id:
            events = f"/matches/{match_id}/events"
            return html(live_page(match_id, events, f"/matches/{match_id}/replay"))
        return message(
            self.config.name,
            200,
            "Not played yet",
            f"Match {match_id} is {row.state}: see the queue.",
        )

    def _match_row(self, match_id: str) -> Any:
        if not valid_ladder_match_id(match_id):
            return None
        with self.store.reading() as conn:
            return conn.execute(
                select(matches.c.state, matches.c.log_path, matches.c.live_address)
                .add_columns(matches.c.live_id)
                .where(matches.c.id == match_id)
            ).first()

    async def replay(self, request: web.Request) -> web.StreamResponse:
        match_id = request.match_info["match_id"]
        row = await off_loop(lambda: self._match_row(match_id))
        if row is None:
            return message(self.config.name, 404, "No such match", "This ladder has no such match.")
        if not row.log_path:
            raise web.HTTPFound(f"/matches/{match_id}")
        path = (self.config.folder / row.log_path).resolve()
        if self.config.logs_dir.resolve() not in path.parents:
            return message(
                self.config.name, 500, "Unreadable", "The match's log is not in the ladder's logs."
            )
        try:
            async with self._replays:
                page = await asyncio.to_thread(replay_page, path)
        except LogTooLarge:
            return message(
                self.config.name, 413, "Too large", "The match's log is too large to show."
            )
        except OSError:
            return message(self.config.name, 500, "Unreadable", "The match's log cannot be read.")
        return html(page)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """A running match's public events, relayed from its worker's referee."""
        match_id = request.match_info["match_id"]
        row = await off_loop(lambda: self._match_row(match_id))
        if row is None:
            return web.Response(status=404, text="no such match\n")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        )
        await response.prepare(request)
        if row.state != LadderMatchState.RUNNING or not row.live_id or not row.live_address:
            await response.write(b"event: over\ndata: over\n\n")
            return response
        if self.live.total >= self.limits.max_viewers or (
            self.viewers[match_id] >= self.limits.max_viewers_per_match
        ):
            await response.write(b"event: refused\ndata: too many viewers; try later\n\n")
            return response
        address, live_id = row.live_address, row.live_id
        try:
            channel = self.live.join(
                match_id, lambda: RelaySubscription(address, live_id, self.limits.max_backlog)
            )
        except ValueError:
            await response.write(b"event: over\ndata: over\n\n")
            return response
        try:
            await send_live(
                request,
                response,
                channel,
                last=last_event_id(request),
                write_timeout_s=self.limits.write_timeout_s,
            )
        except (TimeoutError, ConnectionResetError, ViewerTooSlow):
            pass
        finally:
            self.live.leave(match_id, channel)
        return response


def serve_ladder(
    config: LadderConfig,
    address: str,
    *,
    metrics: str | None = None,
    tls: tuple[Path, Path] | None = None,
    insecure: bool = False,
) -> int:
    """``referee ladder serve``: until SIGTERM or SIGINT."""
    import signal

    from referee.ladder.metrics import LadderMetrics
    from referee.service.endpoint import MetricsEndpoint

    context = None
    if tls is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(tls[0]), str(tls[1]))

    async def main() -> None:
        store = await asyncio.to_thread(LadderStore.open, config.database)
        guard = KeyGuard()
        front = LadderWeb(config, store, address, guard=guard, tls=context, insecure=insecure)
        endpoint = MetricsEndpoint(LadderMetrics(store, guard), metrics) if metrics else None
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            await front.start()
            if endpoint is not None:
                await endpoint.start()
            shown = f"; metrics at http://{endpoint.address}/metrics" if endpoint else ""
            print(
                f"Ladder {config.name!r} web at {front.url}{shown}. Stop with Ctrl-C.", flush=True
            )
            await stop.wait()
        finally:
            if endpoint is not None:
                await endpoint.stop()
            await front.stop()
            store.close()

    asyncio.run(main())
    return 0


__all__ = ["LadderWeb", "serve_ladder"]
