"""Control groups v2 for one bot, where the host's unified hierarchy lets us make them.

Every cgroup v2 group, even one with no controller enabled, has ``cgroup.procs`` (who is
in it: a bot's whole tree, whatever it forks or ``setsid``s), ``cgroup.kill`` (SIGKILL to
all, in one write, Linux 5.14), ``cgroup.freeze`` with ``cgroup.events`` (stop all and
know when they are stopped) and ``cpu.stat`` (``usage_usec``: their CPU time). These the
jail uses wherever a group can be made (as root on this machine's unified hierarchy).

A host that delegates controllers to the referee's group (``memory``, ``pids``, ``cpu``
in its ``cgroup.subtree_control``, as systemd does for a service with ``Delegate=yes``)
also gives each bot's group ``memory.max``, ``pids.max`` and ``cpu.max``: then the
kernel holds the limits. Where it does not, the referee counts memory and processes
itself (``referee.sandbox.processes``). That second path is unit-tested on a folder tree
standing in for the cgroup files; it is not yet verified on a real delegating host.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from referee.sandbox.cgroups import (
    CFS_PERIOD_US,
    GROUP_PREFIX,
    CgroupError,
    field,
    read_file,
    write_file,
)
from referee.sandbox.limits import HELPER_TASKS, Breach, SandboxLimits

LIMITED = ("memory", "pids", "cpu")
"""Controllers whose limits a bot's group gets when the host delegates them."""


def own_cgroup2(mountinfo: str | None = None, self_cgroup: str | None = None) -> Path | None:
    """This process's own group in the cgroup v2 hierarchy, if one is mounted.

    >>> mi = "35 25 0:30 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\\n"
    >>> own_cgroup2(mi, "4:memory:/a\\n0::/session/b\\n")
    PosixPath('/sys/fs/cgroup/unified/session/b')
    >>> own_cgroup2("", "0::/\\n") is None
    True
    """
    if mountinfo is None:
        mountinfo = read_file(Path("/proc/self/mountinfo"))
    if self_cgroup is None:
        self_cgroup = read_file(Path("/proc/self/cgroup"))
    mount: tuple[str, Path] | None = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if sep and len(fields) >= 5 and tail and tail[0] == "cgroup2":
            mount = (fields[3], Path(fields[4]))
    if mount is None:
        return None
    for line in self_cgroup.splitlines():
        if line.startswith("0::"):
            path = line[3:]
            root, point = mount
            if root != "/" and path.startswith(root):
                path = path[len(root) :]
            return point / path.lstrip("/")
    return None


class BotGroup:
    """One bot's cgroup v2 group; ``limited``: the controllers whose limits it holds."""

    def __init__(self, path: Path, limits: SandboxLimits, limited: frozenset[str]) -> None:
        self.path = path
        self.limits = limits
        self.limited = limited

    def procs_files(self) -> list[Path]:
        return [self.path / "cgroup.procs"]

    def pids(self) -> list[int]:
        with contextlib.suppress(OSError, ValueError):
            return [int(x) for x in read_file(self.path / "cgroup.procs").split()]
        return []

    def tasks(self) -> int:
        """Processes and threads in the group now."""
        if "pids" in self.limited:
            with contextlib.suppress(OSError, ValueError):
                return int(read_file(self.path / "pids.current"))
        with contextlib.suppress(OSError):
            return len(read_file(self.path / "cgroup.threads").split())
        return 0

    def cpu_ns(self) -> int:
        with contextlib.suppress(OSError, ValueError):
            return field(read_file(self.path / "cpu.stat"), "usage_usec") * 1000
        return 0

    def memory(self) -> int | None:
        """What the kernel charges the group (tmpfs included), when it counts memory."""
        if "memory" not in self.limited:
            return None
        with contextlib.suppress(OSError, ValueError):
            return int(read_file(self.path / "memory.current"))
        return None

    def memory_peak(self) -> int | None:
        if "memory" not in self.limited:
            return None
        with contextlib.suppress(OSError, ValueError):
            return int(read_file(self.path / "memory.peak"))
        return self.memory()

    def breach(self) -> Breach | None:
        """A limit the kernel holds and the bot hit (its own events count)."""
        with contextlib.suppress(OSError, ValueError):
            if "memory" in self.limited and field(
                read_file(self.path / "memory.events"), "oom_kill"
            ):
                return Breach.MEMORY
            if "pids" in self.limited and field(read_file(self.path / "pids.events"), "max"):
                return Breach.PROCESSES
        return None

    def freeze(self) -> bool:
        """Stop every process of the group; whether it was asked (the kernel stops each
        before it runs again; ``cgroup.events`` says ``frozen 1`` once all are)."""
        return self._set_frozen(True)

    def thaw(self) -> None:
        self._set_frozen(False)

    def _set_frozen(self, frozen: bool) -> bool:
        try:
            write_file(self.path / "cgroup.freeze", "1" if frozen else "0")
        except OSError:
            return False
        return True

    def kill(self) -> bool:
        """SIGKILL every process of the group (``cgroup.kill``, or one by one on a kernel
        without it); whether it emptied."""
        with contextlib.suppress(OSError):
            write_file(self.path / "cgroup.kill", "1")
        for _ in range(100):
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)
        return not self.pids()

    def remove(self) -> bool:
        for attempt in range(50):
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if attempt == 49:
                    return False
                time.sleep(0.002)  # tasks killed a moment ago are still leaving
        return False


