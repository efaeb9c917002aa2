"""Control groups (v1) for one bot: memory, processes, CPU time, CPU share and cores.

Each sandboxed bot gets a group of its own in every hierarchy it uses, made next to
each other under the tournament process's own group (``pusoy-bot-<runner pid>-<n>``),
so that every bot weighs the same as any one process in the CPU scheduler and a
bot's memory counts towards whatever limit the tournament itself runs under.

- ``memory``: ``memory.limit_in_bytes`` (and the same for memory plus swap); the kernel
  kills a process of the group when it is over (``oom_kill`` in ``memory.oom_control``).
  Temporary files on the bot's tmpfs are charged here too.
- ``pids``: ``pids.max`` bounds processes and threads; a refused fork counts in
  ``pids.events``.
- ``cpuacct``: ``cpuacct.usage``, the CPU time of every process of the group.
- ``cpu``: ``cpu.shares`` (equal for every bot) and an optional CFS quota in cores.
- ``cpuset``: the cores the bot may run on, when it has cores of its own.

Breaking the memory, process or CPU-time limit is a ``Breach``: the sandbox kills the
whole group and the tournament records the cause.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from referee.sandbox.limits import HELPER_TASKS, Breach, SandboxLimits

REQUIRED = ("memory", "pids", "cpu", "cpuacct")
"""Controllers every sandbox needs; ``cpuset`` only for bots with cores of their own."""
OPTIONAL = ("cpuset",)
GROUP_PREFIX = "pusoy-bot-"
CFS_PERIOD_US = 100_000


class CgroupError(OSError):
    """The cgroups a sandbox needs are missing or cannot be written."""


def read_file(path: Path) -> str:
    with open(path, encoding="ascii") as f:
        return f.read()


def write_file(path: Path, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


def kill_until_empty(
    pids: Callable[[], list[int]], between: Callable[[], None] = lambda: None, rounds: int = 100
) -> bool:
    """SIGKILL every process ``pids()`` lists until it lists none (``rounds`` at most,
    2 ms apart, ``between`` run after each round's signals); whether it emptied."""
    for _ in range(rounds):
        found = pids()
        if not found:
            return True
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        between()
        time.sleep(0.002)
    return not pids()


def field(text: str, name: str) -> int:
    """A ``name value`` line of a cgroup file such as memory.oom_control (0 if absent).

    >>> field("oom_kill_disable 0\\nunder_oom 0\\noom_kill 2\\n", "oom_kill")
    2
    """
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value)
    return 0


def own_cgroups(mountinfo: str | None = None, self_cgroup: str | None = None) -> dict[str, Path]:
    """Controller -> this process's own group directory, for every mounted v1 hierarchy.

    >>> mi = "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\\n"
    >>> own_cgroups(mi, "4:memory:/session/a\\n0::/\\n")
    {'memory': PosixPath('/sys/fs/cgroup/memory/session/a')}
    """
    if mountinfo is None:
        mountinfo = read_file(Path("/proc/self/mountinfo"))
    if self_cgroup is None:
        self_cgroup = read_file(Path("/proc/self/cgroup"))
    mounts: dict[str, tuple[str, Path]] = {}
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] != "cgroup":
            continue
        for option in tail[2].split(","):
            mounts.setdefault(option, (fields[3], Path(fields[4])))
    out: dict[str, Path] = {}
    for line in self_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[1]:
            continue
        for controller in parts[1].split(","):
            if controller not in mounts:
                continue
            root, point = mounts[controller]
            path = parts[2]
            if root != "/" and path.startswith(root):
                path = path[len(root) :]
            out[controller] = point / path.lstrip("/")
    return out


@dataclasses.dataclass
class BotCgroup:
    """One bot's groups, one per controller (co-mounted controllers share one)."""

    dirs: dict[str, Path]
    limits: SandboxLimits

    @property
    def unique_dirs(self) -> list[Path]:
        return sorted(set(self.dirs.values()))

    def procs_files(self) -> list[Path]:
        """What a process writes its pid to, to join the groups (before it forks)."""
        return [d / "cgroup.procs" for d in self.unique_dirs]

    def _number(self, controller: str, name: str) -> int:
        """One of the controller's figures; 0 when it cannot be read (the group is gone,
        or the kernel does not keep it): a measure, never a reason to fail."""
        try:
            return int(read_file(self.dirs[controller] / name))
        except (OSError, ValueError):
            return 0

    def cpu_ns(self) -> int:
        """CPU time of every process the group has had, in nanoseconds."""
        return self._number("cpuacct", "cpuacct.usage")

    def memory_now(self) -> int:
        return self._number("memory", "memory.usage_in_bytes")

    def tasks(self) -> int:
        """Processes and threads in the group now."""
        return self._number("pids", "pids.current")

    def memory_peak(self) -> int:
        return self._number("memory", "memory.max_usage_in_bytes")

    def breach(self) -> Breach | None:
        """The limit the bot has broken, if any (memory first: the kernel acts on it)."""
        try:
            control = read_file(self.dirs["memory"] / "memory.oom_control")
            if field(control, "oom_kill") or field(control, "under_oom"):
                return Breach.MEMORY
            if field(read_file(self.dirs["pids"] / "pids.events"), "max"):
                return Breach.PROCESSES
        except (OSError, ValueError):
            pass
        if self.limits.cpu_s and self.cpu_ns() > self.limits.cpu_s * 1e9:
            return Breach.CPU
        return None

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in self.procs_files():
            with contextlib.suppress(OSError, ValueError):
                found.update(int(x) for x in read_file(path).split())
        return sorted(found)

    def kill(self, rounds: int = 100) -> bool:
        """SIGKILL every process of the group until none is left; whether it emptied.
        The process limit bounds how many a bot can fork in between."""
        return kill_until_empty(self.pids, rounds=rounds)

    def remove(self) -> bool:
        """Remove the groups (they must be empty); whether all went."""
        gone = True
        for d in self.unique_dirs:
            for attempt in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if attempt == 49:
                        gone = False
                    time.sleep(0.002)  # tasks killed a moment ago are still leaving
        return gone


