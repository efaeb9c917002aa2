"""A jail's processes seen from outside, where no cgroup holds them: found by their PID
namespace, counted, measured, stopped and continued, killed.

Every jail has a PID namespace of its own (bubblewrap's ``--unshare-pid``), whose first
process (the namespace's init, which bubblewrap names with ``--info-fd``) inherits every
orphan: a bot's whole tree, the processes that called ``setsid`` and the referee's
forwarders included, is the set of processes in that namespace. So the referee can hold
the tree to its limits on any host, root or not, with or without cgroups:

- processes and threads: counted from ``/proc/PID/stat``;
- CPU time: each process's own and its reaped children's (``utime + stime + cutime +
  cstime``): what a process that died was charged ends in its parent's, and at last in
  init's, so the sum only grows (it is kept monotonic against a moment's race);
- memory: the proportional set size (``/proc/PID/smaps_rollup``: a page shared by N
  processes counts 1/N to each, so nothing is counted twice), read only when the resident
  sizes together come near the limit (``statm``: cheaper, never less), plus what the
  jail's /tmp and /dev/shm hold (tmpfs lives in memory);
- stopping (``SIGSTOP`` to every process, again while new ones turn up: one may have
  forked before its signal came) and continuing (``SIGCONT``);
- killing: SIGKILL to the namespace's init ends every process in it (the kernel's rule).

The scan of the host's ``/proc`` (a third of a millisecond on a quiet machine, more with
many processes) is made again only when the jail's own /proc lists another number of
processes than were found last time; measurements are made only while a jail runs,
every ``referee.sandbox.jail.POLL_S``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
from collections.abc import Callable, Iterable, Sequence

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
SCRATCH = ("tmp", "dev/shm")
"""The jail's own tmpfs folders (relative to its root), whose contents are memory."""
STOP_ROUNDS = 50


def pid_namespace(pid: int) -> str | None:
    """The PID namespace of ``pid`` (``pid:[4026532…]``), None when it is gone or hidden."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def in_namespace(namespace: str) -> list[int]:
    """Every process of the PID namespace ``namespace``, by one scan of /proc."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and pid_namespace(int(name)) == namespace:
            found.append(int(name))
    return found


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat from its third field (the state) on; empty when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return []
    return data.rpartition(b")")[2].decode("ascii", "replace").split()


@dataclasses.dataclass(frozen=True, slots=True)
class Usage:
    """What a jail's processes use at one moment."""

    processes: int
    tasks: int
    """Processes and their threads."""
    cpu_ns: int
    """CPU time of every process the jail has had."""
    memory: int
    """Bytes: proportional set sizes (or resident sizes, when well under the limit)
    and what its tmpfs folders hold."""


def cpu_ns_of(pids: Iterable[int]) -> tuple[int, int, int]:
    """(CPU ns of these processes and their reaped children, processes, tasks)."""
    ticks = processes = tasks = 0
    for pid in pids:
        fields = _stat(pid)
        if len(fields) < 18:
            continue
        processes += 1
        # After the state: ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime(11) stime cutime cstime priority nice num_threads(17).
        ticks += sum(int(x) for x in fields[11:15])
        tasks += int(fields[17])
    return ticks * 1_000_000_000 // CLOCK_TICKS, processes, tasks


def resident_bytes(pids: Iterable[int]) -> int:
    total = 0
    for pid in pids:
        with (
            contextlib.suppress(OSError, ValueError, IndexError),
            open(f"/proc/{pid}/statm", "rb") as f,
        ):
            total += int(f.read().split()[1]) * PAGE_BYTES
    return total


