"""The quick start on a fresh clone: ``./scripts/demo`` twice, as a newcomer runs it.

A ``git clone`` of this repository (its committed state) into a temporary folder, where
the demo makes its own ``.venv`` with the system's Python and pip (pip's cache as the
machine has it). The first run says what it installs, step by step, installs what the
referee needs to run and nothing more (no development tools, no Ray), and plays a match;
the second installs nothing, says so, and plays again.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_FOR_THE_DEMO = ("ray", "pytest", "mypy", "ruff", "grpcio-tools", "hypothesis", "playwright")
"""The dev and ray extras' packages: a demo's virtualenv holds none of them."""


def fresh_clone(tmp: Path) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("the demo test clones the repository: it needs git and a checkout")
    clone = tmp / "pusoy-referee"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    return clone


def newcomer_env() -> dict[str, str]:
    """This machine's environment without this test run's virtualenv."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    ours = str(ROOT / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)
    return env


def demo(clone: Path) -> str:
    done = subprocess.run(
        ["./scripts/demo", "--hands", "2"],
        cwd=clone,
        env=newcomer_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def installed(clone: Path) -> set[str]:
    listing = subprocess.run(
        [
            str(clone / ".venv" / "bin" / "python"),
            "-c",
            "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] for d in "
            "m.distributions()))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return {name.lower().replace("_", "-") for name in listing.stdout.split()}


def played_a_match(out: str, clone: Path) -> None:
    assert re.search(r"^Match \S+ finished after 2 hands", out, re.M), out
    assert re.search(r"^\s+place\s+seat\s+bot\s+total", out, re.M), out  # the standings
    (log,) = re.findall(r"^Replay: .*referee replay (matches/\S+\.jsonl)$", out, re.M)
    assert (clone / log).is_file()


def test_the_demo_on_a_fresh_clone_installs_only_the_referee_then_nothing(tmp_path):
    clone = fresh_clone(tmp_path)

    first = demo(clone)
    steps = [line for line in first.splitlines() if line.startswith("scripts/setup: ")]
    assert [s.split(":", 1)[1].split()[0] for s in steps] == [
        "creating",
        "upgrading",
        "installing",
        "done",
    ], first
    assert "the referee and the Python kit" in steps[2]
    played_a_match(first, clone)
    packages = installed(clone)
    assert {"pusoy-referee", "pusoy-client", "grpcio"} <= packages
    assert not packages & set(NOT_FOR_THE_DEMO), sorted(packages & set(NOT_FOR_THE_DEMO))
    log = clone / ".venv" / "setup.log"
    assert "Successfully installed" in log.read_text()  # pip's whole output is kept there
    before = (log.stat().st_mtime_ns, log.read_bytes())

    second = demo(clone)
    assert "scripts/setup: nothing to install: .venv is up to date" in second
    assert "installing" not in second and "upgrading" not in second
    played_a_match(second, clone)
    assert installed(clone) == packages
    assert (log.stat().st_mtime_ns, log.read_bytes()) == before
