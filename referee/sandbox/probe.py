"""Can this machine jail bots, and how well? Checked once per process, before bots start.

The answer is the best ``Level`` the machine allows and, for each better level that is
missing, what is missing, so the organiser can fix it or choose knowingly:

- ``FULL``: root (to make cgroups and to start each bot as nobody), the cgroup v1
  controllers, the programs (Debian packages ``bubblewrap``, ``socat``, ``util-linux``
  for setpriv) and a real trial run in fresh namespaces (which fails inside some
  containers);
- ``LIGHT``: bubblewrap and socat, and a trial run through an unprivileged user
  namespace (as root: bubblewrap as root, then nobody in a user namespace of its own,
  with util-linux's ``unshare`` and ``prlimit``); some systems turn unprivileged user
  namespaces off (``kernel.unprivileged_userns_clone``, AppArmor's
  ``kernel.apparmor_restrict_unprivileged_userns``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

from referee.sandbox.bwrap import Level
from referee.sandbox.cgroup2 import Cgroups2
from referee.sandbox.cgroups import CgroupError, Cgroups

PROGRAMS = {
    "bwrap": "bubblewrap",
    "socat": "socat",
    "setpriv": "util-linux",
    "unshare": "util-linux",
    "prlimit": "util-linux",
}
FULL_PROGRAMS = ("bwrap", "socat", "setpriv")
LIGHT_PROGRAMS = ("bwrap", "socat", "setpriv")
ROOT_LIGHT_PROGRAMS = ("bwrap", "socat", "setpriv", "unshare", "prlimit")
TRIAL_TIMEOUT_S = 20.0
TRIAL_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


class SandboxUnavailable(Exception):
    """Bots cannot be jailed as asked; the message names every missing piece."""


@dataclasses.dataclass(frozen=True, slots=True)
class Support:
    """The best jail this machine allows, and why the better ones are missing."""

    level: Level
    missing: Mapping[Level, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """For each level better than ``level``: what it lacks here."""
    bwrap: str = ""
    """The path of bubblewrap, when found."""
    version: str = ""
    cgroups: Cgroups | None = dataclasses.field(default=None, compare=False, repr=False)
    cgroups2: Cgroups2 | None = dataclasses.field(default=None, compare=False, repr=False)
    """A light jail's groups where the host lets us make cgroup v2 groups (root)."""

    @property
    def ok(self) -> bool:
        """Some jail can be made."""
        return self.level is not Level.NONE

    def allows(self, level: Level) -> bool:
        order = list(Level)
        return order.index(self.level) <= order.index(level)

    def why_not(self, level: Level) -> str:
        """What ``level`` lacks here ('' when it can be made)."""
        if self.allows(level):
            return ""
        return "; ".join(self.missing.get(level, ("not checked",)))

    def require(self, level: Level = Level.LIGHT) -> Level:
        """The best level, if it is ``level`` or better; SandboxUnavailable naming what
        is missing otherwise."""
        if not self.allows(level):
            what = "a full jail" if level is Level.FULL else "any jail"
            raise SandboxUnavailable(f"this machine cannot make {what} for bots: {self.explain()}")
        return self.level

    def explain(self) -> str:
        """Each missing level and why, best first."""
        return "; ".join(
            f"{lvl.value} jail: {'; '.join(why)}" for lvl, why in self.missing.items() if why
        )

    def describe(self) -> str:
        if self.level is Level.FULL:
            assert self.cgroups is not None
            return f"{self.version} with cgroup v1 ({', '.join(sorted(self.cgroups.dirs))})"
        if self.level is Level.LIGHT:
            full = self.why_not(Level.FULL)
            groups = (
                self.cgroups2.describe()
                if self.cgroups2 is not None
                else "the referee's own accounting (no cgroup of its own)"
            )
            return f"{self.version} in a user namespace, {groups} (no full jail: {full})"
        return self.explain()


def _trial(bwrap: str, options: Sequence[str], command: Sequence[str]) -> str | None:
    """Run ``command`` in fresh namespaces as a bot would; the error, if any."""
    argv = [
        bwrap,
        *("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"),
        *("--die-with-parent", "--new-session", "--cap-drop", "ALL"),
        *options,
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
        *command,
    ]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=TRIAL_TIMEOUT_S,
            check=False,
            env=TRIAL_ENV,
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


