"""Jails in tests: a sandbox test never skips silently under CI, and a Python that the
ordinary user 65534 (nobody) can run, with this project importable."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from referee.sandbox import Level, SandboxUnavailable, Support, probe

NOBODY = 65534
AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")
SYSTEM_PYTHON = Path("/usr/bin/python3")


def under_ci() -> bool:
    """Whether a CI runner runs the tests (they set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str) -> None:
    """Skip, with the reason; under CI (CI=true) fail instead: CI's machine is set up to
    sandbox (scripts/system-packages, root), and a sandbox test that cannot run there is
    a broken CI machine, not a pass. The one place every sandbox test goes through."""
    if under_ci():
        pytest.fail(
            f"CI={os.environ['CI']}: a sandbox test may not skip, and {reason}", pytrace=False
        )
    pytest.skip(reason)


def require_level(level: Level) -> Support:
    """This machine's sandbox support, if it makes ``level`` or better (else skipped or,
    under CI, failed with what is missing)."""
    support = probe()
    try:
        support.require(level)
    except SandboxUnavailable as exc:
        unavailable(str(exc))
    return support


def _searchable_by_others(path: Path) -> bool:
    return all(os.stat(p).st_mode & 0o005 == 0o005 for p in [path, *path.parents])


def nobody_python() -> Iterator[Path]:
    """A virtualenv made from /usr/bin/python3 (readable by every user, under /tmp) whose
    site-packages adds this checkout's environment: the project, its SDK and their
    dependencies, without installing anything again (a second or two). Needs root (to
    become 65534) and /usr/bin/python3 of this Python's version."""
    if os.geteuid() != 0:
        unavailable("becoming user 65534 needs root")
    if not SYSTEM_PYTHON.exists() or shutil.which("setpriv") is None:
        unavailable("needs /usr/bin/python3 and setpriv (util-linux)")
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if version != str(sys.version_info[:2]):
        unavailable(
            f"/usr/bin/python3 is {version}, the project's environment {sys.version_info[:2]}"
        )
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    if not _searchable_by_others(site):
        unavailable(f"user 65534 cannot read this environment's packages ({site})")
    folder = Path(tempfile.mkdtemp(prefix="pusoy-nobody-python-"))
    try:
        folder.chmod(0o755)
        venv = folder / "venv"
        subprocess.run(
            [str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)],
            check=True,
            capture_output=True,
        )
        (venv_site(venv) / "pusoy-project.pth").write_text(
            f"import site; site.addsitedir({str(site)!r})\n"
        )
        python = venv / "bin" / "python"
        done = run_as_nobody(
            [str(python), "-c", "import referee.cli, pusoy_client, grpc"], cwd=Path("/tmp")
        )
        if done.returncode != 0:
            unavailable(f"user 65534 cannot import the project: {done.stderr[-500:]}")
        yield python
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def venv_site(venv: Path) -> Path:
    (found,) = (venv / "lib").glob("python3*/site-packages")
    return found


def nobody_folder() -> Path:
    """A new folder under /tmp owned by 65534, mode 0700 (the caller removes it)."""
    folder = Path(tempfile.mkdtemp(prefix="pusoy-nobody-"))
    os.chown(folder, NOBODY, NOBODY)
    return folder


def run_as_nobody(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``argv`` as user 65534 with a small environment (and ``env``); never raises for
    an exit status."""
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": str(cwd)}
    return subprocess.run(
        [*AS_NOBODY, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**base, **(env or {})},
        timeout=timeout,
        check=False,
    )
