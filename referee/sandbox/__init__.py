"""Sandboxes for untrusted bot programs: bubblewrap namespaces, cgroup v1 limits or rlimits.

A sandboxed bot sees the system and its own files read-only, has a private /tmp that
lives only as long as its match, runs as an unprivileged user in its own PID, IPC and
network namespaces where 127.0.0.1:PORT is the referee and nothing else is reachable,
and is held to limits on memory, CPU time, processes and open files; breaking one kills
it, and the cause is reported (``Breach``). See docs/tournaments.md, "Sandbox".

- ``limits``: what a bot may use (``SandboxLimits``) and the breaches;
- ``cgroups``: the bot's control groups (v1: memory, pids, cpu, cpuacct, cpuset);
- ``bwrap``: the command that runs a bot in bubblewrap;
- ``jail``: one bot's sandbox for one match, from creation to its report;
- ``bridge``: the referee's Unix socket, and cores for bots that get one each;
- ``seccomp``: the filter against the kernel keyrings;
- ``processes``: a jail's processes by its PID namespace, where no cgroup holds them;
- ``cgroup2``: a bot's cgroup v2 group (freeze, kill, CPU; limits where delegated);
- ``private_files``: what of an author's folder no bot sees (nor a submission carries);
- ``view``: what one bot sees; ``jailer``: the one ``Jailer`` of a referee's jails;
- ``probe``: the best jail this machine allows (``Level``: full, light, none), and why
  not better.
"""

from referee.sandbox.bridge import CoreAllocator, RefereeSocket
from referee.sandbox.bwrap import JailSpec, Level
from referee.sandbox.cgroups import CgroupError, Cgroups
from referee.sandbox.jail import Jail, JailReport, TableJails
from referee.sandbox.limits import LIMIT_FIELDS, Breach, SandboxLimits
from referee.sandbox.probe import SandboxUnavailable, Support, probe, probe_light

__all__ = [
    "LIMIT_FIELDS",
    "Breach",
    "CgroupError",
    "Cgroups",
    "CoreAllocator",
    "Jail",
    "JailReport",
    "JailSpec",
    "Level",
    "RefereeSocket",
    "SandboxLimits",
    "SandboxUnavailable",
    "Support",
    "TableJails",
    "probe",
    "probe_light",
]
