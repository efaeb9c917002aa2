"""The referee's end of every sandbox: one Unix socket, mounted into each sandbox.

A referee in this process listens on it itself (gRPC serves ``unix:PATH`` next to its
TCP port). For a referee elsewhere (``referee serve`` on another host), a socat relay
in this process's network namespace forwards the socket to its TCP address. Inside a
sandbox, socat forwards 127.0.0.1:PORT to the socket, so the bot connects to a TCP
address as usual and reaches nothing else.

The socket lives in a short folder of its own under the system's temporary folder (a
Unix socket's path is limited to 107 bytes), readable by the bots' user.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

RELAY_START_S = 5.0
PREFIX = "pusoy-ref-"


class RefereeSocket:
    """A folder holding the referee's Unix socket; ``close()`` removes it."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        self.folder.chmod(0o755)
        self.path = self.folder / "referee.sock"
        self._relay: asyncio.subprocess.Process | None = None

    @staticmethod
    def reap_stale() -> int:
        """Remove the socket folders of tournament processes that are gone (killed
        outright); how many there were."""
        removed = 0
        for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
            owner = folder.name[len(PREFIX) :].split("-", 1)[0]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        return removed

    @property
    def grpc_address(self) -> str:
        return f"unix:{self.path}"

    def opened(self) -> None:
        """The referee listens on it: let the bots' user connect."""
        self.path.chmod(0o666)

    async def relay_to(self, address: str) -> None:
        """Forward the socket to a referee at a TCP ``host:port`` (socat)."""
        host, _, port = address.rpartition(":")
        host = host.strip("[]")
        self._relay = await asyncio.create_subprocess_exec(
            "socat",
            f"UNIX-LISTEN:{self.path},fork,mode=666,unlink-early",
            f"TCP:{host}:{port}",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RELAY_START_S
        while not self.path.exists():
            if self._relay.returncode is not None or loop.time() > deadline:
                raise OSError(f"socat could not relay {self.path} to {address}")
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        if self._relay is not None and self._relay.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._relay.pid, 9)
            await self._relay.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class CoreAllocator:
    """Cores for bots that get one each; ``take()`` is None when none is free.

    >>> cores = CoreAllocator([0, 1, 2, 3, 4], reserve=1)
    >>> [cores.take() for _ in range(5)]
    ['1', '2', '3', '4', None]
    >>> cores.give("3"); cores.take()
    '3'
    """

    def __init__(self, cores: list[int], reserve: int = 1) -> None:
        self.free = [str(c) for c in sorted(cores)[reserve:]]

    @staticmethod
    def available() -> list[int]:
        return sorted(os.sched_getaffinity(0))

    def take(self) -> str | None:
        return self.free.pop(0) if self.free else None

    def give(self, core: str) -> None:
        self.free.append(core)
        self.free.sort(key=int)


__all__ = ["CoreAllocator", "RefereeSocket"]
