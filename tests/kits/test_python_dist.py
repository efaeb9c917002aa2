"""The Python kit is a distribution of its own (issue 11, part 5): installed alone into a
fresh virtual environment, without the referee, it plays a whole match."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

from referee.log.verify import verify_log

from .conftest import ROOT


def test_the_python_kit_installs_alone_and_plays_a_match(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", str(ROOT / "clients" / "python")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    listed = subprocess.run(
        [str(py), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    names = {line.split("==")[0].lower().replace("_", "-") for line in listed.splitlines()}
    assert "pusoy-client" in names and "pusoy-referee" not in names
    # grpcio and protobuf, and what they depend on: nothing of the referee's.
    assert names - {"pip", "setuptools", "wheel"} <= {
        "pusoy-client",
        "grpcio",
        "protobuf",
        "typing-extensions",
    }, names
    # The referee is not importable there, and the kit does not need it.
    no_referee = subprocess.run(
        [str(py), "-c", "import referee"], capture_output=True, cwd=tmp_path, check=False
    )
    assert no_referee.returncode != 0
    logs = tmp_path / "logs"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "match",
            "--log-dir",
            str(logs),
            "--profile",
            "big-two",
            "--hands",
            "2",
            "--seed",
            "python-dist",
            "--connect-timeout-ms",
            "60000",
            "--bot",
            str(env_dir / "bin" / "pusoy-sample-bot"),
            "--bot",
            "greedy",
            "--bot",
            "random",
            "--bot",
            "greedy",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        check=False,
    )
    stderr = "".join(p.read_text()[-2000:] for p in logs.glob("*.stderr"))
    assert done.returncode == 0, done.stdout + done.stderr + stderr
    log = next(logs.glob("*.jsonl"))
    report = verify_log(log)
    assert report.ok, report.summary()
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("   ")]
    seat0 = [row for row in rows if len(row) > 2 and row[1] == "0"]
    assert seat0, done.stdout
    assert not seat0[0][2].startswith(("greedy", "random")), done.stdout
