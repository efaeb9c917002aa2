"""The whole loop of examples/rl, as docs/rl.md runs it, small: games played by the
built-in bots (a tournament), ``referee dataset``, training by imitation and by policy
gradient (seeded), the trained policy evaluated on duplicate deals against random (it
must do better than the untrained policy, with a 95% interval above zero), then seated
at a referee with the Python kit in a gauntlet tournament."""

from __future__ import annotations

import ast
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rl"


def run(*args: str | Path, cwd: Path = ROOT, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def small_copy(name: str, folder: Path, **values: str) -> Path:
    """The example's tournament file in ``folder``, with some values replaced."""
    text = (EXAMPLE / name).read_text()
    for key, value in values.items():
        lines = [
            f"{key} = {value}" if line.split("=")[0].strip() == key else line
            for line in text.splitlines()
        ]
        text = "\n".join(lines) + "\n"
    out = folder / name
    out.write_text(text)
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rl-example")
    config = small_copy("logs.toml", folder, rounds="2", hands="4")
    run("-m", "referee.cli", "tournament", config)
    data = folder / "games.parquet"
    run("-m", "referee.cli", "dataset", folder / "logs-results", "-o", data, "--no-progress")
    policy = folder / "policy.npz"
    run(
        EXAMPLE / "train.py",
        "imitate",
        data,
        "--bot",
        "greedy",
        "--bot",
        "greedy-b",
        "--epochs",
        "10",
        "-o",
        policy,
    )
    run(
        EXAMPLE / "train.py",
        "reinforce",
        "--init",
        policy,
        "--opponents",
        "random",
        "--hands",
        "300",
        "-o",
        policy,
    )
    return policy


def test_the_trained_policy_beats_random_better_than_the_untrained_one(trained: Path) -> None:
    out = run(
        EXAMPLE / "train.py", "evaluate", trained, "--against", "random", "--deals", "60", "--json"
    )
    (result,) = json.loads(out)
    low, _ = result["ci95"]
    assert result["difference"] > 0 and low > 0, result
    assert result["policy_mean"] > result["baseline_mean"]


def test_the_trained_policy_is_seated_through_the_referee_in_a_gauntlet(
    trained: Path, tmp_path: Path
) -> None:
    for name in ("policy.py", "policy_bot.py"):
        (tmp_path / name).write_text((EXAMPLE / name).read_text())
    (tmp_path / "policy.npz").write_bytes(trained.read_bytes())
    config = small_copy("gauntlet.toml", tmp_path, rounds="1", hands="2")
    (tmp_path / "gauntlet.toml").write_text(
        config.read_text().replace('enabled = "auto"', "enabled = false")
    )
    out = run("-m", "referee.cli", "tournament", tmp_path / "gauntlet.toml")
    assert "4/4 matches recorded (0 failed)" in out
    results = [json.loads(x) for x in (tmp_path / "gauntlet-results" / "results.jsonl").open()]
    for match in results:
        hero = next(s for s in match["seats"] if s["bot"] == "policy")
        assert hero["connected"] and not hero["crashed"], hero
        assert hero.get("timeouts", 0) == 0 and hero.get("rejected", 0) == 0, hero
    with (tmp_path / "gauntlet-results" / "pairwise.csv").open() as f:
        pairs = {(r["a"], r["b"]) for r in csv.DictReader(f)}
    assert ("policy", "random") in pairs and ("policy", "greedy") in pairs
    run("-m", "referee.cli", "verify", "--tournament", tmp_path / "gauntlet-results")


def test_the_pytorch_path_says_what_it_needs_when_torch_is_missing(tmp_path: Path) -> None:
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        done = subprocess.run(
            [
                sys.executable,
                EXAMPLE / "train_torch.py",
                tmp_path / "none.parquet",
                "-o",
                tmp_path / "p.npz",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 3 and "PyTorch is not installed" in done.stderr
    else:  # pragma: no cover - this project's CI has no torch
        pytest.skip("torch is installed: train_torch.py is the path to try by hand")


def test_training_says_how_it_goes_while_it_runs(tmp_path: Path) -> None:
    """A policy gradient run of minutes printed nothing until its end (issue 31, item
    10): a line on stderr every --progress-s seconds (10 by default)."""
    done = subprocess.run(
        [sys.executable, EXAMPLE / "train.py", "reinforce", "--opponents", "random",
         "--hands", "12", "--progress-s", "0", "-o", tmp_path / "p.npz"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == (
        "reinforce: 0 hands in 0 s (up to 12 hands or 300 s); "
        "mean reward of the last 200 hands: none yet"
    )
    # One line per episode (a match of several hands) at --progress-s 0, each one counted.
    assert len(lines) >= 2 and all(line.startswith("reinforce: ") for line in lines)
    assert re.search(r"^reinforce: \d+ hands in \d+ s .*hands: [+-]\d+\.\d\d$", lines[-1])
    quiet = subprocess.run(
        [sys.executable, EXAMPLE / "train.py", "reinforce", "--opponents", "random",
         "--hands", "2", "--progress-s", "-1", "-o", tmp_path / "q.npz"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_the_policy_bots_docstring_reads_as_it_is_written() -> None:
    """Its usage ended a line with a backslash, which Python took as a line continuation
    in the docstring (``python policy_bot.py --help``'s text lost the line break)."""
    source = (EXAMPLE / "policy_bot.py").read_text()
    module = ast.parse(source)
    written = ast.get_source_segment(source, module.body[0].value)  # type: ignore[attr-defined]
    assert written is not None and written.startswith('r"""')
    assert ast.get_docstring(module, clean=False) == written[4:-3]
    assert "{python} examples/rl/policy_bot.py" in written and "--token" not in written
