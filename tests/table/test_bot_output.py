"""A spawned bot's output, as the table reads it: real processes writing through the pipe.

Each line is kept in the raw file (the crash report and bot authors read it) and its
arrival is timed in the sidecar, in order; the files are private; the output is capped
with a line that says so; and a bot that floods its output for a whole match neither
blocks nor slows the match: no seat is timed out, the log verifies, the file stays capped.
"""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

from referee.log.outputs import read_output, times_path
from referee.log.summary import summarize_log
from referee.log.verify import verify_log
from referee.match.settings import MatchSettings
from referee.rules import Rules
from referee.table.bots import BuiltinBot, CommandBot, Seat
from referee.table.output import DRAIN_BYTES_PER_S, cut_notice
from referee.table.procs import BotProcess
from referee.table.table import play_match

ROOT = Path(__file__).resolve().parents[2]
EVENTFUL = ROOT / "tests" / "view" / "bots" / "eventful_bot.py"

TALKER = """
import sys, time
for i in range(4):
    print(f"line {i} <b>{i}</b>", flush=True)
    time.sleep(0.2)
sys.stderr.write("error: done\\n")
sys.stderr.write("no newline at the end")
sys.exit(1)
"""


async def test_each_line_is_kept_and_timed_in_order(tmp_path):
    path = tmp_path / "out" / "m.seat0.stderr"
    before = time.time_ns() // 1000
    bot = await BotProcess.spawn([sys.executable, "-c", TALKER], env={}, cwd=None, stderr_path=path)
    assert await bot.wait(30) == 1
    assert await bot.output.closed(5)
    after = time.time_ns() // 1000
    raw = path.read_text()
    assert raw == (
        "line 0 <b>0</b>\nline 1 <b>1</b>\nline 2 <b>2</b>\nline 3 <b>3</b>\n"
        "error: done\nno newline at the end"
    )
    # Both files are the bot's private business: mode 0600.
    for f in (path, times_path(path)):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    header = json.loads(times_path(path).read_text().splitlines()[0])
    assert header["format"] == "pusoy-output-times" and header["output"] == path.name
    out = read_output(path)
    assert out.timed and [line.text for line in out.lines] == raw.split("\n")
    times = [line.at_us for line in out.lines]
    assert all(t is not None and before <= t <= after for t in times), (before, times, after)
    assert times == sorted(times)  # in the order they came
    # Printed 0.2 s apart: the times are the moments each line was read, not one stamp.
    assert times[3] - times[0] >= 300_000, times  # type: ignore[operator]


async def test_output_past_the_cap_is_cut_and_drained(tmp_path):
    path = tmp_path / "loud.stderr"
    limit = 64 * 1024
    script = "import sys\nfor i in range(4000): print('x' * 63, flush=True)\n"  # 256 KB
    bot = await BotProcess.spawn(
        [sys.executable, "-c", script], env={}, cwd=None, stderr_path=path, output_limit=limit
    )
    assert await bot.wait(30) == 0  # it was never blocked for good
    await bot.stop(1.0)
    data = path.read_bytes()
    assert data.startswith(b"x" * 63 + b"\n") and data.endswith(cut_notice(limit))
    assert len(data) == limit + len(cut_notice(limit))
    assert bot.output.dropped == 4000 * 64 - limit
    # Every line of the file has its time, the notice too.
    out = read_output(path, max_lines=10_000)
    assert len(out.lines) == limit // 64 + 1 and all(line.at_us for line in out.lines)
    assert out.lines[-1].text == cut_notice(limit).decode().strip()


async def test_a_bot_flooding_its_output_does_not_slow_the_match(tmp_path):
    """One seat writes to its standard error as fast as it can for the whole match, the
    three others are built-in bots answering on the referee's own event loop: a loop
    busy with the flood would time them out (turns of 1 s)."""
    report = tmp_path / "flooded.txt"
    seats = [
        Seat(
            "flood",
            CommandBot(
                ("{python}", str(EVENTFUL), "flood"),
                env=(("PUSOY_FLOOD_REPORT", str(report)),),
            ),
        ),
        Seat("greedy", BuiltinBot("greedy")),
        Seat("random", BuiltinBot("random")),
        Seat("greedy2", BuiltinBot("greedy")),
    ]
    rules = Rules.for_profile("pusoy-dos", {"match_end": "hands 2"})
    settings = MatchSettings(rules=rules, turn_time_ms=1000, connect_timeout_ms=30_000)
    started = time.monotonic()
    result = await play_match(settings, seats, log_dir=tmp_path)
    took = time.monotonic() - started
    assert result.finished and verify_log(result.log_path).ok
    summary = summarize_log(result.log_path)
    assert [s.timeouts for s in summary.seats] == [0, 0, 0, 0], summary.seats
    assert not result.seats[0].crashed and result.seats[0].exit_code == 0
    flooded = int(report.read_text())
    out = result.seats[0].stderr_path
    assert out is not None
    data = out.read_bytes()
    # It wrote far past the cap, read and dropped at the drain's pace, and the file kept
    # the cap.
    assert flooded > len(data) + 256 * 1024, flooded
    assert flooded <= len(data) + (took + 1) * DRAIN_BYTES_PER_S + 2**20
    assert data.endswith(cut_notice(1024 * 1024)) and len(data) < 1024 * 1024 + 100
