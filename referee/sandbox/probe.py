"""Can this machine sandbox bots? Checked once, before a tournament starts.

The answer names every missing piece, so the organiser can fix it or turn the sandbox
off knowingly: the programs (Debian packages ``bubblewrap``, ``socat``, ``util-linux``
for setpriv), root (to make cgroups and to become an unprivileged user), the cgroup v1
controllers, and a real trial run in fresh namespaces (which fails inside some
containers).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
import sys

from referee.sandbox.cgroups import CgroupError, Cgroups

PROGRAMS = {
    "bwrap": "bubblewrap",
    "socat": "socat",
    "setpriv": "util-linux",
}
TRIAL_TIMEOUT_S = 20.0


class SandboxUnavailable(Exception):
    """Bots cannot be sandboxed as asked; the message names every missing piece."""


@dataclasses.dataclass(frozen=True, slots=True)
class Support:
    """Whether bots can be sandboxed here, and why not."""

    problems: tuple[str, ...]
    bwrap: str = ""
    """The path of bubblewrap, when found."""
    version: str = ""
    cgroups: Cgroups | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    def require(self) -> Cgroups:
        """The cgroups to sandbox with; SandboxUnavailable naming what is missing."""
        if not self.ok or self.cgroups is None:
            raise SandboxUnavailable(f"this machine cannot sandbox bots: {self.describe()}")
        return self.cgroups

    def describe(self) -> str:
        if self.ok:
            assert self.cgroups is not None
            return f"{self.version} with cgroup v1 ({', '.join(sorted(self.cgroups.dirs))})"
        return "; ".join(self.problems)


def _trial(bwrap: str) -> str | None:
    """Run ``true`` in the namespaces and as the user a bot gets; the error, if any."""
    argv = [
        bwrap,
        *("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"),
        *("--die-with-parent", "--new-session", "--cap-drop", "ALL"),
        *("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"),
        *("--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"),
        *(
            a
            for name in ("bin", "sbin", "lib", "lib64")
            if os.path.exists(f"/{name}")
            for a in (
                ("--symlink", os.readlink(f"/{name}"), f"/{name}")
                if os.path.islink(f"/{name}")
                else ("--ro-bind", f"/{name}", f"/{name}")
            )
        ),
        *("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"),
        *("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
        *("--inh-caps=-all", "--bounding-set=-all", "--", "/bin/sh", "-c", "exit 0"),
    ]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=TRIAL_TIMEOUT_S,
            check=False,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not run: {exc}"
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        return (
            "bubblewrap cannot make namespaces here"
            f" ({detail[-1] if detail else f'exit {done.returncode}'})"
        )
    return None


@functools.cache
def probe() -> Support:
    """What this machine can do (cached for the process)."""
    problems: list[str] = []
    if not sys.platform.startswith("linux"):
        return Support(("the sandbox needs Linux (namespaces and cgroups)",))
    if os.geteuid() != 0:
        problems.append(
            "the sandbox needs to run as root here (to make cgroups and to start each bot "
            "as an unprivileged user)"
        )
    found = {name: shutil.which(name) for name in PROGRAMS}
    missing = sorted({PROGRAMS[n] for n, path in found.items() if path is None})
    if missing:
        problems.append(f"missing programs: install the Debian packages {', '.join(missing)}")
    cgroups = None
    try:
        cgroups = Cgroups.discover()
    except CgroupError as exc:
        problems.append(str(exc))
    bwrap = found["bwrap"] or ""
    version = ""
    if bwrap:
        try:
            version = subprocess.run(
                [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            version = "bubblewrap"
        if not problems:
            error = _trial(bwrap)
            if error:
                problems.append(error)
    return Support(tuple(problems), bwrap, version, cgroups)


__all__ = ["SandboxUnavailable", "Support", "probe"]
