"""Hostile clients of the ladder and the tools a test needs to play one: a reverse
proxy that forwards its clients' addresses, an upload held half-sent, a watch on a
folder's size, a lobby hello, another site's page that posts the sign-in form, and an
author's bot folder with everything that must never leave it."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import http.server
import json
import os
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
from aiohttp import ClientSession, TCPConnector, web
from multidict import CIMultiDict

from referee.ladder.submit import manifest_text
from referee.protocol import PROTOCOL_VERSION, lobby_service, lobby_service_grpc
from tests.support.referee_cli import ROOT

from .web_client import Site, free_port, multipart

PROXY_SOURCE = "127.0.0.2"
"""The trusted proxy's address: the whole of 127.0.0.0/8 is this machine's loopback, so
the proxy, the strangers and the teams each get an address of their own."""


class Proxy:
    """A reverse proxy as an organiser puts in front of the web (TLS would end here):
    it listens on 127.0.0.1, reaches the ladder from ``PROXY_SOURCE``, and appends the
    address it got each request from to ``X-Forwarded-For``, as nginx's
    ``$proxy_add_x_forwarded_for`` does (what the client wrote there is kept, left of
    it)."""

    SKIP = frozenset(
        ("host", "content-length", "transfer-encoding", "connection", "content-encoding")
    )

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.session: ClientSession | None = None

    async def _start(self) -> None:
        self.session = ClientSession(connector=TCPConnector(local_addr=(PROXY_SOURCE, 0)))
        app = web.Application(client_max_size=4 << 20)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self.session is not None
        headers = CIMultiDict(
            (k, v) for k, v in request.headers.items() if k.lower() not in self.SKIP
        )
        prior = request.headers.get("X-Forwarded-For")
        headers["X-Forwarded-For"] = f"{prior}, {request.remote}" if prior else str(request.remote)
        headers["X-Forwarded-Proto"] = request.scheme
        async with self.session.request(
            request.method,
            self.upstream + request.path_qs,
            headers=headers,
            data=await request.read(),
            allow_redirects=False,
        ) as answer:
            body = await answer.read()
            back = CIMultiDict(
                (k, v) for k, v in answer.headers.items() if k.lower() not in self.SKIP
            )
            return web.Response(status=answer.status, body=body, headers=back)

    async def _stop(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.runner is not None:
            await self.runner.cleanup()

    def __enter__(self) -> Site:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        return Site(Path("."), self.url, {})

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def lobby_hello(address: str, key: str, name: str = "far") -> lobby_service.ConnectResponse:
    """One connection to the lobby: its first answer (a welcome or a refusal)."""
    done = threading.Event()

    def requests() -> Iterator[lobby_service.ConnectRequest]:
        yield lobby_service.ConnectRequest(
            hello=lobby_service.LobbyHello(
                protocol_version=PROTOCOL_VERSION,
                bot_key=key,
                bot_name=name,
                max_concurrent_matches=1,
            )
        )
        done.wait(30)

    with grpc.insecure_channel(address) as channel:
        call = lobby_service_grpc.LobbyServiceStub(channel).Connect(requests(), timeout=30)
        try:
            return next(call)
        finally:
            done.set()
            call.cancel()


class HeldUpload:
    """An upload over a raw socket whose body is sent in two halves, the second only at
    ``finish``: what the web does before the whole body is there shows."""

    def __init__(self, site: Site, key: str, archive: bytes, declared: int = 0) -> None:
        body, kind = multipart({"bot": "held"}, archive)
        head = (
            f"POST /api/versions HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n"
            f"Authorization: Bearer {key}\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {declared or len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        self.sock = socket.create_connection(("127.0.0.1", site.port), timeout=60)
        self.sock.sendall(head + body[: len(body) // 2])
        self.rest = body[len(body) // 2 :]

    def answered(self) -> bool:
        return bool(select.select([self.sock], [], [], 0)[0])

    def finish(self) -> tuple[int, str]:
        if not self.answered():
            with contextlib.suppress(OSError):  # the web may stop reading a refused body
                self.sock.sendall(self.rest)
        response = http.client.HTTPResponse(self.sock)
        try:
            response.begin()
            data = json.loads(response.read())
        finally:
            self.sock.close()
        return response.status, data.get("error", "")


def folder_bytes(folder: Path) -> int:
    total = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            with contextlib.suppress(FileNotFoundError):
                total += entry.stat().st_size
    return total


@contextlib.contextmanager
def peak_bytes(folder: Path) -> Iterator[list[int]]:
    """The most bytes ``folder`` held at once meanwhile (sampled every few ms)."""
    peak = [0]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], folder_bytes(folder))
            stop.wait(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        stop.set()
        watcher.join(10)


class EvilPage:
    """Another site's page that posts the sign-in form to the ladder with a key of its
    choosing (a login CSRF: the victim then uploads into the attacker's team), under
    ``Referrer-Policy: no-referrer`` so that Chromium sends ``Origin: null``."""

    def __init__(self, target: str, key: str) -> None:
        page = (
            '<!doctype html><meta name="referrer" content="no-referrer"><body>'
            f'<form id="f" method="post" action="{target}/team/login">'
            f'<input name="key" value="{key}"><input name="token" value="{"0" * 64}"></form>'
            '<script>document.getElementById("f").submit()</script>'
        ).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


LOGS = ROOT / "tests" / "fixtures" / "logs" / "v2"
SECRET = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHNlY3JldC1zaWduaW5nLWtleQ==\n"


def first_bot(folder: Path) -> Path:
    """A bot's folder as an author's is after docs/first-bot.md and a few matches: the
    bot, and beside it the state folder's signing key, match logs (one renamed), seats'
    tokens, the bytecode cache, and a scratch folder its .pusoyignore lists."""
    bot = folder / "firstbot"
    (bot / "lib").mkdir(parents=True)
    (bot / "bot.py").write_bytes((ROOT / "examples" / "greedy_bot.py").read_bytes())
    (bot / "bot.toml").write_text(manifest_text("python", ["bot.py"]))
    (bot / "lib" / "helper.py").write_text("DEPTH = 2\n")
    (bot / ".pusoyignore").write_text("# my scratch space\nscratch/\n")
    (bot / ".referee").mkdir()
    (bot / ".referee" / "signing-key.pem").write_text(SECRET)
    (bot / "matches").mkdir()
    logs = sorted(LOGS.glob("*.jsonl"))
    for log in logs[:2]:
        (bot / "matches" / log.name).write_bytes(log.read_bytes())
    (bot / "replay.json").write_bytes(logs[2].read_bytes())  # a log renamed
    (bot / "seats").mkdir()
    (bot / "seats" / "alice.token").write_text("seat-token-of-alice\n")
    (bot / "scratch").mkdir()
    (bot / "scratch" / "notes.txt").write_text("half-baked ideas\n")
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0" * 64)
    return bot
