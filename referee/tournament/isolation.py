"""How a tournament sandboxes its spawned bots: what each may see, its limits, its core.

One ``Isolation`` per tournament run. Before anything starts, ``check()`` decides
whether bots are sandboxed (``[sandbox] enabled``: auto, true, false) and returns the
warnings to print: a sandbox that cannot work here is named with the reason; with
``enabled = true`` it stops the tournament instead. ``jail()`` then makes one bot's
sandbox for one match.

What a sandboxed bot sees, read-only: the system (/usr, /etc, /opt), its own files (its
``cwd``, the folder of its program and of every file its command names), the Python
that runs the referee with the pusoy_client SDK (so ``{python} bot.py`` works), and the
``read_only`` paths of ``[sandbox]`` and of the bot. Hidden even inside those: the
tournament's folder, the configuration file (it holds the remote bots' keys), and the
folders and files of the other spawned bots. Its environment is its ``env``, the
PUSOY_ variables, PATH and the locale; nothing else of the referee's.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import referee
from referee.sandbox import (
    CoreAllocator,
    Jail,
    JailSpec,
    RefereeSocket,
    SandboxUnavailable,
    Support,
    probe,
)
from referee.table.bots import expand
from referee.tournament.config import BotConfig, BotKind, SandboxMode, TournamentConfig
from referee.tournament.playrelay import PlayRelay

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "JAVA_HOME", "TERM")
"""Variables of the referee's environment a sandboxed bot also gets."""
REFEREE_CORES = 1
"""Cores left to the referee when bots get cores of their own."""


