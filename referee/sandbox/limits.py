"""What a sandboxed bot may use, and the names of the limits it can break."""

from __future__ import annotations

import dataclasses
import enum

HELPER_TASKS = 12
"""Processes and threads the sandbox itself runs in a bot's cgroup (its launcher, the
output cap, bubblewrap, the referee forwarder), added on top of ``SandboxLimits.processes``."""
TURN_BURST_S = 2.0
"""CPU seconds a bot may use beyond ``turn_cores`` before it is stopped (a runtime's
compiler threads, a garbage collector)."""


class Breach(enum.StrEnum):
    """A limit a bot broke; the bot was killed for it. The value is what results show."""

    MEMORY = "memory limit"
    CPU = "CPU limit"
    PROCESSES = "process limit"


@dataclasses.dataclass(frozen=True, slots=True)
class SandboxLimits:
    """One bot's limits for one match.

    >>> SandboxLimits(memory_mb=256).memory_bytes
    268435456
    """

    memory_mb: int = 1024
    """Resident memory of all its processes, temporary files included (cgroup memory)."""
    cpu_s: float = 0.0
    """CPU seconds over the whole match, all its processes together; 0: no limit."""
    turn_cores: float = 1.0
    """Cores it may keep busy once play has begun, on average over the time it runs
    (between its turns it is stopped), beyond a burst of ``TURN_BURST_S``; 0: no limit."""
    processes: int = 128
    """Processes and threads at once (cgroup pids); every thread counts."""
    open_files: int = 1024
    """Open files per process (RLIMIT_NOFILE): opening one more fails, nothing is killed."""
    tmp_mb: int = 64
    """Size of its private /tmp (and of /dev/shm)."""
    stderr_kb: int = 1024
    """What is kept of its standard output and error; the rest is read and dropped."""

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024

    @property
    def tmp_bytes(self) -> int:
        return self.tmp_mb * 1024 * 1024

    @property
    def stderr_bytes(self) -> int:
        return self.stderr_kb * 1024

    def merged(self, overrides: dict[str, float | int]) -> SandboxLimits:
        """These limits with some fields replaced (a bot's own limits over the defaults)."""
        return dataclasses.replace(self, **overrides)  # type: ignore[arg-type]


LIMIT_FIELDS = tuple(f.name for f in dataclasses.fields(SandboxLimits))

__all__ = ["HELPER_TASKS", "LIMIT_FIELDS", "TURN_BURST_S", "Breach", "SandboxLimits"]
