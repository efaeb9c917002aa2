"""One log reader: no module but ``referee/log/reader.py`` opens a log file for reading,
and its two modes on real damaged files (strict refuses, naming the line; lenient yields
the bad line as a value and goes on).

The static check lists every place under ``referee/`` that opens a file for reading; each
reads something other than a match log (a key, a token, a config, /proc), or it is the
reader. A new one fails here until it either goes through the reader or is listed with
what it reads. The runtime check runs every command that reads a log on a real log,
under an audit hook, and names the module of each ``open`` of that file.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.log.reader import (
    MAX_LINE_BYTES,
    MAX_LOG_BYTES,
    TORN,
    BadLine,
    LogFormatError,
    LogTooLarge,
    LooseLine,
    TrailerLine,
    read_lenient,
    read_log,
)
from referee.view.fold import fold_log

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests/fixtures/logs/v2").glob("*.jsonl"))
READER = "referee/log/reader.py"

NOT_LOGS = {
    ("referee/cli/ladder.py", "_submit_http.post"): "a bot's archive, to upload",
    ("referee/ladder/submit.py", "_tar"): "a bot's files, to pack",
    ("referee/ladder/submit.py", "submit"): "a bot's archive",
    ("referee/ladder/web.py", "session_secret"): "the web's session key",
    ("referee/table/output.py", "tail_bytes"): "a bot's output",
    ("referee/ladder/archive.py", "archive_digest"): "a bot's archive",
    ("referee/ladder/archive.py", "_Writer.file"): "a file unpacked from an archive (writes)",
    ("referee/ladder/archive.py", "_read_manifest"): "an archive's manifest",
    ("referee/ladder/archive.py", "unpack"): "a bot's archive",
    ("referee/log/signing.py", "load_public_key"): "a public key",
    ("referee/log/traces.py", "read_trace"): "a model seat's trace (its own bounded reader)",
    ("referee/llm/settings.py", "read_api_key"): "a model endpoint's API key",
    ("referee/log/signing.py", "LogSigner.load"): "the signing key",
    ("referee/client/serving.py", "read_serving"): "the serving record",
    ("referee/client/tls.py", "read_pem"): "a certificate or key",
    ("referee/client/tokens.py", "read_token"): "a token file",
    ("referee/sandbox/cgroups.py", "read_file"): "a cgroup file",
    ("referee/sandbox/private_files.py", "_read_ignore"): "a .pusoyignore file",
    ("referee/sandbox/processes.py", "_stat"): "/proc/PID/stat",
    ("referee/sandbox/processes.py", "resident_bytes"): "/proc/PID/statm",
    ("referee/sandbox/processes.py", "proportional_bytes"): "/proc/PID/smaps_rollup",
    ("referee/sandbox/jail.py", "_check_program"): "a bot's program (its #! line)",
    ("referee/server/registry.py", "MatchRegistry._resume"): "a match's seed file",
    ("referee/sandbox/view.py", "_environment_of"): "a bot's program and its config",
    ("referee/table/output.py", "BotOutput.__init__"): "a bot's output files (writes)",
    ("referee/table/output.py", "read_output"): "a bot's output and its times",
    ("referee/table/output.py", "raised_in"): "a bot's output (its kit's raised markers)",
    ("referee/table/procs.py", "_stat_fields"): "/proc/PID/stat",
    ("referee/table/procs.py", "BotProcess.spawn"): "the sandbox (jail.open())",
    ("referee/table/procs.py", "ProcessLedger.reap_leftovers"): "the process ledger",
    ("referee/tournament/toml_table.py", "read_toml"): "a tournament's or a ladder's TOML",
    ("referee/tournament/director.py", "Tournament.run"): "results files (files.open())",
    ("referee/tournament/director.py", "Tournament._check_folder"): "tournament.json",
    ("referee/tournament/results.py", "ResultsFiles.read"): "results.jsonl",
    ("referee/tournament/results.py", "ResultsFiles.load"): "results.jsonl",
    ("referee/tournament/verify.py", "verify_tournament"): "tournament.json",
    ("referee/tournament/verify.py", "_results"): "results.jsonl",
    ("referee/view/index.py", "build_pages"): "the index's manifest",
    ("referee/view/index.py", "tournament_logs"): "results.jsonl",
    ("referee/view/index.py", "write_index"): "standings.json",
    ("referee/view/page.py", "asset"): "the viewer's own assets",
    ("referee/benchmark/pool.py", "load_pool"): "a benchmark pool's file",
    ("referee/ladder/first_score.py", "first_score"): "a first score's ended.json",
    ("referee/ladder/first_score.py", "FirstScores._ended"): "a benchmark's report",
    ("referee/view/index.py", "_benchmark_report"): "a benchmark's report",
}
"""Every other place that opens a file to read it, and what it reads: never a log."""

_WRITING = set("wax+")
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _mode(call: ast.Call, position: int) -> object:
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return call.args[position].value
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def _reads(call: ast.Call) -> bool:
    """Whether a call opens a file by name to read it (a write, by its mode, does not)."""
    f = call.func
    if isinstance(f, ast.Name) and f.id == "open":
        return not set(str(_mode(call, 1) or "")) & _WRITING
    if isinstance(f, ast.Attribute) and f.attr in ("read_bytes", "read_text"):
        return True
    if isinstance(f, ast.Attribute) and f.attr == "open":
        if isinstance(f.value, ast.Name) and f.value.id == "os":
            flags = ast.walk(call.args[1]) if len(call.args) > 1 else iter(())
            return not {n.attr for n in flags if isinstance(n, ast.Attribute)} & _WRITE_FLAGS
        if isinstance(f.value, ast.Name) and f.value.id in ("tarfile", "gzip", "zipfile"):
            return False  # opens a stream it is handed
        if call.args and not isinstance(call.args[0], ast.Constant):
            return False  # not Path.open (whose first argument is a mode): a zip's member
        return not set(str(_mode(call, 0) or "")) & _WRITING
    return any(isinstance(a, ast.Name) and a.id == "open" for a in call.args)  # to_thread(open…)


def file_reads() -> dict[tuple[str, str], list[int]]:
    """(module, enclosing function) -> the lines where it opens a file to read it."""
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted((ROOT / "referee").rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if module.startswith("referee/proto/"):
            continue  # generated
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes: dict[ast.AST, str] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                outer = scopes.get(node, "")
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    outer = f"{outer}.{node.name}" if outer else node.name
                scopes[child] = outer
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _reads(node):
                found.setdefault((module, scopes.get(node) or "<module>"), []).append(node.lineno)
    return found


def test_no_module_but_the_reader_opens_a_log_file_for_reading():
    reads = file_reads()
    assert {module for module, _ in reads} >= {READER}
    others = {where: lines for where, lines in reads.items() if where[0] != READER}
    unknown = {
        f"{m}:{lines[0]} ({fn})" for (m, fn), lines in others.items() if (m, fn) not in NOT_LOGS
    }
    assert not unknown, (
        "a file is opened to be read outside the log reader: read a log through "
        f"referee.log.reader, or list here what this reads: {sorted(unknown)}"
    )
    stale = sorted(f"{m} ({fn})" for m, fn in NOT_LOGS if (m, fn) not in reads)
    assert not stale, f"listed here but no longer reading a file (remove them): {stale}"
    # The ones that used to read logs themselves are gone.
    assert not (ROOT / "referee/view/logfile.py").exists()
    for module in ("referee/log/stream.py", "referee/server/servicers.py", "referee/view/fold.py"):
        assert not [w for w in reads if w[0] == module], module


def test_the_static_check_sees_the_ways_a_file_is_opened():
    calls = [
        ("open(p)", True),
        ("open(p, 'rb')", True),
        ("open(p, 'r+b')", False),
        ("open(p, mode='w')", False),
        ("p.read_bytes()", True),
        ("Path(p).read_text(encoding='utf-8')", True),
        ("p.open('rb')", True),
        ("p.open('a')", False),
        ("os.open(p, os.O_RDONLY)", True),
        ("os.open(p, os.O_WRONLY | os.O_CREAT)", False),
        ("asyncio.to_thread(open, p, 'rb')", True),
        ("tarfile.open(fileobj=f)", False),
        ("zf.open(info)", False),
        ("json.loads(p)", False),
    ]
    for source, reads in calls:
        call = ast.parse(source, mode="eval").body
        assert isinstance(call, ast.Call)
        assert _reads(call) is reads, source


AUDIT = r"""
import sys
from pathlib import Path