def runtime_paths() -> list[Path]:
    """The Python running the referee, and the SDK a ``{python}`` bot imports."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    # Found, not imported: the SDK has its own generated modules, which cannot share a
    # process with the referee's.
    sdk = importlib.util.find_spec("pusoy_client")
    if sdk is not None and sdk.origin:
        paths.add(Path(sdk.origin).resolve().parent)
    paths.add(Path(referee.__file__).resolve().parent)  # stdio bots run referee's bridge
    return sorted(paths)


def named_paths(bot: BotConfig) -> tuple[set[Path], set[Path]]:
    """The folders and files a command bot names: its cwd, its program and every word
    of its command that is an existing path (placeholders other than {python} left out)."""
    cwd = bot.cwd or Path.cwd()
    folders, files = {cwd.resolve()}, set()
    for i, word in enumerate(expand(bot.argv, {"python": sys.executable})):
        if "{" in word or not word or word.startswith("-"):
            continue
        if i == 0 and os.sep not in word:
            continue  # a program found on PATH: part of the system
        path = (cwd / word).resolve()
        if path.is_file():
            files.add(path)
            folders.add(path.parent)
        elif path.is_dir() and i > 0:
            folders.add(path)
    return folders, files


class Isolation:
    """The sandboxes of one tournament run."""

    def __init__(self, config: TournamentConfig, folder: Path, concurrency: int) -> None:
        self.config = config
        self.folder = folder.resolve()
        self.concurrency = concurrency
        self.support: Support | None = None
        self.active = False
        self.cores: CoreAllocator | None = None
        self.socket: RefereeSocket | None = None
        self.port = 0
        self._relay: PlayRelay | None = None
        self._specs: dict[str, tuple[list[Path], list[Path]]] = {}

    @property
    def spawns_bots(self) -> bool:
        return any(b.kind is BotKind.COMMAND for b in self.config.bots)

    def check(self) -> list[str]:
        """Decide whether bots are sandboxed; the warnings to print before starting.
        Raises SandboxUnavailable when the configuration requires what cannot be."""
        sandbox = self.config.sandbox
        warnings: list[str] = []
        if not self.spawns_bots:
            return warnings
        if sandbox.mode is SandboxMode.OFF:
            warnings.append(
                "the sandbox is off ([sandbox] enabled = false): spawned bots run as this "
                "user, can read and write its files, reach the network, remember deals "
                "between matches and take CPU from each other"
            )
            return warnings
        support = self.support = probe()
        if not support.ok:
            if sandbox.mode is SandboxMode.ON:
                raise SandboxUnavailable(  # enabled = true, or own_cores = true below
                    f"the sandbox cannot work on this machine: {support.describe()} "
                    "([sandbox] enabled = true)"
                )
            warnings.append(
                f"bots are NOT sandboxed: {support.describe()}. They can remember deals "
                "between matches, read files and reach the network; set [sandbox] "
                "enabled = false to run without it knowingly, or true to refuse"
            )
            return warnings
        self.active = True
        assert support.cgroups is not None
        support.cgroups.reap()
        RefereeSocket.reap_stale()
        cores = CoreAllocator.available()
        needed = 4 * self.concurrency + REFEREE_CORES
        if sandbox.own_cores is SandboxMode.ON and len(cores) < needed:
            raise SandboxUnavailable(
                f"[sandbox] own_cores = true needs {needed} cores for {self.concurrency} "
                f"match(es) at once (4 bots each, and the referee's); this process may use "
                f"{len(cores)}"
            )
        if sandbox.own_cores is not SandboxMode.OFF and len(cores) >= needed:
            if not support.cgroups.has_cpuset:
                raise SandboxUnavailable("own cores need the cpuset cgroup controller")
            self.cores = CoreAllocator(cores, REFEREE_CORES)
        return warnings

    def describe(self) -> str:
        """One line for the plan: whether and how bots are sandboxed."""
        if not self.spawns_bots:
            return "sandbox: no spawned bots"
        if not self.active:
            return "sandbox: off"
        assert self.support is not None
        limits = self.config.sandbox.limits
        cpu = f"{limits.cpu_s:g} s CPU" if limits.cpu_s else "no CPU-time limit"
        cores = "a core each" if self.cores is not None else "shared cores, equal shares"
        return (
            f"sandbox: {self.support.version}; per bot {limits.memory_mb} MB, {cpu}, "
            f"{limits.processes} processes, {limits.open_files} open files, "
            f"{limits.tmp_mb} MB /tmp; {cores}"
        )

    # -- the referee's end -------------------------------------------------------

    def listen_addresses(self) -> list[str]:
        """Extra addresses for a referee in this process: the sandboxes' socket."""
        if not self.active:
            return []
        self.socket = RefereeSocket()
        return [self.socket.grpc_address]

    async def start(self, referee_address: str, *, local: bool) -> None:
        """The referee listens (``local``: on our socket too, with PlayService alone);
        for a referee elsewhere, relay its PlayService from our socket."""
        if not self.active:
            return
        self.port = int(referee_address.rpartition(":")[2])
        if not local:
            self.socket = RefereeSocket()
            self._relay = PlayRelay(
                self.socket.grpc_address, referee_address, self.config.referee.client_tls
            )
            await self._relay.start()
        assert self.socket is not None
        self.socket.opened()

    @property
    def address(self) -> str:
        """The referee's address as a sandboxed bot sees it."""
        return f"127.0.0.1:{self.port}"

    async def close(self) -> None:
        if self._relay is not None:
            await self._relay.stop()
            self._relay = None
        if self.socket is not None:
            self.socket.close()
            self.socket = None
        if self.active and self.support is not None and self.support.cgroups is not None:
            self.support.cgroups.reap(all_runners=True)

    # -- one bot ------------------------------------------------------------------

    def _paths(self, bot: BotConfig) -> tuple[list[Path], list[Path]]:
        """What the bot may see, and what is hidden from it even there."""
        if bot.name in self._specs:
            return self._specs[bot.name]
        folders, files = named_paths(bot)
        visible = [*folders, *runtime_paths(), *self.config.sandbox.read_only, *bot.read_only]
        hidden = [self.folder, self.config.source.resolve()]
        for other in self.config.bots:
            if other.kind is not BotKind.COMMAND or other.name == bot.name:
                continue
            their_folders, their_files = named_paths(other)
            for folder in their_folders:
                # A folder that holds something the bot may see stays; the other bot's
                # files in it are hidden one by one below.
                if not any(v == folder or folder in v.parents for v in visible):
                    hidden.append(folder)
            hidden.extend(their_files - files)
        self._specs[bot.name] = (visible, hidden)
        return visible, hidden

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        """A sandbox for the bot ``name`` for one match (``release`` it after)."""
        assert self.active and self.socket is not None and self.support is not None
        assert self.support.cgroups is not None
        bot = self.config.bot(name)
        visible, hidden = self._paths(bot)
        full_env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        full_env |= {"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "bot", **env}
        spec = JailSpec(
            argv=argv,
            cwd=(bot.cwd or self.config.source.parent).resolve(),
            env=full_env,
            visible=visible,
            hidden=hidden,
            referee_socket=self.socket.path,
            port=self.port,
            limits=self.config.limits_for(bot),
        )
        core = self.cores.take() if self.cores is not None else None
        return Jail(
            spec,
            self.support.cgroups,
            cpus=core or "",
            cpu_cores=self.config.sandbox.cpu_cores,
            bwrap=self.support.bwrap,
        )

    def release(self, jail: Jail) -> None:
        """Give back the bot's core, if it had one (once)."""
        if self.cores is not None and jail.cpus and jail.cpus not in self.cores.free:
            self.cores.give(jail.cpus)


__all__ = ["Isolation", "SandboxUnavailable", "named_paths", "runtime_paths"]
