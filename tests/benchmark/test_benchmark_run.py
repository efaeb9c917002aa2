"""``referee benchmark``: the command as a user runs it, end to end (real referee, real
gRPC, signed logs, a spawned Python-kit bot in its jail)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from referee_cli import ROOT, run_referee

from referee.cli import main


def _benchmark(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_referee("benchmark", "--no-page", *args, timeout=timeout)


def test_a_stopped_run_resumes_to_the_same_report_as_a_whole_one(tmp_path: Path):
    """The same seeds give the same report: a run stopped with Ctrl-C after a few
    matches and started again ends with the report of a run that was never stopped
    (but for the logs' own digest: their times and signing keys differ); every log
    verifies as a tournament."""
    whole = _benchmark("--quick", "--deals", "1", "--out", str(tmp_path / "whole"), "greedy")
    assert whole.returncode == 0, whole.stderr
    assert "Score:" in whole.stdout and "logs_sha256" in whole.stdout

    folder = tmp_path / "stopped"
    cmd = [
        sys.executable,
        "-m",
        "referee.cli",
        "benchmark",
        "--no-page",
        "--quick",
        "--deals",
        "1",
        "--concurrency",
        "1",
        "--out",
        str(folder),
        "greedy",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    results = folder / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and len(results.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again" in err
    again = _benchmark(
        "--quick", "--deals", "1", "--concurrency", "1", "--out", str(folder), "greedy"
    )
    assert again.returncode == 0, again.stderr
    assert "Resuming" in again.stdout
    # The logs themselves differ (times, each run's referee key): everything scored does not.
    stopped_report = json.loads((folder / "benchmark.json").read_text())
    whole_report = json.loads((tmp_path / "whole" / "benchmark.json").read_text())
    for report in (stopped_report, whole_report):
        assert len(report.pop("logs_sha256")) == 64 and len(report.pop("signed_by")) == 1
    assert stopped_report == whole_report
    verified = run_referee("verify", "--tournament", str(folder))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_python_kit_bot_is_benchmarked_in_its_jail(tmp_path: Path):
    """A spawned Python kit bot against the quick pool: the report gives its score with
    an interval, a line per anchor, clean results, the logs' digest; the page is written."""
    bot = "{python} examples/greedy_bot.py --address={address} --token={token}"
    out = tmp_path / "kit"
    proc = run_referee(
        "benchmark",
        "--quick",
        "--deals",
        "2",
        "--name",
        "kit-greedy",
        "--out",
        str(out),
        bot,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "benchmark.json").read_text())
    assert report["pool"] == "v1" and report["quick"] is True
    assert report["candidate"] == "kit-greedy" and report["anchors"] == [
        "random",
        "greedy",
        "policy",
        "expert",
    ]
    assert report["bot"]["kind"] == "command"
    assert report["matches"] == {"total": 32, "recorded": 32, "finished": 32, "failed": 0}
    score = report["score"]
    assert score["deals"] == 2 and score["ci95"][0] < score["rating"] < score["ci95"][1]
    assert report["score_clean"] == score  # the kit bot had no fault
    greedy = report["versus"]["greedy"]["raw"]
    assert greedy["points_per_hand"]["mean"] is not None and greedy["groups"] == 2 * 3
    assert report["hands"]["played"] == 32 * 2 and report["hands"]["with_faults"] == 0
    assert len(report["logs_sha256"]) == 64
    assert (out / "view" / "index.html").is_file()
    assert "Benchmark pool v1" in (out / "view" / "index.html").read_text()


def test_bad_requests_are_one_line_and_exit_2(tmp_path: Path, capsys):
    cases = [
        (["--pool", "v9", "greedy"], "no pool 'v9'"),
        ([], "give one bot"),
        (["--name", "expert", "greedy"], "cannot be named 'expert'"),
        (["--deals", "0", "greedy"], "--deals"),
        (["./no-such-program --x"], "no-such-program"),
        (["--bot-config", str(tmp_path / "missing.toml")], "missing.toml"),
    ]
    for args, words in cases:
        code = main(["benchmark", "--no-page", "--out", str(tmp_path / "x"), *args])
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert words in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x").exists()


def test_the_pool_is_described(capsys):
    assert main(["benchmark", "--pool-info"]) == 0
    out = capsys.readouterr().out
    for name in ("random", "greedy", "policy", "expert", "search"):
        assert name in out
    assert "pusoy-benchmark/v1" in out
