"""Builds each starter kit once per test session (build.sh), failing loudly if it cannot."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KITS = ["python", "typescript", "go", "rust", "java", "cpp"]
_built: dict[str, subprocess.CompletedProcess[str]] = {}


def build(kit: str) -> Path:
    """The kit's bot launcher, after a successful build; fails the test otherwise."""
    if kit not in _built:
        _built[kit] = subprocess.run(
            ["bash", str(ROOT / "clients" / kit / "build.sh")],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    done = _built[kit]
    if done.returncode != 0:
        pytest.fail(
            f"clients/{kit}/build.sh failed (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}",
            pytrace=False,
        )
    return ROOT / "clients" / kit / "bot"