log = Path(sys.argv[1]).resolve()
root = Path(sys.argv[2]).resolve()
openers = {}

def hook(event, args):
    if event != "open" or not isinstance(args[0], (str, bytes, Path)):
        return
    try:
        if Path(args[0]).resolve() != log:
            return
    except (OSError, ValueError):
        return
    frame = sys._getframe(1)
    while frame is not None:
        name = Path(frame.f_code.co_filename)
        if name.is_relative_to(root / "referee"):
            openers.setdefault(name.relative_to(root).as_posix(), set()).add(frame.f_code.co_name)
            return
        frame = frame.f_back
    openers.setdefault("?", set()).add(str(args[0]))

sys.addaudithook(hook)

import asyncio, contextlib, io, json
from referee.cli import main
from referee.log.positions import read_positions
from referee.log.stream import public_events
from referee.log.summary import summarize_log
from referee.log.verify import verify_log
from referee.view.page import replay_page

out = Path(sys.argv[3])
commands = [
    ["replay", str(log)],
    ["replay", str(log), "--seat", "1"],
    ["view", str(log), "-o", str(out / "page.html")],
    ["verify", str(log)],
    ["rules", "positions", str(log), "--seat", "0"],
]
for argv in commands:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
summarize_log(log)
read_positions(log, 2)
verify_log(log)
replay_page(log)

