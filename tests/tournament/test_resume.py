"""A tournament runner killed outright finishes on the next run: same matches, no repeats."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from referee_cli import run_referee

from referee.log.verify import verify_log
from referee.tournament.director import Tournament
from referee.tournament.schedule import build_schedule
from referee.tournament.toml_reader import load_config

from .conftest import ROOT, bot_entry, example_bot, read_results, write_config
from .test_tournament import check_results_match_logs


def referee(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return run_referee(*args, timeout=timeout)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def pool_workers(parent: int) -> list[int]:
    """The children of ``parent`` that Python's multiprocessing started (the verifiers,
    their resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == parent and b"multiprocessing" in argv:
            found.append(int(entry.name))
    return found


def config(tmp_path: Path, hands: int = 2) -> Path:
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("weak", **example_bot("weak_bot.py")),
        bot_entry("weak2", **example_bot("weak_bot.py")),
    ]
    return write_config(
        tmp_path,
        bots,
        tournament={"rounds": 4, "concurrency": 2},
        rules={"hands": hands},
        time={"turn_time_ms": 500},
    )


def test_kill_the_runner_then_run_again(tmp_path):
    path = config(tmp_path)
    out = tmp_path / "out"
    log = open(tmp_path / "first-run.txt", "wb")  # noqa: SIM115
    first = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "tournament", str(path)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    results = out / "results.jsonl"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if results.exists() and len(results.read_text().splitlines()) >= 5:
                break
            assert first.poll() is None, (tmp_path / "first-run.txt").read_text()
            time.sleep(0.05)
        else:
            raise AssertionError("the first run recorded too few matches in time")
        verifiers = pool_workers(first.pid)
        assert verifiers, "the runner verifies in worker processes"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
        log.close()
    before = results.read_text().splitlines()
    assert 5 <= len(before) < 16
    # Its verifiers end with it (they would wait on the pool's queues for ever).
    deadline = time.monotonic() + 10
    while [pid for pid in verifiers if alive(pid)]:
        assert time.monotonic() < deadline, "verifiers outlived their runner"
        time.sleep(0.1)
    left_behind = [pid for pid, _ in json.loads((out / "work" / "processes.json").read_text())]
    # A crash in the middle of writing leaves a cut-short line; resuming drops it. A log
    # moved into logs/ without its results line, and the referee's working logs, are
    # dropped too (their matches are played again).
    with open(results, "a") as f:
        f.write('{"match_id": "cut-sh')
    recorded = {json.loads(line)["match_id"] for line in before}
    cfg = load_config(path)
    state = json.loads((out / "tournament.json").read_text())
    schedule = build_schedule(cfg, state["master_seed"])
    unrecorded = next(s.match_id for s in schedule if s.match_id not in recorded)
    (out / "logs" / f"{unrecorded}.jsonl").write_text("half a log\n")
    (out / "work" / "referee").mkdir(parents=True, exist_ok=True)
    (out / "work" / "referee" / "stale.jsonl").write_text("{}\n")

    second = referee("tournament", str(path), "--concurrency", "3")  # may change
    assert second.returncode == 0, second.stderr + second.stdout
    assert f"Resuming: {len(before)} matches already recorded" in second.stdout
    assert not [pid for pid in left_behind if alive(pid)]

    lines = results.read_text().splitlines()
    assert lines[: len(before)] == before  # what was recorded stays as it was
    ids = [json.loads(line)["match_id"] for line in lines]
    assert len(ids) == len(set(ids)) == 16
    assert sorted(ids) == [s.match_id for s in schedule]
    for r in read_results(out):
        spec = schedule[r["index"]]
        assert (r["match_id"], r["seed"]) == (spec.match_id, spec.seed)
        assert [s["bot"] for s in r["seats"]] == list(spec.bots)
    assert sorted(p.stem for p in (out / "logs").glob("*.jsonl")) == sorted(ids)
    assert not list((out / "work" / "referee").glob("*"))
    for p in (out / "logs").glob("*.jsonl"):
        assert verify_log(p).ok
    check_results_match_logs(out)
    standings = json.loads((out / "standings.json").read_text())
    assert standings["final"] and standings["matches"] == {"total": 16, "done": 16, "failed": 0}
    assert sum(b["matches"] for b in standings["bots"]) == 64

    third = referee("tournament", str(path))
    assert third.returncode == 0 and "16/16 matches recorded (0 failed), 0 played" in third.stdout
    assert results.read_text().splitlines() == lines
    # The closing hint is a command that works as it is pasted.
    hint = next(ln for ln in third.stdout.splitlines() if ln.startswith("Verify: "))
    pasted = subprocess.run(
        ["bash", "-c", hint.removeprefix("Verify: ")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert pasted.returncode == 0, pasted.stderr
    assert pasted.stdout.startswith("OK: ") and "16 logs verified" in pasted.stdout


def test_a_changed_config_is_refused_for_an_existing_folder(tmp_path):
    Tournament(load_config(config(tmp_path, hands=2))).prepare()  # the folder is started
    out = tmp_path / "out"
    assert (out / "tournament.json").exists()
    before = [p.name for p in out.iterdir()]
    path = config(tmp_path, hands=3)
    done = referee("tournament", str(path))
    assert done.returncode == 2
    assert "holds a tournament with a different configuration" in done.stderr
    assert "(changed: rules.match_end)" in done.stderr
    assert not (out / "logs").exists()
    # A dry run makes the same identity check, and changes nothing.
    done = referee("tournament", str(path), "--dry-run")
    assert done.returncode == 2 and "(changed: rules.match_end)" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(before)
    # Concurrency and the output folder are not part of a tournament's identity.
    done = referee("tournament", str(config(tmp_path, hands=2)), "--concurrency", "1", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "the folder (resumes the tournament there)" in done.stdout
    assert "Schedule: 16 matches in 4 deal groups; 0 recorded, 16 to play." in done.stdout


def test_a_folder_that_is_not_a_tournament_is_refused(tmp_path):
    path = config(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    done = referee("tournament", str(path))
    assert done.returncode == 2 and "holds no tournament.json" in done.stderr


def test_config_errors_stop_before_anything_starts(tmp_path):
    path = write_config(
        tmp_path,
        [bot_entry(n, builtin="greedy") for n in "abc"]
        + [bot_entry("d", command="{python} missing_bot.py")],
    )
    done = referee("tournament", str(path))
    assert done.returncode == 2
    assert "bot 'd'.command: script 'missing_bot.py' not found" in done.stderr
    assert not (tmp_path / "out").exists()


def test_help_and_dry_run(tmp_path):
    done = referee("tournament", "--help")
    assert done.returncode == 0 and "example" in done.stdout and "--concurrency" in done.stdout
    path = config(tmp_path)
    done = referee("tournament", str(path), "--dry-run", "--concurrency", "3")
    assert done.returncode == 0, done.stderr
    assert "1 table x 4 rounds x 4 seatings = 16 matches, 3 at once" in done.stdout
    assert "(starts a new tournament)" in done.stdout
    assert "Schedule: 16 matches in 4 deal groups; 0 recorded, 16 to play." in done.stdout
    assert not (tmp_path / "out").exists()
    # The referee's address is checked too: one that is taken fails the dry run as it
    # would fail the run.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = referee("tournament", str(path), "--dry-run", "--address", f"127.0.0.1:{port}")
    assert done.returncode == 2 and "the referee cannot start" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
    assert os.path.exists(path)


def test_ctrl_c_stops_the_runner_in_one_line_without_a_worker_traceback(tmp_path):
    """Ctrl-C in a terminal is a SIGINT to the whole process group: the runner's verifier
    workers get it too, and must leave the stopping to the runner (issue 31, item 2)."""
    bots = [bot_entry(f"b{i}", builtin=("greedy", "random")[i % 2]) for i in range(4)]
    path = write_config(tmp_path, bots, tournament={"rounds": 20}, rules={"hands": 1})
    results = tmp_path / "out" / "results.jsonl"
    output = tmp_path / "run.txt"
    with open(output, "wb") as sink:
        run = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "tournament", str(path)],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, as a terminal's job
        )
        try:
            deadline = time.monotonic() + 60
            while not (results.exists() and len(results.read_text().splitlines()) >= 1):
                assert run.poll() is None, output.read_text()
                assert time.monotonic() < deadline, "no match was recorded in time"
                time.sleep(0.05)
            verifiers = pool_workers(run.pid)
            assert verifiers, "the runner verifies in worker processes"
            os.killpg(run.pid, signal.SIGINT)
            code = run.wait(timeout=60)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
    said = output.read_text()
    assert code == 130, said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
    assert re.search(r"^Stopped after \d+ of 80 matches; run the same command again", said, re.M)
    deadline = time.monotonic() + 10
    while [pid for pid in verifiers if alive(pid)]:
        assert time.monotonic() < deadline, "verifiers outlived their runner"
        time.sleep(0.1)
