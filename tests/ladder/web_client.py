"""A client of ``referee ladder serve`` for the tests, as a script or a hostile one
talks to it: raw requests (no redirect followed), multipart uploads, a team's key, the
sign-in form with its token, and ``referee ladder serve`` started as a process."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.referee_cli import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, check: Any, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


class Site:
    def __init__(self, folder: Path, url: str, keys: dict[str, str], metrics: str = "") -> None:
        self.folder = folder
        self.url = url
        self.keys = keys
        self.metrics = metrics

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        *,
        source: str = "",
    ) -> tuple[int, dict[str, str], bytes]:
        """One request, no redirect followed, from the address ``source`` (any of
        127.0.0.0/8; default: the system's choice); (status, headers by their lower-case
        names, a repeated one's values a line each, body)."""
        host = self.url.removeprefix("http://")
        conn = http.client.HTTPConnection(
            host, timeout=60, source_address=(source, 0) if source else None
        )
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            headers: dict[str, str] = {}
            for k, v in r.getheaders():  # several Set-Cookie: one per line
                headers[k.lower()] = f"{headers[k.lower()]}\n{v}" if k.lower() in headers else v
            return r.status, headers, r.read()
        finally:
            conn.close()

    def json(self, path: str, headers: dict[str, str] | None = None) -> Any:
        status, _, body = self.request("GET", path, headers=headers)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def sign_in(self, key: str) -> tuple[int, str]:
        """Through the sign-in form as a browser posts it (its token and the cookie it
        is bound to): the status, and the session cookie (``name=value``) when given."""
        status, headers, page = self.request("GET", "/team")
        assert status == 200, page[:300]
        token = re.search(rb'name="token" value="([0-9a-f]+)"', page)
        assert token, "the sign-in form has its token"
        nonce = headers["set-cookie"].split(";")[0]
        status, headers, _ = self.request(
            "POST",
            "/team/login",
            f"token={token.group(1).decode()}&key={key}".encode(),
            {"Content-Type": "application/x-www-form-urlencoded", "Cookie": nonce},
        )
        cookie = headers.get("set-cookie", "")
        session = re.search(r"ladder_session=[^;]+", cookie)
        return status, session.group(0) if session else ""


def multipart(fields: dict[str, str], archive: bytes | None) -> tuple[bytes, str]:
    boundary = "----ladder-test-boundary"
    out = io.BytesIO()
    for name, value in fields.items():
        out.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            f"{value}\r\n".encode()
        )
    if archive is not None:
        out.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="archive"; '
            'filename="bot.tar.gz"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
        )
        out.write(archive + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@contextmanager
def ladder_processes(
    folder: Path, config: Path, commands: list[tuple[str, list[str]]]
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``referee ladder COMMAND CONFIG EXTRA...`` processes, each with its output in
    ``folder/COMMAND.out``; stopped with SIGTERM (then SIGKILL) at the end."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "ladder", command, str(config), *extra],
            stdout=(folder / f"{command}.out").open("wb"),
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
        for command, extra in commands
    ]
    try:
        yield procs
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


def wait_serving(site: Site, procs: list[subprocess.Popen[bytes]]) -> None:
    def up() -> bool:
        for p in procs:
            assert p.poll() is None, "".join(
                f.read_text(errors="replace") for f in site.folder.glob("*.out")
            )
        try:
            return site.request("GET", "/api/status")[0] == 200
        except OSError:
            return False

    wait_for("the web", up, 60)