class Cgroups2:
    """The group this process can make bot groups in, and the controllers it hands on."""

    def __init__(self, parent: Path, limited: frozenset[str]) -> None:
        self.parent = parent
        self.limited = limited
        self._count = 0

    @classmethod
    def discover(cls, parent: Path | None = None) -> Cgroups2:
        """Find our group and check that a child can be made in it (CgroupError: why
        not); enable the controllers the host delegates, where it can."""
        try:
            parent = parent or own_cgroup2()
        except OSError as exc:
            raise CgroupError(f"cannot read this process's cgroups: {exc}") from None
        if parent is None:
            raise CgroupError("no cgroup v2 hierarchy is mounted")
        probe = parent / f"{GROUP_PREFIX}probe-{os.getpid()}"
        try:
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError as exc:
            raise CgroupError(
                f"cannot make a cgroup v2 group in {parent}: {exc.strerror}"
            ) from None
        return cls(parent, _delegate(parent))

    def create(self, limits: SandboxLimits) -> BotGroup:
        self._count += 1
        group = BotGroup(
            self.parent / f"{GROUP_PREFIX}{os.getpid()}-{self._count}", limits, self.limited
        )
        try:
            group.path.mkdir()
            if "memory" in self.limited:
                write_file(group.path / "memory.max", str(limits.memory_bytes))
                with contextlib.suppress(OSError):
                    write_file(group.path / "memory.swap.max", "0")
            if "pids" in self.limited:
                write_file(group.path / "pids.max", str(limits.processes + HELPER_TASKS))
            if "cpu" in self.limited and limits.turn_cores:
                quota = max(1000, int(limits.turn_cores * CFS_PERIOD_US))
                write_file(group.path / "cpu.max", f"{quota} {CFS_PERIOD_US}")
        except OSError as exc:
            group.remove()
            raise CgroupError(f"cannot set up the bot's cgroup v2 group: {exc}") from None
        return group

    def reap(self, *, all_runners: bool = False) -> int:
        """Kill and remove bot groups left by runners that are gone (or all of ours)."""
        removed = 0
        mine = f"{GROUP_PREFIX}{os.getpid()}-"
        with contextlib.suppress(OSError):
            for child in self.parent.iterdir():
                if not child.name.startswith(GROUP_PREFIX) or not child.is_dir():
                    continue
                owner = child.name[len(GROUP_PREFIX) :].split("-", 1)[0]
                if not owner.isdigit():
                    continue
                ours = child.name.startswith(mine)
                if (ours and not all_runners) or (not ours and Path(f"/proc/{owner}").exists()):
                    continue
                group = BotGroup(child, SandboxLimits(), frozenset())
                group.kill()
                group.remove()
                removed += 1
        return removed

    def describe(self) -> str:
        held = ", ".join(sorted(self.limited)) or "no controller"
        return f"cgroup v2 at {self.parent} ({held} delegated)"


def _delegate(parent: Path) -> frozenset[str]:
    """The limiting controllers children of ``parent`` get: those already in its
    ``cgroup.subtree_control``, and those it offers (``cgroup.controllers``) that it
    can turn on (a group holding processes cannot, but at the root)."""
    try:
        offered = set(read_file(parent / "cgroup.controllers").split())
        enabled = set(read_file(parent / "cgroup.subtree_control").split())
    except OSError:
        return frozenset()
    for name in sorted((offered - enabled) & set(LIMITED)):
        with contextlib.suppress(OSError):
            write_file(parent / "cgroup.subtree_control", f"+{name}")
            enabled.add(name)
    return frozenset(enabled & set(LIMITED))


__all__ = ["BotGroup", "Cgroups2", "own_cgroup2"]
