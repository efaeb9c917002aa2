"""The metrics endpoint: ``GET /metrics`` for a referee's ``Metrics`` or a ladder's
``LadderMetrics``, on its own address.

A small HTTP/1.1 server on the event loop (no thread touches the caller's state),
bounded like every other door of the referee: one request per connection, its head at
most 8 KiB and 5 s, at most 64 connections at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

import structlog

log = structlog.get_logger("referee.metrics")

MAX_REQUEST_HEAD = 8192
REQUEST_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 64


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9464`` for IPv6; a port alone is loopback) -> host, port."""
    host, sep, port = address.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", address
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"not HOST:PORT: {address!r}") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"port out of range in {address!r}")
    return host, number


class Exposition(Protocol):
    """What the endpoint serves: a referee's ``Metrics``, a ladder's ``LadderMetrics``."""

    def exposition(self, accept: str = "") -> tuple[bytes, str]: ...


class MetricsEndpoint:
    """``GET /metrics`` over HTTP/1.1 on the event loop; ``await start()``, ``await stop()``."""

    def __init__(self, metrics: Exposition, address: str) -> None:
        self.metrics = metrics
        self.host, self.requested_port = split_address(address)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    async def start(self) -> None:
        try:
            self._server = await asyncio.start_server(
                self._serve, self.host, self.requested_port, limit=MAX_REQUEST_HEAD
            )
        except OSError as exc:
            raise OSError(
                f"cannot listen for metrics on {self.host}:{self.requested_port}: {exc.strerror}"
            ) from exc
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("metrics endpoint", address=f"http://{self.address}/metrics")

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._open):  # their handlers see the end and return
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._open) >= MAX_CONNECTIONS:
            writer.close()
            return
        self._open.add(writer)
        try:
            status, content_type, body = await self._answer(reader)
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode("ascii") + body)
            await asyncio.wait_for(writer.drain(), REQUEST_TIMEOUT_S)
        except (TimeoutError, ConnectionError):
            pass
        finally:
            self._open.discard(writer)
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[str, str, bytes]:
        text = "text/plain; charset=utf-8"
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT_S)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return "400 Bad Request", text, b"bad request\n"
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return "400 Bad Request", text, b"bad request\n"
        method, target = parts[0], parts[1]
        path = target.split("?", 1)[0]
        if method != "GET":
            return "405 Method Not Allowed", text, b"GET only\n"
        if path == "/metrics":
            accept = ""
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "accept":
                    accept = value.strip()
            body, content_type = self.metrics.exposition(accept)
            return "200 OK", content_type, body
        if path == "/":
            return "200 OK", text, b"pusoy-referee: metrics at /metrics\n"
        return "404 Not Found", text, b"not found: try /metrics\n"
