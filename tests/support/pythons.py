"""This checkout's Python environment with some of its packages left out: what a user has
who installed the referee without an extra.

The stand-in for site-packages is a folder of links to every entry of the real one but
the left-out packages' (their modules, ``.dist-info`` and bundled libraries); a Python
started isolated (``-I -S``: no site-packages, no PYTHONPATH) adds only that folder, with
its ``.pth`` files, so the project (installed editable) imports and the left-out packages
do not. Nothing is installed, and it takes a few milliseconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _package_of(entry: str) -> str:
    """``sqlalchemy`` for ``sqlalchemy``, ``SQLAlchemy-2.0.dist-info``, ``sqlalchemy.libs``."""
    return entry.split("-", 1)[0].split(".", 1)[0].lower()


def site_without(folder: Path, packages: Sequence[str]) -> Path:
    """A site folder in ``folder`` with this environment's packages but ``packages``."""
    site = Path(sysconfig.get_paths()["purelib"])
    out = folder / "site"
    out.mkdir(parents=True)
    left_out = {p.lower() for p in packages}
    for entry in site.iterdir():
        if _package_of(entry.name) not in left_out:
            (out / entry.name).symlink_to(entry)
    return out


_HARNESS = """
import contextlib, io, json, site, sys
site.addsitedir(sys.argv[1])
from referee.cli import main
results = []
for argv in json.loads(sys.argv[2]):
    err = io.StringIO()
    code, raised = None, ""
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:
            raised = repr(exc)
    results.append({"argv": argv, "code": code, "stderr": err.getvalue(), "raised": raised})
print(json.dumps(results))
"""


def run_commands_without(
    packages: Sequence[str],
    commands: Sequence[Sequence[str]],
    *,
    folder: Path,
    cwd: Path,
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Each ``referee`` command of ``commands`` (arguments only) run by ``referee.cli.main``
    in one Python without ``packages``: per command its exit code, what it wrote to
    stderr, and the exception that escaped ``main`` (``raised``, empty when none)."""
    site = site_without(folder, packages)
    done = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            _HARNESS,
            str(site),
            json.dumps(list(map(list, commands))),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return results
