"""``referee match`` is loud about bots that fail: real bot processes, the real command.

A bot that crashes mid-match, one that dies before it connects (a missing module, a
signal), and one that runs but never connects: each is reported at once (seat, command,
exit status or signal, the last lines of its output, the file), the match is still
played to its end with that seat's turns played by default, the log verifies, and the
exit status says what happened.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from referee.log.verify import verify_log

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "tournament" / "bots"
PY = sys.executable
CONNECT_LIMIT = ["--connect-timeout-ms", "60000"]
WELL_BEFORE_THE_LIMIT_S = 40.0
"""A match with a dead bot must not wait for the 60 s connect limit."""


def match(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    done = subprocess.run(
        [PY, "-m", "referee.cli", "match", "--log-dir", str(tmp_path), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    return done, time.monotonic() - t0


def log_of(done: subprocess.CompletedProcess[str]) -> Path:
    return Path(re.search(r"^Log: (.+)$", done.stdout, flags=re.M).group(1))  # type: ignore[union-attr]


def rows(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The summary's rows, by bot name."""
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["place", "seat"])
    out = {}
    for line in lines[start + 1 :]:
        if line.startswith("Log: "):
            break
        out[line.split()[2]] = line
    return out


def test_a_bot_that_crashes_mid_match_is_reported_at_once_and_the_match_finishes(tmp_path):
    done, _ = match(
        tmp_path,
        *("--hands", "2", "--seed", "loud", *CONNECT_LIMIT),
        *("--bot", "greedy", "--bot", f"{PY} {BOTS / 'crashy_bot.py'}", "--name", "crashy"),
        *("--bot", "random", "--bot", "greedy"),
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    err = done.stderr
    assert "seat 1 (crashy) exited with status 1 before the match ended" in err
    assert f"command: {PY} {BOTS / 'crashy_bot.py'}" in err
    stderr_file = next(tmp_path.glob("*.seat1.stderr"))
    assert str(stderr_file) in err
    assert "finished after 2 hands" in done.stdout
    crashy = rows(done)["crashy"]
    assert crashy.endswith("crashed: exited with status 1")
    assert crashy.split()[8] == "1"  # one disconnect: its stream dropped with it
    assert int(crashy.split()[7]) > 0  # default actions for it from then on
    assert verify_log(log_of(done)).ok


def test_a_bot_that_leaves_mid_match_and_exits_after_its_end_crashed(tmp_path):
    """Its stream ends mid-match; without it the match ends before its process does
    (within the table's grace for exiting): it still left with a failure, exit 3."""
    done, _ = match(
        tmp_path,
        *("--hands", "2", "--seed", "loud", *CONNECT_LIMIT),
        *("--bot", "greedy", "--bot", f"{PY} {BOTS / 'leaving_bot.py'}", "--name", "leaving"),
        *("--bot", "random", "--bot", "greedy"),
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "seat 1 (leaving) left the match, then exited with status 4" in done.stderr
    assert "finished after 2 hands" in done.stdout
    leaving = rows(done)["leaving"]
    assert leaving.endswith("crashed: exited with status 4"), leaving
    assert leaving.split()[8] == "1"  # its one disconnect
    assert verify_log(log_of(done)).ok


def test_bots_that_die_before_connecting_do_not_hold_the_match(tmp_path):
    missing = "import sys; print('Error: Cannot find module mybot', file=sys.stderr); sys.exit(1)"
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    not_a_program = tmp_path / "not-a-program"
    not_a_program.write_bytes(b"\x00\x01garbage")
    not_a_program.chmod(0o755)
    done, seconds = match(
        tmp_path,
        *("--hands", "1", "--seed", "loud", *CONNECT_LIMIT),
        *("--bot", "greedy", "--bot", f"{PY} -c {missing!r}", "--name", "node-bot"),
        *("--bot", f"{PY} -c {killed!r}", "--bot", str(not_a_program)),
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert seconds < WELL_BEFORE_THE_LIMIT_S
    err = done.stderr
    assert "seat 1 (node-bot) exited with status 1 before the match ended" in err
    assert "  | Error: Cannot find module mybot" in err
    assert "was killed by signal 9 (SIGKILL) before the match ended" in err
    assert "seat 3 (not-a-program) could not be started: Exec format error" in err
    assert "finished after 1 hand " in done.stdout
    table = rows(done)
    assert table["node-bot"].endswith("crashed: exited with status 1")
    assert table[Path(PY).name].endswith("crashed: was killed by signal 9 (SIGKILL)")
    assert table["not-a-program"].endswith("crashed: could not be started: Exec format error")
    assert verify_log(log_of(done)).ok


def test_a_bot_that_never_connects_is_waited_for_then_played_by_default(tmp_path):
    marker = f"never-{tmp_path.name}"
    done, _ = match(
        tmp_path,
        *("--hands", "1", "--seed", "loud", "--connect-timeout-ms", "2000"),
        *("--bot", "greedy", "--bot", "greedy", "--bot", "random"),
        *("--bot", f"{PY} {BOTS / 'hang_bot.py'} {marker}"),
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "seat 3 (hang_bot) never connected within the connect limit (2 s)" in done.stderr
    assert rows(done)["hang_bot"].endswith("never connected")
    assert "finished after 1 hand " in done.stdout
    assert verify_log(log_of(done)).ok
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, check=False)
    assert found.returncode == 1, "the bot's child outlived the match"


def test_seat_names_are_short_distinct_or_given_and_the_columns_align(tmp_path):
    done, _ = match(
        tmp_path,
        *("--hands", "1", "--seed", "names"),
        *("--bot", "greedy", "--bot", f"{PY} {ROOT / 'examples' / 'random_bot.py'}"),
        *("--bot", "greedy", "--bot", "random", "--name", "a-much-longer-seat-name"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    table = rows(done)
    assert set(table) == {"greedy-1", "random_bot", "greedy-2", "a-much-longer-seat-name"}
    lines = [*done.stdout.splitlines()[1:2], *table.values()]
    header = lines[0]
    for line in lines[1:]:
        # every number column ends where its heading does
        for heading in ("total", "won", "rejected", "timeouts", "defaults", "disconnects"):
            end = header.index(heading) + len(heading)
            assert line[end - 1].isdigit() and line[end : end + 1] in (" ", ""), (heading, line)


def test_bad_names_are_refused(tmp_path):
    done, _ = match(tmp_path, "--name", "x")
    assert done.returncode == 2 and "give a --bot first" in done.stderr
    done, _ = match(
        tmp_path,
        *("--bot", "greedy", "--name", "same", "--bot", "greedy", "--name", "same"),
        *("--bot", "greedy", "--bot", "greedy"),
    )
    assert done.returncode == 2 and "two seats are named 'same'" in done.stderr
    assert not list(tmp_path.glob("*.jsonl"))
