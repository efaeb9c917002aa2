"""``referee serve`` in a process of its own, killed and started again by crash tests."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc

from referee.client.channels import bearer_metadata
from referee.client.tls import ClientTls
from referee.protocol import common, match_service, match_service_grpc


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_argv(tmp: Path, address: str, *args: str) -> list[str]:
    """``referee serve`` at ``address`` with its log and state folders under ``tmp``."""
    return [
        *(sys.executable, "-m", "referee.cli", "serve", "--address", address),
        *("--log-dir", str(tmp / "logs"), "--state-dir", str(tmp / "state")),
        *args,
    ]


class Serve:
    """``referee serve`` on a fixed port (so bots find it again after a restart), with its
    log and state folders under ``tmp``. ``args``: more options of ``referee serve`` (its
    TLS certificate, say), and ``tls``: how ``create`` reaches it then."""

    def __init__(
        self,
        tmp: Path,
        port: int | None = None,
        *,
        args: Sequence[str] = (),
        tls: ClientTls | None = None,
    ) -> None:
        self.tmp, self.port = tmp, port or free_port()
        self.args, self.tls = list(args), tls
        self.proc: subprocess.Popen[str] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> list[str]:
        """Start it; the lines it printed about resumed matches (before it listens)."""
        self.proc = subprocess.Popen(
            serve_argv(self.tmp, self.address, "--log-level", "error", *self.args),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        lines = []
        while True:
            line = self.proc.stdout.readline()
            assert line, "referee serve exited"
            if line.startswith("referee listening"):
                return lines
            lines.append(line)

    @property
    def organiser(self) -> tuple[tuple[str, str]]:
        """The organiser's credential (the token ``referee serve`` keeps in its state)."""
        return bearer_metadata((self.tmp / "state" / "organiser-token").read_text().strip())

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def create(self, **kw: object) -> match_service.CreateMatchResponse:
        kw.setdefault("profile", "pusoy-dos")
        kw.setdefault("hands", 2)
        channel = (
            grpc.secure_channel(self.address, self.tls.credentials(), options=self.tls.options())
            if self.tls is not None
            else grpc.insecure_channel(self.address)
        )
        with channel:
            stub = match_service_grpc.MatchServiceStub(channel)
            return stub.CreateMatch(  # type: ignore[no-any-return]
                match_service.CreateMatchRequest(
                    time_control=common.TimeControl(turn_time_ms=3000, resume_grace_ms=15000),
                    **kw,  # type: ignore[arg-type]
                ),
                metadata=self.organiser,
            )


def wait_for_line(path: Path, pred: Callable[[dict], bool], timeout: float = 60.0) -> int:
    """Poll a log until a line satisfies ``pred``; its number. Each line is given to
    ``pred`` once, in order (``kind_is`` counts), a line still being written when whole."""
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        if path.exists():
            lines = path.read_text().splitlines()
            for raw in lines[seen:]:
                try:
                    entry = json.loads(raw)
                except json.JSONDecodeError:
                    break  # torn: read again on the next pass
                seen += 1
                if pred(entry):
                    return seen
        time.sleep(0.005)
    raise AssertionError("the log never reached the point")


def kind_is(kind: str, nth: int = 1) -> Callable[[dict], bool]:
    """A predicate for ``wait_for_line``: the nth line holding an event of ``kind``."""
    seen = [0]

    def pred(entry: dict) -> bool:
        if kind in entry["event"]:
            seen[0] += 1
            return seen[0] >= nth
        return False

    return pred
