"""The jails of one referee: the one ``Jailer`` that matches, tournaments, the ladder and
Ray workers all use.

A jailer owns the referee's end of every jail (one Unix socket, ``RefereeSocket``, that
the referee in this process also listens on, or that a relay serves) and makes each
bot's ``Jail`` from three things its user decides: the machine's ``Support`` (which jail,
which groups), each bot's limits, and each bot's view (``referee.sandbox.view``):
``referee match`` gives the views of its command bots, a tournament its bots', the
ladder each version's folder. ``seating(views)`` is the same referee's jails for other
bots (a ladder worker's next match).

``enforcement`` says, limit by limit, what holds it on this host: ``--dry-run``, the
tournament's plan and the docs print it, so that no limit is ever ignored silently.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from referee.sandbox.bridge import CoreAllocator, RefereeSocket
from referee.sandbox.bwrap import JailSpec, Level
from referee.sandbox.jail import POLL_S, Jail
from referee.sandbox.limits import HELPER_TASKS, TURN_BURST_S, SandboxLimits
from referee.sandbox.probe import SandboxUnavailable, Support
from referee.sandbox.view import BotView, bot_identity, cannot_read, describe, who

ViewOf = Callable[[str], BotView]
LimitsOf = Callable[[str], SandboxLimits]


def jail_env(env: Mapping[str, str], passed: Mapping[str, str]) -> dict[str, str]:
    """A jailed bot's whole environment: ``passed`` (a few of the referee's variables),
    a home and a temporary folder of its own, then its own ``env``."""
    return dict(passed) | {"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "bot", **env}


class Jailer:
    """The jails of one referee's spawned bots (``referee.sandbox.Jailer``, the protocol
    a table uses)."""

    def __init__(
        self,
        support: Support,
        views: ViewOf,
        limits: LimitsOf | SandboxLimits,
        *,
        level: Level | None = None,
        passed_env: Mapping[str, str] | None = None,
        cores: CoreAllocator | None = None,
        cpu_cores: float = 0.0,
        socket: RefereeSocket | None = None,
    ) -> None:
        self.level = level or support.level
        if self.level is Level.NONE:
            raise SandboxUnavailable("a jailer makes jails: a bare bot needs none")
        if self.level is Level.FULL and support.cgroups is None:
            raise SandboxUnavailable(f"no full jail here: {support.why_not(Level.FULL)}")
        self.support = support
        self.views = views
        self._limits = limits
        self.passed_env = dict(passed_env or {})
        self.cores = cores
        self.cpu_cores = cpu_cores
        self.socket = socket
        self.uid, self.gid = bot_identity(self.level)

    def seating(self, views: ViewOf) -> Jailer:
        """This referee's jails for other bots (the same socket, support and limits)."""
        other = copy.copy(self)
        other.views = views
        return other

    def limits(self, name: str) -> SandboxLimits:
        return self._limits(name) if callable(self._limits) else self._limits

    # -- the referee's end ------------------------------------------------------------

    def listen_addresses(self) -> list[str]:
        """The socket a referee in this process also listens on (PlayService alone)."""
        if self.socket is None:
            self.socket = RefereeSocket()
        return [self.socket.grpc_address]

    def opened(self, referee_address: str) -> None:
        """The referee listens (on the socket): the bots' user may connect."""
        assert self.socket is not None, "listen_addresses() first"
        self.socket.opened(int(referee_address.rpartition(":")[2]))

    @property
    def address(self) -> str:
        """The referee's address as a jailed bot sees it."""
        return f"127.0.0.1:{self.socket.port if self.socket is not None else 0}"

    @property
    def counts_cpu(self) -> bool:
        return True  # every jail measures its tree's CPU time (a cgroup or its namespace)

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    # -- one bot ----------------------------------------------------------------------

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        """A sandbox for the bot ``name`` for one match (``release`` it after)."""
        assert self.socket is not None, "listen_addresses() first"
        view = self.views(name)
        spec = JailSpec(
            argv=argv,
            cwd=view.cwd,
            env=jail_env(env, self.passed_env),
            visible=view.visible,
            hidden=view.hidden,
            revealed=view.revealed,
            referee_socket=self.socket.path,
            port=self.socket.port,
            uid=self.uid,
            gid=self.gid,
            limits=self.limits(name),
            level=self.level,
        )
        bwrap = self.support.bwrap or "bwrap"
        if self.level is Level.LIGHT:
            jail = Jail(spec, cgroups2=self.support.cgroups2, bwrap=bwrap)
        else:
            core = self.cores.take() if self.cores is not None else None
            jail = Jail(
                spec, self.support.cgroups, cpus=core or "", cpu_cores=self.cpu_cores, bwrap=bwrap
            )
        jail.unreadable = tuple(cannot_read(view, self.level)[0])
        return jail

    def release(self, jail: Jail) -> None:
        """Give back the bot's core, if it had one (once)."""
        if self.cores is not None and jail.cpus and jail.cpus not in self.cores.free:
            self.cores.give(jail.cpus)

    # -- what a person is told ----------------------------------------------------------

    def unreadable(self, name: str) -> tuple[list[Path], list[Path]]:
        return cannot_read(self.views(name), self.level)

    def describe(self, name: str) -> list[str]:
        """``--dry-run``'s lines for one bot: its jail, what it reads, what holds it."""
        lines = [f"  jail: {self.level.describe()}, as {who(self.level)}"]
        lines += describe(self.views(name), self.level)
        lines.append("  limits:")
        held = enforcement(self.support, self.level, self.limits(name))
        lines += [f"    {line}" for line in held]
        return lines


