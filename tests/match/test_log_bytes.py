"""A log line is bytes, hashed as they are (docs/log-format.md, section 1): a line that is
not UTF-8 is refused with the bytes named, never decoded with replacement characters (which
would hash other bytes than the file's), and the 1 MiB limit counts bytes, not characters.
Every reader of the referee agrees: ``referee verify`` and ``referee replay``, the
spectator and GetMatchLog stream, and a restarted server, which sets such a log aside."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from referee.log.reader import MAX_LINE_BYTES, LogFormatError
from referee.log.stream import stream_lines
from referee.log.verify import verify_log
from referee.server.app import RefereeServer

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = sorted((ROOT / "tests" / "fixtures" / "logs" / "v2").glob("*.jsonl"))[0]


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def with_line(path: Path, number: int, change: bytes, lines: int | None = None) -> Path:
    """The fixture log with its line ``number``'s bot name replaced by ``change`` (bytes
    as they are), cut to its first ``lines`` lines when given."""
    entries = FIXTURE.read_bytes().split(b"\n")[:-1]
    line = entries[number - 1]
    start = line.index(b'"bot_name":"') + len(b'"bot_name":"')
    end = line.index(b'"', start)
    entries[number - 1] = line[:start] + change + line[end:]
    path.write_bytes(b"\n".join(entries[:lines]) + b"\n")
    return path


def test_verify_and_replay_refuse_a_line_that_is_not_utf8_naming_its_bytes(tmp_path):
    # "zoë" as Latin-1 wrote it: 0xEB then "\"" is not UTF-8.
    log = with_line(tmp_path / "latin1.jsonl", 2, b"zo\xeb")
    start = FIXTURE.read_bytes().split(b"\n")[1].index(b'"bot_name":"') + 15
    report = verify_log(log)
    assert not report.ok and report.line == 2
    assert report.problem == f"not UTF-8 (the bytes eb at byte {start} of the line)"
    verify = referee("verify", str(log))
    assert verify.returncode == 1
    assert verify.stdout.strip() == f"FAILED: {log}: line 2: {report.problem}"
    replay = referee("replay", str(log))
    assert replay.returncode != 0 and "not UTF-8" in replay.stderr
    assert "Traceback" not in replay.stderr


def test_the_line_limit_counts_bytes_not_characters(tmp_path):
    name = "é" * (MAX_LINE_BYTES // 2 + 1)  # fewer characters than the limit, more bytes
    log = with_line(tmp_path / "long.jsonl", 2, name.encode())
    line = log.read_bytes().split(b"\n")[1]
    assert len(line.decode()) < MAX_LINE_BYTES < len(line)
    report = verify_log(log)
    assert not report.ok and report.line == 2
    assert report.problem == f"a line of {len(line)} bytes is not a log line"


async def test_the_log_stream_refuses_a_line_that_is_not_utf8_or_too_long(tmp_path):
    """What GetMatchLog and the spectators read a log with."""
    bad = with_line(tmp_path / "latin1.jsonl", 3, b"\xff\xfe")
    seen = []
    with pytest.raises(LogFormatError, match=r"not UTF-8 \(the bytes ff at byte") as err:
        async for line in stream_lines(bad, chunk=100):
            seen.append(line)
    assert err.value.line == 3 and len(seen) == 2
    endless = tmp_path / "endless.jsonl"
    endless.write_bytes(b"{}\n" + b"x" * (MAX_LINE_BYTES + 10))  # no newline ever comes
    with pytest.raises(LogFormatError) as err:
        async for _ in stream_lines(endless, chunk=1 << 16):
            pass
    assert err.value.line == 2


async def test_a_server_sets_aside_an_unfinished_log_with_a_line_that_is_not_utf8(tmp_path):
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    log = with_line(logs / FIXTURE.name, 4, b"\xc3(", lines=12)  # a match in its first hand
    server = RefereeServer("127.0.0.1:0", logs, state_dir=state, resume=True)
    await server.start()
    try:
        [outcome] = server.resumed
        assert not outcome.resumed and "line 4: not UTF-8" in outcome.problem
        assert not log.exists() and log.with_suffix(".jsonl.unresumable").exists()
    finally:
        await server.stop(grace=0.2)
