"""One bot's sandbox for one match: its groups, its command, its watch, its turns, its report.

``open()`` makes the bot's groups and returns what to spawn; from ``spawned(proc)`` on,
a watch holds the bot's whole process tree to its limits until it exits: every
``POLL_S`` while it runs, the jail reads what the tree uses and kills all of it on a
breach, with the cause in words ("memory: 2,400 MB across 4 processes, limit 1,024 MB").
What counts and stops the tree is the best the host gives, limit by limit
(``enforcement``):

- cgroup v1 (the full jail: root): the kernel holds memory, processes and CPU share;
  SIGSTOP to every process of its groups stops the bot (not v1's freezer, whose frozen
  tasks cannot die, not even of the death signal the referee's own death sends, until
  thawed);
- cgroup v2 (a group of its own where one can be made: root on this machine's unified
  hierarchy): ``cgroup.freeze``, ``cgroup.kill``, ``cpu.stat``, and the kernel's
  ``memory.max``, ``pids.max``, ``cpu.max`` where the host delegates them;
- otherwise the jail's PID namespace (``referee.sandbox.processes``): the referee counts
  processes, CPU and proportional memory itself, stops with SIGSTOP, kills the
  namespace's init. Per-process rlimits stay under all of it, against what a poll could
  miss (a fork bomb between two polls).

Turns (``turn``): once play has begun a bot runs only on its turn; between its turns it
is stopped, so busy loops of its own cannot slow the others (the referee's server for
jailed bots pings their connections rarely: ``JAILED_KEEPALIVE_MS``). While it runs it
may keep ``turn_cores`` cores busy on average, beyond a burst of ``TURN_BURST_S`` CPU
seconds: a bot over it is stopped for good, checked every ``POLL_S`` and at the end of
each of its turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import fcntl
import os
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from referee.sandbox import seccomp
from referee.sandbox.bwrap import (
    NOBODY,
    JailSpec,
    Level,
    encode_args,
    host_command,
    mount_args,
)
from referee.sandbox.cgroup2 import BotGroup, Cgroups2
from referee.sandbox.cgroups import BotCgroup, Cgroups
from referee.sandbox.limits import HELPER_TASKS, TURN_BURST_S, Breach
from referee.sandbox.processes import (
    Namespace,
    Usage,
    continue_all,
    memory_of,
    read_info,
    stop_all,
)

POLL_S = 0.05
"""How often a running bot's tree is measured (what a breach may overshoot by is what
the bot can take in this long: bench/RESULTS.md has the largest measured)."""
HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclasses.dataclass(frozen=True, slots=True)
class JailReport:
    """What the sandbox saw of the bot."""

    breach: Breach | None
    """The limit it broke (it was stopped for it), or None."""
    cpu_s: float | None
    """CPU time of the bot and everything it started (and the sandbox's helpers)."""
    memory_peak_mb: float | None
    """The most memory its processes held together, as far as it was measured."""
    cause: str = ""
    """The breach in words: ``memory: 2,400 MB across 4 processes, limit 1,024 MB``."""


class TableJails(Protocol):
    """What a table needs to jail its spawned bots: ``referee.sandbox.jailer.Jailer``, or
    what hands on to one (a tournament's ``Isolation``, a Ray node's jails)."""

    @property
    def address(self) -> str:
        """The referee's address as a sandboxed bot sees it (127.0.0.1:PORT)."""

    @property
    def counts_cpu(self) -> bool:
        """Whether its jails measure CPU time, so that turns can be timed."""

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        """A sandbox for the bot ``name`` (its seat's name) for one match."""

    def release(self, jail: Jail) -> None:
        """The bot is done: what the sandbox held for it (a core) is free again."""


def _mb(n: float) -> str:
    return f"{n / (1024 * 1024):,.0f} MB"


def _processes(n: int) -> str:
    return f"{n} process{'es' * (n != 1)}"


class Jail:
    """A bot's sandbox for one match. ``cgroups``: the full jail's (v1); ``cgroups2``: a
    group of its own in a light jail where the host allows one; neither: its namespace."""

    def __init__(
        self,
        spec: JailSpec,
        cgroups: Cgroups | None = None,
        *,
        cgroups2: Cgroups2 | None = None,
        cpus: str = "",
        cpu_cores: float = 0.0,
        bwrap: str = "bwrap",
    ) -> None:
        if (cgroups is None) != (spec.level is Level.LIGHT):
            raise ValueError("a full jail needs cgroups, a light one has none")
        self.spec = spec
        self.cgroups = cgroups
        self.cgroups2 = cgroups2 if cgroups is None else None
        self.cpus = cpus
        self.cpu_cores = cpu_cores
        self.bwrap = bwrap
        self.group: BotCgroup | None = None
        self.group2: BotGroup | None = None
        self.namespace: Namespace | None = None
        self.breach: Breach | None = None
        self.cause = ""
        self.report: JailReport | None = None
        self.unreadable: tuple[Path, ...] = ()
        """Files its command names that its user cannot read (found before the run)."""
        self._fds: list[int] = []
        self._info_fd = -1
        self._info = b""
        self._watch: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._last: Usage | None = None
        self._memory_peak = 0
        # Turns: stopped between them once play has begun; the time it ran since it
        # started, for its CPU budget (``turn_cores``).
        self.on_turn = True
        self._stopped = False
        self._ran_s = 0.0
        self._running_since = 0.0

    # -- start ------------------------------------------------------------------------

    def open(self) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
        """Make the groups; the command to spawn, its environment and the file
        descriptors it must inherit. CgroupError when the groups cannot be made,
        OSError when the bot's program cannot be run at all (as a bare start would)."""
        _check_program(self.spec)
        if self.cgroups is not None:
            self.group = self.cgroups.create(
                self.spec.limits, cpus=self.cpus, cpu_cores=self.cpu_cores
            )
        elif self.cgroups2 is not None:
            self.group2 = self.cgroups2.create(self.spec.limits)
        filter_fd = self._memfd("seccomp", seccomp.program())
        self._fds.append(filter_fd)
        self._info_fd, info_w = os.pipe()
        os.set_blocking(self._info_fd, False)
        info_w = _high(info_w)
        self._fds.append(info_w)
        args = [*mount_args(self.spec, filter_fd), "--info-fd", str(info_w)]
        args_fd = self._memfd("bwrap-args", encode_args(args))
        self._fds.append(args_fd)
        procs = self._groups_procs()
        argv = host_command(self.spec, procs, args_fd, self.bwrap)
        return argv, {"PATH": HOST_PATH, "LC_ALL": "C.UTF-8"}, tuple(self._fds)

    def _groups_procs(self) -> list[Path]:
        if self.group is not None:
            return self.group.procs_files()
        if self.group2 is not None:
            return self.group2.procs_files()
        return []

    @staticmethod
    def _memfd(name: str, data: bytes) -> int:
        """An anonymous file holding ``data``, read from its start by bubblewrap."""
        fd = _high(os.memfd_create(name))
        try:
            os.write(fd, data)
            os.lseek(fd, 0, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def spawned(self, proc: asyncio.subprocess.Process) -> None:
        """The command runs: close our copy of its descriptors, start watching."""
        self._proc = proc
        self._close_fds()
        self._running_since = time.monotonic()
        self._watch = asyncio.create_task(self._watch_limits(proc))

    def _find_namespace(self) -> Namespace | None:
        """The jail's PID namespace, once bubblewrap has said which it is."""
        if self.namespace is None and self._info_fd >= 0:
            with contextlib.suppress(BlockingIOError, OSError):
                while chunk := os.read(self._info_fd, 4096):
                    self._info += chunk
            init = read_info(self._info)
            if init is not None:
                self.namespace = Namespace(init)
                os.close(self._info_fd)
                self._info_fd = -1
                if self._stopped:
                    self._stop()  # asked before it could be
        return self.namespace

    # -- the watch --------------------------------------------------------------------

    async def _watch_limits(self, proc: asyncio.subprocess.Process) -> None:
        while proc.returncode is None:
            self._find_namespace()
            if not self._stopped:
                self._measure()
            if self.breach is not None:
                self.kill()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), POLL_S)

    def _usage(self) -> Usage | None:
        """What the bot's tree uses now: from its cgroup where it has one, else from
        its namespace (None until bubblewrap has said which that is)."""
        limit = self.spec.limits.memory_bytes
        scratch = self.spec.limits.tmp_bytes
        if self.group is not None:
            g1 = self.group
            tasks = g1.tasks()  # pids.current: one read, where cgroup.procs is one per hierarchy
            return Usage(tasks, tasks, g1.cpu_ns(), g1.memory_now())
        ns = self.namespace
        if self.group2 is None:
            return ns.usage(limit, scratch) if ns is not None else None
        g2 = self.group2
        pids = g2.pids()
        memory = g2.memory()
        if memory is None:
            memory = memory_of(pids, limit, ns.init_pid if ns is not None else None, scratch)
        return Usage(len(pids), g2.tasks(), g2.cpu_ns(), memory)

    def _measure(self) -> None:
        """Read what the tree uses; on a breach record it (the watch kills)."""
        if self.breach is not None:
            return
        usage = self._usage()
        if usage is None:
            return
        self._last = usage
        self._memory_peak = max(self._memory_peak, usage.memory)
        found = self._kernel_breach(usage) or self._breached(usage)
        if found is not None:
            self.breach, self.cause = found

    def _kernel_breach(self, usage: Usage) -> tuple[Breach, str] | None:
        """A limit the kernel holds (a cgroup's) and the bot hit."""
        group = self.group or self.group2
        breach = group.breach() if group is not None else None
        if breach is None:
            return None
        limits = self.spec.limits
        if breach is Breach.MEMORY:
            return breach, (
                f"memory: over {limits.memory_mb:,} MB across {_processes(usage.processes)} "
                f"(the kernel's limit; peak {_mb(usage.memory)})"
            )
        if breach is Breach.PROCESSES:
            return breach, (
                f"processes: the kernel refused one over {limits.processes} "
                f"(threads counted, and {HELPER_TASKS} of the jail's own)"
            )
        return self._breached(usage) or (breach, f"CPU: over {limits.cpu_s:g} s")

    def _breached(self, usage: Usage) -> tuple[Breach, str] | None:
        limits = self.spec.limits
        where = f"across {_processes(usage.processes)}"
        if usage.memory > limits.memory_bytes:
            return Breach.MEMORY, (
                f"memory: {_mb(usage.memory)} {where}, limit {limits.memory_mb:,} MB"
            )
        if usage.tasks > limits.processes + HELPER_TASKS:
            return Breach.PROCESSES, (
                f"processes: {usage.tasks} at once (threads counted, the jail's "
                f"{HELPER_TASKS} helpers allowed), limit {limits.processes}"
            )
        used_s = usage.cpu_ns / 1e9
        if limits.cpu_s and used_s > limits.cpu_s:
            return Breach.CPU, f"CPU: {used_s:.1f} s {where}, limit {limits.cpu_s:g} s"
        if limits.turn_cores and self._proc is not None:
            ran = self._ran_s + (time.monotonic() - self._running_since) * (not self._stopped)
            if used_s > TURN_BURST_S + limits.turn_cores * ran:
                return Breach.CPU, (
                    f"CPU: {used_s / max(ran, 1e-3):.1f} cores on average {where} while it "
                    f"ran ({used_s:.1f} s in {ran:.1f} s), limit {limits.turn_cores:g} "
                    f"(beyond a {TURN_BURST_S:g} s burst)"
                )
        return None

    def cpu_ns(self) -> int | None:
        """CPU time of the bot's tree so far (None before its namespace is known)."""
        usage = self._usage()
        return usage.cpu_ns if usage is not None else None

    def check_breach(self) -> Breach | None:
        """The limit broken so far, looked at now (the watch looks every ``POLL_S``)."""
        self._measure()
        if self.breach is None and self._proc is not None:
            self.breach = _rlimit_breach(self._proc.returncode)
            if self.breach is not None:
                self.cause = f"CPU: over {self.spec.limits.cpu_s:g} s (its CPU-time rlimit)"
        return self.breach

    # -- turns ------------------------------------------------------------------------

    def turn(self, active: bool) -> None:
        """Its turn begins (it runs) or ends (it is stopped until its next one)."""
        self.on_turn = active
        if active:
            self._resume()
        else:
            self._stop()
            self._measure()  # its turn's CPU against its budget, at once
            if self.breach is not None:
                self.kill()

    def release_turns(self) -> None:
        """Play is over: it runs freely again, to hear the end and exit."""
        self.on_turn = True
        self._resume()

    def _stop(self) -> None:
        if not self._stopped:
            self._ran_s += time.monotonic() - self._running_since
        self._stopped = True
        if self.group is not None:
            stop_all(self.group.pids)  # not v1's freezer: a frozen task dies only thawed
        elif self.group2 is not None:
            self.group2.freeze()
        elif self._find_namespace() is not None:
            assert self.namespace is not None
            self.namespace.stop()

    def _resume(self) -> None:
        if not self._stopped:
            return
        self._stopped = False
        self._running_since = time.monotonic()
        if self.group is not None:
            continue_all(self.group.pids())
        elif self.group2 is not None:
            self.group2.thaw()
        elif self.namespace is not None:
            self.namespace.resume()

    # -- the end ----------------------------------------------------------------------

    def kill(self) -> None:
        """Kill every process of the sandbox now."""
        if self.group is not None:
            self.group.kill()
        elif self.group2 is not None:
            self.group2.kill()
        if self._find_namespace() is not None:
            assert self.namespace is not None
            self.namespace.kill()

    async def close(self) -> JailReport:
        """The bot is done (or is to be stopped): kill what is left, report, clean up."""
        if self.report is not None:
            return self.report
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        self.check_breach()
        self._close_fds()
        self.kill()
        last = self._last
        cpu_s = last.cpu_ns / 1e9 if last is not None else None
        if self.group is not None:
            cpu_s = self.group.cpu_ns() / 1e9
            self._memory_peak = max(self._memory_peak, self.group.memory_peak())
        elif self.group2 is not None:
            cpu_s = self.group2.cpu_ns() / 1e9
            self._memory_peak = max(self._memory_peak, self.group2.memory_peak() or 0)
        peak = self._memory_peak / (1024 * 1024) if self._memory_peak else None
        self.report = JailReport(self.breach, cpu_s, peak, self.cause)
        if self.group is not None:
            await asyncio.to_thread(self.group.remove)
        elif self.group2 is not None:
            await asyncio.to_thread(self.group2.remove)
        return self.report

    def hint(self, tail: Sequence[str]) -> str:
        """Why a bot that died in its jail may have: a file it cannot read there."""
        who = "nobody (uid 65534)" if self.spec.uid == NOBODY else f"uid {self.spec.uid}"
        if self.unreadable:
            listed = ", ".join(str(p) for p in self.unreadable[:4])
            return (
                f"in its jail it runs as {who}, who cannot read {listed}: make its files "
                "readable by others (chmod o+r, and o+x for folders)"
            )
        if any("Permission denied" in line for line in tail):
            return (
                f"in its jail it runs as {who} and sees only the system, its own folder "
                "and the referee's Python, read-only: a file it needs is not readable by "
                "that user, or not in view (referee match --dry-run shows what it sees)"
            )
        return ""

    def _close_fds(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        if self._proc is None and self._info_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._info_fd)
            self._info_fd = -1


