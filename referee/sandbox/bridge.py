"""The referee's end of every sandbox: one Unix socket, mounted into each sandbox.

Whatever serves it (a referee in this process, or a relay to a referee elsewhere) serves
PlayService alone. Inside a sandbox, socat forwards 127.0.0.1:PORT to the socket, so
the bot connects to a TCP address as usual and reaches nothing else.

The socket lives in a short folder of its own under the system's temporary folder (a
Unix socket's path is limited to 107 bytes), readable by the bots' user.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "pusoy-ref-"


class RefereeSocket:
    """A folder holding the referee's Unix socket; ``close()`` removes it."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        self.folder.chmod(0o755)
        self.path = self.folder / "referee.sock"
        self.port = 0
        """The TCP port on 127.0.0.1 inside each jail that reaches this socket: the
        referee's own port, so that the address a bot is told is the same inside."""

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

    def opened(self, port: int) -> None:
        """The referee listens on it (and on ``port`` outside): let the bots' user
        connect."""
        self.port = port
        self.path.chmod(0o666)

    def close(self) -> None:
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