def proportional_bytes(pids: Iterable[int]) -> int:
    """The processes' proportional set sizes together (their resident size where the
    kernel has no smaps_rollup)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            total += resident_bytes([pid])
    return total


def scratch_bytes(init_pid: int, size: int) -> int:
    """What the jail's tmpfs folders hold, seen through its init's root; only a file
    system of the jail's own size counts (before bubblewrap has changed its root, the
    init's /tmp is the host's)."""
    total = 0
    for folder in SCRATCH:
        with contextlib.suppress(OSError):
            st = os.statvfs(f"/proc/{init_pid}/root/{folder}")
            if st.f_blocks * st.f_frsize == size:
                total += (st.f_blocks - st.f_bfree) * st.f_frsize
    return total


def memory_of(
    pids: Sequence[int], memory_limit: int, init_pid: int | None, scratch_size: int
) -> int:
    """Bytes the processes hold, with their jail's tmpfs folders (``scratch_size`` each,
    seen through ``init_pid``'s root): resident sizes, or, from three quarters of
    ``memory_limit`` on, proportional ones (never more, dearer to read)."""
    held = scratch_bytes(init_pid, scratch_size) if init_pid is not None else 0
    memory = resident_bytes(pids) + held
    if memory > memory_limit * 3 // 4:
        memory = proportional_bytes(pids) + held
    return memory


def usage_of(
    pids: Sequence[int], memory_limit: int, init_pid: int | None, scratch_size: int
) -> Usage:
    cpu, processes, tasks = cpu_ns_of(pids)
    return Usage(processes, tasks, cpu, memory_of(pids, memory_limit, init_pid, scratch_size))


def stop_all(list_pids: Callable[[], list[int]]) -> bool:
    """SIGSTOP every process, again while new ones turn up (one may have forked before
    its signal came); whether none was new within ``STOP_ROUNDS``. A process signalled
    runs no code of its own before it stops: it cannot continue a sibling."""
    signalled: set[int] = set()
    for _ in range(STOP_ROUNDS):
        new = [p for p in list_pids() if p not in signalled]
        if not new:
            return True
        for pid in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)
            signalled.add(pid)
    return False


def continue_all(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGCONT)


class Namespace:
    """The processes of one jail's PID namespace, known by its init's pid on the host."""

    def __init__(self, init_pid: int) -> None:
        self.init_pid = init_pid
        self.namespace = pid_namespace(init_pid)
        self._cpu_ns = 0
        self._pids: list[int] = []

    @property
    def alive(self) -> bool:
        return self.namespace is not None and pid_namespace(self.init_pid) == self.namespace

    def pids(self) -> list[int]:
        """Its processes' host pids. The jail's own /proc (seen through its init's root)
        lists them by their pids inside, cheaply: while it lists as many as were found
        last time, still there, the host's /proc is not scanned again."""
        if self.namespace is None:
            return []
        inside = self._count_inside()
        if inside is not None and self._pids:
            alive = [p for p in self._pids if pid_namespace(p) == self.namespace]
            if len(alive) == inside:
                self._pids = alive
                return alive
        self._pids = in_namespace(self.namespace)
        return self._pids

    def _count_inside(self) -> int | None:
        try:
            return sum(1 for n in os.listdir(f"/proc/{self.init_pid}/root/proc") if n.isdigit())
        except OSError:
            return None

    def usage(self, memory_limit: int, scratch_size: int) -> Usage:
        """What the tree uses now (its CPU time never goes back)."""
        found = usage_of(self.pids(), memory_limit, self.init_pid, scratch_size)
        self._cpu_ns = max(self._cpu_ns, found.cpu_ns)
        return dataclasses.replace(found, cpu_ns=self._cpu_ns)

    def stop(self) -> bool:
        return stop_all(self.pids)

    def resume(self) -> None:
        continue_all(self.pids())

    def kill(self) -> None:
        """SIGKILL the namespace's init: the kernel kills every process in it."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.init_pid, signal.SIGKILL)


def read_info(data: bytes) -> int | None:
    """The namespace init's pid from bubblewrap's ``--info-fd`` JSON, once whole.

    >>> read_info(b'{\\n    "child-pid": 4242,\\n    "net-namespace": 1\\n}\\n')
    4242
    >>> read_info(b'{\\n    "child-pi') is None
    True
    """
    try:
        info = json.loads(data)
    except ValueError:
        return None
    pid = info.get("child-pid") if isinstance(info, dict) else None
    return pid if isinstance(pid, int) and pid > 0 else None


__all__ = [
    "Namespace",
    "Usage",
    "continue_all",
    "cpu_ns_of",
    "in_namespace",
    "memory_of",
    "pid_namespace",
    "proportional_bytes",
    "read_info",
    "resident_bytes",
    "scratch_bytes",
    "stop_all",
    "usage_of",
]
