"""One bot's sandbox for one match: its cgroups, its command, its watch, its report.

``open()`` makes the cgroups and returns what to spawn; ``watch(proc)`` checks the limits
until the bot exits and kills the whole group on a breach; ``close()`` kills whatever is
left, reads the CPU time and memory peak, and removes the groups. The private /tmp is a
tmpfs of the sandbox's own mount namespace: it is gone with the last process.

A light jail (``Level.LIGHT``, no cgroups) has rlimits instead: nothing to watch, a CPU
breach is the bot's death by SIGXCPU, and no CPU time or memory peak is measured. Its
processes die with bubblewrap (``--die-with-parent`` and the PID namespace), which the
table kills with the launcher's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import os
import shutil
import signal
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
from referee.sandbox.cgroups import BotCgroup, Cgroups
from referee.sandbox.limits import Breach

POLL_S = 0.05
"""How often a running bot's limits are checked (the CPU-time limit may be overrun by
about this much per core)."""
HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclasses.dataclass(frozen=True, slots=True)
class JailReport:
    """What the sandbox saw of the bot."""

    breach: Breach | None
    """The limit it broke (it was killed for it), or None."""
    cpu_s: float | None
    """CPU time of the bot and everything it started (and the sandbox's helpers); None
    in a light jail (no cgroup counts it)."""
    memory_peak_mb: float | None


class Jailer(Protocol):
    """What a table needs to sandbox its spawned bots (a tournament's ``Isolation``)."""

    @property
    def address(self) -> str:
        """The referee's address as a sandboxed bot sees it (127.0.0.1:PORT)."""

    @property
    def counts_cpu(self) -> bool:
        """Whether its jails measure CPU time (cgroups), so that turns can be timed."""

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        """A sandbox for the bot ``name`` (its seat's name) for one match."""

    def release(self, jail: Jail) -> None:
        """The bot is done: what the sandbox held for it (a core) is free again."""


class Jail:
    """A bot's sandbox for one match; ``cgroups`` None: a light jail (``spec.level``)."""

    def __init__(
        self,
        spec: JailSpec,
        cgroups: Cgroups | None,
        *,
        cpus: str = "",
        cpu_cores: float = 0.0,
        bwrap: str = "bwrap",
    ) -> None:
        self.spec = spec
        self.cgroups = cgroups
        self.cpus = cpus
        self.cpu_cores = cpu_cores
        self.bwrap = bwrap
        self.group: BotCgroup | None = None
        self.breach: Breach | None = None
        self._fds: list[int] = []
        self._watch: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self.report: JailReport | None = None
        self.unreadable: tuple[Path, ...] = ()
        """Files its command names that its user cannot read (found before the run)."""
        if (cgroups is None) != (spec.level is Level.LIGHT):
            raise ValueError("a full jail needs cgroups, a light one has none")

    @property
    def level(self) -> Level:
        return self.spec.level

    def open(self) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
        """Make the cgroups; the command to spawn, its environment and the file
        descriptors it must inherit. CgroupError when the groups cannot be made,
        OSError when the bot's program cannot be run at all (as a bare start would)."""
        _check_program(self.spec)
        if self.cgroups is not None:
            self.group = self.cgroups.create(
                self.spec.limits, cpus=self.cpus, cpu_cores=self.cpu_cores
            )
        filter_fd = self._memfd("seccomp", seccomp.program())
        self._fds.append(filter_fd)
        args_fd = self._memfd("bwrap-args", encode_args(mount_args(self.spec, filter_fd)))
        self._fds.append(args_fd)
        procs = self.group.procs_files() if self.group is not None else []
        argv = host_command(self.spec, procs, args_fd, self.bwrap)
        return argv, {"PATH": HOST_PATH, "LC_ALL": "C.UTF-8"}, tuple(self._fds)

    @staticmethod
    def _memfd(name: str, data: bytes) -> int:
        """An anonymous file holding ``data``, read from its start by bubblewrap."""
        fd = os.memfd_create(name)
        try:
            os.write(fd, data)
            os.lseek(fd, 0, os.SEEK_SET)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def spawned(self, proc: asyncio.subprocess.Process) -> None:
        """The command runs: close our copy of the arguments, start watching."""
        self._close_fd()
        self._proc = proc
        if self.group is not None:
            self._watch = asyncio.create_task(self._watch_limits(proc))

    async def _watch_limits(self, proc: asyncio.subprocess.Process) -> None:
        assert self.group is not None
        while proc.returncode is None:
            breach = self.group.breach()
            if breach is not None:
                self.breach = breach
                self.group.kill()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), POLL_S)

    def check_breach(self) -> Breach | None:
        """The limit broken so far, looked at now (the watch looks every ``POLL_S``; the
        kernel's OOM killer acts at once)."""
        if self.breach is None and self.group is not None:
            self.breach = self.group.breach()
        if self.breach is None and self.group is None and self._proc is not None:
            self.breach = _rlimit_breach(self._proc.returncode)
        return self.breach

    def kill(self) -> None:
        """Kill every process of the sandbox now."""
        if self.group is not None:
            self.group.kill()

    async def close(self) -> JailReport:
        """The bot is done (or is to be stopped): kill what is left, report, clean up."""
        if self.report is not None:
            return self.report
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        self._close_fd()
        group = self.group
        if group is None:
            self.report = JailReport(self.check_breach(), None, None)
            return self.report
        if self.breach is None:
            self.breach = group.breach()
        group.kill()
        self.report = JailReport(
            breach=self.breach,
            cpu_s=group.cpu_ns() / 1e9,
            memory_peak_mb=group.memory_peak() / (1024 * 1024),
        )
        await asyncio.to_thread(group.remove)
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

    def _close_fd(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()


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


__all__ = ["POLL_S", "Jail", "JailReport", "Jailer"]