class Cgroups:
    """The hierarchies this process can make bot groups in."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs
        self._count = 0

    @classmethod
    def discover(cls) -> Cgroups:
        """Find and check them; CgroupError says what is missing or read-only."""
        try:
            found = own_cgroups()
        except OSError as exc:
            raise CgroupError(f"cannot read this process's cgroups: {exc}") from None
        missing = [c for c in REQUIRED if c not in found]
        if missing:
            raise CgroupError(
                f"cgroup v1 controllers {', '.join(missing)} are not mounted "
                "(the sandbox needs memory, pids, cpu and cpuacct under /sys/fs/cgroup)"
            )
        dirs = {c: found[c] for c in (*REQUIRED, *OPTIONAL) if c in found}
        probe = f"{GROUP_PREFIX}probe-{os.getpid()}"
        for controller, d in dirs.items():
            try:
                (d / probe).mkdir(exist_ok=True)
                (d / probe).rmdir()
            except OSError as exc:
                raise CgroupError(
                    f"cannot make a {controller} cgroup in {d}: {exc.strerror or exc}"
                ) from None
        return cls(dirs)

    @property
    def has_cpuset(self) -> bool:
        return "cpuset" in self.dirs

    def create(self, limits: SandboxLimits, *, cpus: str = "", cpu_cores: float = 0.0) -> BotCgroup:
        """New groups for one bot, limits set, nobody in them yet. ``cpus`` (a cpuset
        list such as "2" or "2-3") pins the bot; empty: any core."""
        self._count += 1
        name = f"{GROUP_PREFIX}{os.getpid()}-{self._count}"
        controllers = [*REQUIRED, *(["cpuset"] if cpus else [])]
        dirs = {c: self.dirs[c] / name for c in controllers}
        group = BotCgroup(dirs, limits)
        try:
            for d in group.unique_dirs:
                d.mkdir()
            mem = dirs["memory"]
            write_file(mem / "memory.limit_in_bytes", str(limits.memory_bytes))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                write_file(mem / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
            write_file(dirs["pids"] / "pids.max", str(limits.processes + HELPER_TASKS))
            write_file(dirs["cpu"] / "cpu.shares", "1024")
            if cpu_cores:
                write_file(dirs["cpu"] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
                write_file(dirs["cpu"] / "cpu.cfs_quota_us", str(int(cpu_cores * CFS_PERIOD_US)))
            if cpus:
                cs = dirs["cpuset"]
                write_file(
                    cs / "cpuset.mems", read_file(self.dirs["cpuset"] / "cpuset.mems").strip()
                )
                write_file(cs / "cpuset.cpus", cpus)
        except OSError as exc:
            group.remove()
            raise CgroupError(f"cannot set up the bot's cgroups: {exc}") from None
        return group

    def reap(self, *, all_runners: bool = False) -> int:
        """Kill and remove bot groups left by runners that are gone (or, with
        ``all_runners``, by this one too); how many groups there were, each taken in
        every hierarchy it has."""
        mine = f"{GROUP_PREFIX}{os.getpid()}-"
        found: dict[str, dict[str, Path]] = {}
        for controller, d in self.dirs.items():
            with contextlib.suppress(OSError):
                for child in d.iterdir():
                    if child.name.startswith(GROUP_PREFIX) and child.is_dir():
                        found.setdefault(child.name, {})[controller] = child
        removed = 0
        for name, dirs in sorted(found.items()):
            owner = name[len(GROUP_PREFIX) :].split("-", 1)[0]
            if not owner.isdigit():
                continue
            ours = name.startswith(mine)
            if (ours and not all_runners) or (not ours and Path(f"/proc/{owner}").exists()):
                continue  # ours, still in use; or another runner's bots, still playing
            group = BotCgroup(dirs, SandboxLimits())
            group.kill()
            group.remove()
            removed += 1
        return removed


__all__ = ["BotCgroup", "CgroupError", "Cgroups", "field", "own_cgroups", "read_file", "write_file"]
