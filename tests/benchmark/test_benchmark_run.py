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
    """The report of a whole run (its JSON, its page); and the same seeds give the same
    report: a run stopped with Ctrl-C after a few matches and started again ends with the
    report of a run that was never stopped (but for the logs' own digest: their times and
    signing keys differ); every log verifies as a tournament."""
    whole = run_referee(
        "benchmark",
        "--quick",
        "--deals",
        "1",
        "--name",
        "mine",
        "--out",
        str(tmp_path / "whole"),
        "greedy",
        timeout=300,
    )
    assert whole.returncode == 0, whole.stderr
    assert "Score:" in whole.stdout and "logs_sha256" in whole.stdout
    report = json.loads((tmp_path / "whole" / "benchmark.json").read_text())
    assert report["pool"] == "v1" and report["quick"] is True and report["candidate"] == "mine"
    assert report["anchors"] == ["random", "greedy", "policy", "expert"]
    assert report["bot"] == {"name": "mine", "kind": "builtin", "builtin": "greedy"}
    assert report["matches"] == {"total": 16, "recorded": 16, "finished": 16, "failed": 0}
    assert report["score"]["deals"] == 1 and report["score_clean"] == report["score"]
    assert report["versus"]["greedy"]["raw"]["groups"] == 3  # the tables with greedy
    assert report["hands"] == {
        "played": 32,
        "won": report["hands"]["won"],
        "won_share": report["hands"]["won_share"],
        "with_faults": 0,
    }
    page = (tmp_path / "whole" / "view" / "index.html").read_text()
    assert "Benchmark pool v1 (quick): mine" in page and report["logs_sha256"] in page

    folder = tmp_path / "stopped"
    args = ["--quick", "--deals", "1", "--concurrency", "1", "--name", "mine", "--out"]
    cmd = [
        sys.executable,
        "-m",
        "referee.cli",
        "benchmark",
        "--no-page",
        *args,
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
    again = _benchmark(*args, str(folder), "greedy")
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


def test_bad_requests_are_one_line_and_exit_2(tmp_path: Path, capsys):
    cases = [
        (["--pool", "v9", "greedy"], "no pool 'v9'"),
        ([], "give one bot"),
        (["--name", "expert", "greedy"], "cannot be named 'expert'"),
        (["--deals", "0", "greedy"], "--deals"),
        (["./no-such-program --x"], "no-such-program"),
        (["--bot-config", str(tmp_path / "missing.toml")], "missing.toml"),
        ([f"llm:{tmp_path / 'no-model.toml'}"], "no-model.toml"),
    ]
    for args, words in cases:
        code = main(["benchmark", "--no-page", "--out", str(tmp_path / "x"), *args])
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert words in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x").exists()


def test_a_language_model_is_a_candidate_named_like_a_seat(tmp_path: Path, monkeypatch):
    """``llm:SETTINGS.toml``, as ``referee match`` takes it: the path from the working
    folder, made absolute, its settings read before anything is played."""
    from referee.benchmark.run import candidate_table

    (tmp_path / "gemma.toml").write_text(
        '[endpoint]\nurl = "http://127.0.0.1:9/v1"\nmodel = "gemma-3-270m"\n'
    )
    monkeypatch.chdir(tmp_path)
    assert candidate_table("llm:gemma.toml", "gemma") == {
        "name": "gemma",
        "builtin": f"llm:{tmp_path / 'gemma.toml'}",
    }


def test_the_pool_is_described(capsys):
    assert main(["benchmark", "--pool-info"]) == 0
    out = capsys.readouterr().out
    for name in ("random", "greedy", "policy", "expert", "search"):
        assert name in out
    assert "pusoy-benchmark/v1" in out
