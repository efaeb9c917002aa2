"""``scripts/* --help`` prints what the script does and changes nothing (issue 31, item 4):
``scripts/test --help`` used to install Debian packages, every extra and npm's packages,
and run the lint, before pytest showed its own help.

Each script runs from a copy of scripts/ in an empty folder, with a PATH that holds only
what printing its help needs (bash, sed, env, dirname): had it gone on to install or run
anything (apt-get, dpkg-query, python3, npm, pytest), it would have failed, or left files
behind.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ("test", "setup", "system-packages", "test-containers", "demo")


@pytest.fixture(scope="module")
def bare_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    bin_dir = tmp_path_factory.mktemp("bin")
    for tool in ("bash", "sed", "env", "dirname"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_what_the_script_does_and_changes_nothing(
    script: str, flag: str, tmp_path: Path, bare_path: str
) -> None:
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    before = sorted(tmp_path.rglob("*"))
    done = subprocess.run(
        [str(tmp_path / "scripts" / script), flag],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": bare_path, "HOME": str(tmp_path)},
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) >= 3 and not any(line.startswith("#") for line in lines)
    assert "--help" in done.stdout  # it says what --help does
    assert sorted(tmp_path.rglob("*")) == before
    if script == "test":
        assert done.stdout.startswith("usage: scripts/test [PYTEST-ARGUMENTS...]\n")
        for said in ("scripts/system-packages", "scripts/setup", "PYTEST_WORKERS", "pytest -q"):
            assert said in done.stdout