_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
_NO_CAPS = ("--inh-caps=-all", "--bounding-set=-all", "--")
_SETUID_CAPS = ("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
_TRUE = ("/bin/sh", "-c", "exit 0")


def _missing_programs(found: Mapping[str, str | None], names: Sequence[str]) -> str | None:
    missing = sorted({PROGRAMS[n] for n in names if found.get(n) is None})
    if missing:
        return f"missing programs: install the Debian packages {', '.join(missing)}"
    return None


def _full_problems(found: Mapping[str, str | None]) -> tuple[list[str], Cgroups | None]:
    problems: list[str] = []
    if os.geteuid() != 0:
        problems.append(
            "it needs root (to make cgroups and to start each bot as an unprivileged user)"
        )
    missing = _missing_programs(found, FULL_PROGRAMS)
    if missing:
        problems.append(missing)
    cgroups = None
    try:
        cgroups = Cgroups.discover()
    except CgroupError as exc:
        problems.append(str(exc))
    bwrap = found["bwrap"]
    if not problems and bwrap:
        error = _trial(bwrap, _SETUID_CAPS, (*_NOBODY, *_NO_CAPS, *_TRUE))
        if error:
            problems.append(error)
    return problems, cgroups


def _light_problems(found: Mapping[str, str | None]) -> list[str]:
    root = os.geteuid() == 0
    missing = _missing_programs(found, ROOT_LIGHT_PROGRAMS if root else LIGHT_PROGRAMS)
    bwrap = found["bwrap"]
    if missing or not bwrap:
        return [missing or "bubblewrap is missing"]
    if root:
        nested = ("unshare", "--user", "--map-current-user", "--", *_TRUE)
        error = _trial(bwrap, _SETUID_CAPS, (*_NOBODY, *_NO_CAPS, *nested))
    else:
        error = _trial(bwrap, ("--unshare-user",), _TRUE)
    if error:
        return [f"{error}: unprivileged user namespaces may be turned off"]
    return []


def _found() -> dict[str, str | None]:
    return {name: shutil.which(name, path=TRIAL_ENV["PATH"]) for name in PROGRAMS}


def _version(bwrap: str | None) -> str:
    if not bwrap:
        return ""
    try:
        out = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out or "bubblewrap"


_NOT_LINUX = "bots can be jailed on Linux alone (namespaces)"


@functools.cache
def probe() -> Support:
    """The best jail this machine allows (cached for the process)."""
    if not sys.platform.startswith("linux"):
        return Support(Level.NONE, {Level.FULL: (_NOT_LINUX,), Level.LIGHT: (_NOT_LINUX,)})
    found = _found()
    version = _version(found["bwrap"])
    full, cgroups = _full_problems(found)
    if not full:
        return Support(Level.FULL, {}, found["bwrap"] or "", version, cgroups)
    light = _light_problems(found)
    level = Level.NONE if light else Level.LIGHT
    missing = {Level.FULL: tuple(full), **({Level.LIGHT: tuple(light)} if light else {})}
    groups = _cgroups2() if not light else None
    return Support(level, missing, found["bwrap"] or "", version, cgroups2=groups)


def _cgroups2() -> Cgroups2 | None:
    """Groups of our own in the cgroup v2 hierarchy, where they can be made."""
    try:
        return Cgroups2.discover()
    except CgroupError:
        return None


@functools.cache
def probe_light() -> Support:
    """The light jail alone, also where the full one could be made (a machine's
    fallback, and how tests run the light jail as root)."""
    if not sys.platform.startswith("linux"):
        return Support(Level.NONE, {Level.LIGHT: (_NOT_LINUX,)})
    found = _found()
    light = _light_problems(found)
    if light:
        return Support(Level.NONE, {Level.LIGHT: tuple(light)}, found["bwrap"] or "")
    return Support(
        Level.LIGHT,
        {Level.FULL: ("not asked for",)},
        found["bwrap"] or "",
        _version(found["bwrap"]),
        cgroups2=_cgroups2(),
    )


__all__ = ["SandboxUnavailable", "Support", "probe", "probe_light"]