async def stream():
    return [e async for e in public_events(log)]

asyncio.run(stream())
print(json.dumps({m: sorted(f) for m, f in openers.items()}))
"""


def test_every_command_that_reads_a_log_opens_it_through_the_reader(tmp_path):
    log = tmp_path / FIXTURES[0].name
    log.write_bytes(FIXTURES[0].read_bytes())
    done = subprocess.run(
        [sys.executable, "-c", AUDIT, str(log), str(ROOT), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    openers = json.loads(done.stdout.splitlines()[-1])
    assert set(openers) == {READER}, openers
    # strict (replay, verify, positions, summaries), lenient (the viewer), streamed (feeds)
    assert set(openers[READER]) == {"read_bounded", "_open_binary"}
    assert (tmp_path / "page.html").stat().st_size > 0


# -- strict and lenient on real damaged files ----------------------------------------------


def _damaged(tmp_path: Path, name: str, change) -> tuple[Path, list[bytes]]:
    lines = FIXTURES[0].read_bytes().split(b"\n")[:-1]
    changed = change(list(lines))
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in changed))
    return path, lines


def _replace(i: int, new: bytes):
    def change(lines: list[bytes]) -> list[bytes]:
        lines[i - 1] = new
        return lines

    return change


DAMAGE = {
    # name: (change, the line number it damages, what both modes say about it)
    "not_json": (_replace(5, b'{"match_id": oops'), 5, "not JSON"),
    "not_utf8": (
        lambda lines: [*lines[:6], lines[6].replace(b'id":"', b'id":"\xff', 1), *lines[7:]],
        7,
        "not UTF-8 (the bytes ff",
    ),
    "too_long": (
        _replace(8, b'{"match_id":"' + b"x" * MAX_LINE_BYTES + b'"}'),
        8,
        f"a line of {MAX_LINE_BYTES + 15} bytes",
    ),
    "not_an_object": (_replace(3, b"[1, 2, 3]"), 3, "not a"),
}


@pytest.mark.parametrize("name", DAMAGE)
def test_strict_names_the_damaged_line_and_lenient_yields_it_and_goes_on(tmp_path, name):
    change, number, problem = DAMAGE[name]
    path, original = _damaged(tmp_path, name, change)
    with pytest.raises(LogFormatError) as refused:
        read_log(path)
    assert refused.value.line == number and problem in str(refused.value)

    lenient = read_lenient(path)
    assert len(lenient.lines) == len(original) and not lenient.truncated
    bad = [line for line in lenient.lines if isinstance(line, BadLine)]
    assert [b.number for b in bad] == [number] and problem in bad[0].problem
    # Every other line is what the file holds, the trailer last.
    assert isinstance(lenient.lines[-1], TrailerLine)
    for line in lenient.lines[:-1]:
        if isinstance(line, LooseLine):
            assert line.data == json.loads(original[line.number - 1])
    # The viewer shows it as a bad op in place, and everything after it.
    ops = fold_log(path).ops
    assert len(ops) == len(original) and ops[number - 1]["t"] == "bad"
    assert ops[-2]["t"] == "end" and ops[-1]["t"] == "trailer"


def test_a_torn_last_line_is_reported_by_both_never_raised(tmp_path):
    whole = FIXTURES[0].read_bytes()
    lines = whole.split(b"\n")[:-1]
    path = tmp_path / "torn.jsonl"
    cut = b"\n".join(lines[:-2]) + b"\n" + lines[-2][:40]  # dies writing match_ended
    path.write_bytes(cut)
    strict = read_log(path)
    assert strict.truncated and strict.torn_bytes == 40 and len(strict.lines) == len(lines) - 2
    assert strict.whole_bytes == len(cut) - 40 and strict.trailer is None
    assert strict.status() == f"incomplete: the last line (line {len(lines) - 1}) is cut short"
    lenient = read_lenient(path)
    assert lenient.truncated and lenient.whole_lines == len(lines) - 2
    assert lenient.lines[-1] == BadLine(len(lines) - 1, TORN)


def test_both_modes_refuse_a_file_larger_than_any_log_before_reading_it(tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.write(FIXTURES[0].read_bytes())
        f.truncate(MAX_LOG_BYTES + 1)  # sparse
    for read in (read_log, read_lenient, fold_log):
        with pytest.raises(LogTooLarge, match="larger than any log a referee writes"):
            read(big)


def test_every_fixture_reads_the_same_in_both_modes():
    for path in FIXTURES:
        strict = read_log(path)
        lenient = read_lenient(path)
        assert strict.complete and strict.trailer is not None
        loose = [line for line in lenient.lines if isinstance(line, LooseLine)]
        assert [line.data for line in loose] == [json.loads(line.raw) for line in strict.lines]
        assert isinstance(lenient.lines[-1], TrailerLine)
        assert lenient.lines[-1].body["final_hash"] == strict.trailer.final_hash
