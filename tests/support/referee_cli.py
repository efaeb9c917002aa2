"""The ``referee`` command line run as a user runs it: a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_referee(
    *args: str,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """``referee ARGS`` in ``cwd`` (the checkout by default), with ``env`` added to this
    process's environment, behind ``prefix`` (a command that runs it, e.g. in a namespace
    of its own); never raises for an exit status."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=timeout,
        check=False,
    )