def enforcement(support: Support, level: Level, limits: SandboxLimits) -> list[str]:
    """Each limit and what holds it on this host, one line each."""
    full = level is Level.FULL
    v2 = support.cgroups2 if not full else None
    held = v2.limited if v2 is not None else frozenset()
    poll = f"the referee, every {POLL_S * 1000:.0f} ms"
    if full:
        memory = "the kernel (cgroup v1 memory)"
        tasks = "the kernel (cgroup v1 pids)"
        cpu = "cgroup v1 cpuacct"
        stop = "SIGSTOP to each process of its cgroups"
    else:
        memory = (
            "the kernel (cgroup v2 memory.max)"
            if "memory" in held
            else f"{poll} (proportional set size of its processes and what its /tmp "
            f"holds), and {limits.memory_mb:,} MB of address space per process"
        )
        tasks = (
            "the kernel (cgroup v2 pids.max)"
            if "pids" in held
            else f"{poll} (its PID namespace, the forwarders counted), and a process rlimit"
        )
        cpu = "cgroup v2 cpu.stat" if v2 is not None else "its processes' CPU times"
        stop = "cgroup.freeze (cgroup v2)" if v2 is not None else "SIGSTOP to each of its processes"
    turn = (
        f"{limits.turn_cores:g} core(s) on average while it runs, beyond a {TURN_BURST_S:g} s "
        f"burst: {poll} ({cpu})"
        + ("; the kernel's cpu.max too" if "cpu" in held and limits.turn_cores else "")
        if limits.turn_cores
        else "no limit (turn_cores = 0)"
    )
    lines = [
        f"memory: {limits.memory_mb:,} MB, its /tmp and /dev/shm included: {memory}",
        f"processes: {limits.processes} at once, threads counted (+{HELPER_TASKS} for the "
        f"jail's own): {tasks}",
        f"CPU between its turns: none, it is stopped ({stop})",
        f"CPU in its turns: {turn}",
    ]
    if limits.cpu_s:
        rlimit = "" if full else "; a CPU-time rlimit per process too"
        lines.append(f"CPU time: {limits.cpu_s:g} s in all: {poll} ({cpu}){rlimit}")
    lines += [
        f"scratch disk: its own /tmp and /dev/shm, {limits.tmp_mb} MB each; everything "
        "else read-only",
        f"open files: {limits.open_files} per process (rlimit)",
    ]
    return lines


def views_of(views: Mapping[str, BotView]) -> ViewOf:
    """A ``ViewOf`` over views made beforehand (KeyError names an unknown bot)."""
    return views.__getitem__


__all__ = ["Jailer", "LimitsOf", "ViewOf", "enforcement", "jail_env", "views_of"]
