"""The hosts a jail must hold on, made on this machine, and ``referee`` run on each.

- ``root``: root with cgroup v1 (the full jail);
- ``root-cgroup2``: root on a cgroup-v2-only host (v1 hidden in a private mount
  namespace, the unified hierarchy mounted at /sys/fs/cgroup, no controllers): the light
  jail with a cgroup v2 group of its own (freeze, kill, cpu.stat);
- ``root-no-cgroups``: root with no cgroup at all (all of /sys/fs/cgroup hidden): the
  light jail held by the referee's own accounting (its PID namespace);
- ``user``: the ordinary user 65534 (the light jail, the referee's own accounting).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import jailing
from referee_cli import run_referee

KINDS = ("root", "root-cgroup2", "root-no-cgroups", "user")
_HIDE = {
    "root-cgroup2": "mount -t tmpfs none /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup",
    "root-no-cgroups": "mount -t tmpfs none /sys/fs/cgroup",
}
LEVEL = {"root": "full", "root-cgroup2": "light", "root-no-cgroups": "light", "user": "light"}


class Host:
    """One kind of host: how to run ``referee`` there, and folders its user owns."""

    def __init__(self, kind: str, python: Path | None = None) -> None:
        self.kind = kind
        self.python = python
        """The ordinary user's Python (``user``)."""
        if os.geteuid() != 0:
            jailing.unavailable(
                f"the {kind} host is made as root (it hides cgroups, or becomes 65534)"
            )
        if kind in _HIDE and shutil.which("unshare") is None:
            jailing.unavailable("needs util-linux's unshare")

    @property
    def uid(self) -> int:
        return jailing.NOBODY if self.kind == "user" else 0

    def folder(self, name: str = "bot") -> Path:
        """A new folder of this host's user, outside /tmp (where an author keeps a bot),
        readable by others (as a home folder usually is); the caller removes it."""
        base = Path(tempfile.mkdtemp(prefix=f"pusoy-{name}-", dir="/var/tmp"))
        base.chmod(0o755)
        if self.uid:
            os.chown(base, self.uid, self.uid)
        return base

    def own(self, folder: Path) -> None:
        """Hand everything under ``folder`` to this host's user."""
        if not self.uid:
            return
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, self.uid, self.uid)

    def referee(
        self,
        *args: str,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = 240,
    ) -> subprocess.CompletedProcess[str]:
        """``referee ARGS`` on this host, in ``cwd``; never raises for an exit status."""
        if self.kind == "user":
            assert self.python is not None, "the user host needs its Python"
            # Its home holds its folders, as /home/NAME holds ~/firstbot.
            env = {"HOME": "/var/tmp", **(env or {})}
            return jailing.run_as_nobody(
                [str(self.python), "-m", "referee.cli", *args], cwd=cwd, env=env, timeout=timeout
            )
        prefix: Sequence[str] = ()
        if self.kind in _HIDE:
            script = f'{_HIDE[self.kind]} && exec "$@"'
            prefix = ("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh")
        return run_referee(*args, cwd=cwd, env=env, timeout=timeout, prefix=prefix)

    def check_level(self, folder: Path) -> None:
        """The host gives the jail it should (else: skipped, or failed under CI)."""
        done = self.referee(
            "match", "--dry-run", "--bot", "{python} -c pass", "--bot", "greedy",
            "--bot", "greedy", "--bot", "greedy", cwd=folder,
        )  # fmt: skip
        want = f"{LEVEL[self.kind]} jail"
        if want not in done.stdout:
            jailing.unavailable(f"no {want} on the {self.kind} host: {done.stdout}{done.stderr}")
        if self.kind == "root-cgroup2" and "cgroup v2" not in done.stdout:
            jailing.unavailable(f"no cgroup v2 group on the {self.kind} host: {done.stdout}")
