"""A tournament refereed by a running ``referee serve`` (``[referee] server``)."""

from __future__ import annotations

import base64
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.log.signing import load_public_key, public_key_text
from referee.log.verify import verify_log

from .conftest import ROOT, bot_entry, example_bot, read_results, write_config
from .test_resume import referee
from .test_tournament import check_results_match_logs


def start_serve(logs: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``referee serve`` in its own process on a free port, and its address. Its state
    folder (organiser token, signing key) is next to the log folder (``state_of``)."""
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0"),
            *("--log-dir", str(logs), "--log-level", "warning"),
            *("--state-dir", str(state_of(logs)), *extra),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "referee listening on HOST:PORT; logs in ..."
    assert line.startswith("referee listening on "), line
    return proc, line.split()[3].rstrip(";")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A running referee server: (address, its log folder)."""
    logs = tmp_path / "server-logs"
    proc, address = start_serve(logs)
    try:
        yield address, logs
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def four_bots() -> list[str]:
    return [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("greedy-proc", **example_bot("greedy_bot.py")),
        bot_entry("weak", **example_bot("weak_bot.py")),
    ]


def state_of(logs: Path) -> Path:
    return logs.with_name(logs.name + "-state")


def server_referee(address: str, logs: Path) -> dict[str, str]:
    """The [referee] keys of a tournament that uses the ``referee serve`` of ``logs``."""
    return {"server": address, "organiser_token_file": str(state_of(logs) / "organiser-token")}


def test_a_tournament_on_a_running_referee_server(tmp_path, serve):
    address, server_logs = serve
    path = write_config(
        tmp_path,
        four_bots(),
        tournament={"rounds": 1, "concurrency": 2},
        referee=server_referee(address, server_logs),
    )
    done = referee("tournament", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    results = check_results_match_logs(out)
    assert len(results) == 4 and all(r["status"] == "finished" for r in results)
    assert not any(s["crashed"] for r in results for s in r["seats"])
    key = load_public_key(state_of(server_logs) / "signing-key.pub")
    assert (out / "signing-key.pub").read_text().strip() == public_key_text(key)
    for r in results:
        mine = out / r["log"]
        report = verify_log(mine, key)
        assert report.ok and report.signed_by, report.summary()
        assert r["signed_by"] == public_key_text(key) and len(r["final_hash"]) == 64
        # The tournament's copy is the server's log, byte for byte.
        theirs = server_logs / f"{r['referee_match_id']}.jsonl"
        assert mine.read_bytes() == theirs.read_bytes()
    assert not (out / "work" / "referee").exists()  # no referee of its own was started
    # Run again: nothing left to play, nothing played twice.
    again = referee("tournament", str(path))
    assert again.returncode == 0, again.stderr
    assert len(read_results(out)) == 4


def test_remote_bots_need_the_tournaments_own_referee(tmp_path):
    bots = [*four_bots(), bot_entry("far", key="far-away-key")]
    (tmp_path / "token").write_text("x" * 32)
    path = write_config(
        tmp_path, bots, referee={"server": "127.0.0.1:50051", "organiser_token_file": "token"}
    )
    done = referee("tournament", str(path), "--dry-run")
    assert done.returncode == 2
    assert "referee.server: remote bots (far) connect to the lobby" in done.stderr


def test_an_unreachable_referee_server_is_reported_before_any_match(tmp_path):
    token = tmp_path / "token"
    token.write_text("x" * 32)
    token.chmod(0o600)
    path = write_config(
        tmp_path,
        four_bots(),
        referee={"server": "127.0.0.1:1", "organiser_token_file": "token"},
        tournament={"rounds": 1},
    )
    done = referee("tournament", str(path), "--dry-run")  # a dry run checks it too
    assert done.returncode == 2 and "cannot reach the referee at 127.0.0.1:1" in done.stderr
    assert not (tmp_path / "out").exists()
    done = referee("tournament", str(path))
    assert done.returncode != 0
    assert "cannot reach the referee at 127.0.0.1:1" in done.stderr
    assert not list((tmp_path / "out").glob("logs/*.jsonl"))  # no match was played


def test_a_lost_referee_server_stops_the_tournament_which_resumes_on_another(tmp_path):
    first, address = start_serve(tmp_path / "logs-a")
    settings = {"tournament": {"rounds": 3, "concurrency": 1}, "rules": {"hands": 3}}
    referee_a = server_referee(address, tmp_path / "logs-a")
    path = write_config(tmp_path, four_bots(), referee=referee_a, **settings)
    out = tmp_path / "out"
    run = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "tournament", str(path)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "results.jsonl").exists() or not read_results(out):
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.05)
        first.kill()  # the referee server dies mid-tournament
        _, stderr = run.communicate(timeout=120)
    finally:
        first.kill()
        run.kill()
    assert run.returncode == 2
    assert f"lost the referee at {address}" in stderr
    assert "run the same command again" in stderr
    saved = read_results(out)
    assert 0 < len(saved) < 12 and all(r["status"] == "finished" for r in saved)

    second, other = start_serve(tmp_path / "logs-b")
    try:
        referee_b = server_referee(other, tmp_path / "logs-b")
        write_config(tmp_path, four_bots(), referee=referee_b, **settings)
        done = referee("tournament", str(path))
    finally:
        second.terminate()
        second.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    results = check_results_match_logs(out)
    assert len(results) == 12 and len({r["match_id"] for r in results}) == 12
    assert all(verify_log(out / r["log"]).ok for r in results)
    # Resumed on another server: each result names the key its log is signed with.
    keys = {r["signed_by"] for r in results}
    assert len(keys) == 2
    for r in results:
        assert verify_log(out / r["log"], base64.b64decode(r["signed_by"])).ok
