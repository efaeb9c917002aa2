"""The ``referee`` command line run as a user runs it: a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_referee(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``referee ARGS`` in ``cwd`` (the checkout by default), with ``env`` added to this
    process's environment; never raises for an exit status."""
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=timeout,
        check=False,
    )