FIRST_PASSED_FD = 10
"""Descriptors handed to the launcher are numbered from here: its shell uses 3 and 4."""


def _high(fd: int) -> int:
    """``fd`` moved to a number the launcher's shell leaves alone (the old one closed)."""
    if fd >= FIRST_PASSED_FD:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FIRST_PASSED_FD)
    os.close(fd)
    return moved


def _check_program(spec: JailSpec) -> None:
    """The bot's program must exist and be a binary or a script with ``#!``: inside, the
    launcher's exec would hand anything else to the shell, and a file that is no program
    would seem to run and fail, where a bare start says so (Exec format error)."""
    if not spec.argv:
        raise OSError(errno.ENOENT, "an empty command")
    program = spec.argv[0]
    found = (
        spec.cwd / program
        if os.sep in program
        else shutil.which(program, path=spec.env.get("PATH", HOST_PATH))
    )
    if found is None or not Path(found).is_file():
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    try:
        with open(found, "rb") as f:
            head = f.read(4)
    except OSError:
        return  # the bot's user may read it when we cannot: let the jail try
    if head != b"\x7fELF" and not head.startswith(b"#!"):
        raise OSError(errno.ENOEXEC, os.strerror(errno.ENOEXEC), program)


def _rlimit_breach(code: int | None) -> Breach | None:
    """A light jail's bot that died of SIGXCPU broke its CPU-time rlimit (bubblewrap
    reports a signal N as the status 128 + N).

    >>> _rlimit_breach(128 + 24), _rlimit_breach(0), _rlimit_breach(None)
    (<Breach.CPU: 'CPU limit'>, None, None)
    """
    if code is not None and code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return Breach.CPU
    return None


__all__ = ["POLL_S", "Jail", "JailReport", "TableJails"]
