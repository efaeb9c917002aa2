"""``referee match`` jails its spawned bots: a hostile bot finds no hand, for real.

A peeking bot (bots/peek_bot.py) knows its match id and searches for the live log named
after it, reads the log and state folders and another bot's files, and looks for the
referee's environment. In the full jail (root, cgroups) and in the light jail (run here
as the ordinary user 65534) it finds nothing; run bare, the same bot finds the log, which
shows the search is a real one. Then the bot author's flow: a bot in a private folder
(mktemp -d, mode 0700), run with {python}, reads its files and imports its kit in the
jail; a file it cannot read there is named before the run and after its death.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import jailing
import pytest
from referee_cli import run_referee

from referee.log.writer import EventLogWriter
from referee.sandbox import (
    Breach,
    Jail,
    JailSpec,
    Level,
    RefereeSocket,
    SandboxLimits,
    SandboxUnavailable,
    Support,
    probe_light,
)
from referee.sandbox.limits import HELPER_TASKS
from referee.table.bots import BuiltinBot, Seat, parse_bot
from referee.table.jails import plan_jails
from referee.table.procs import BotProcess

HERE = Path(__file__).resolve().parent
PEEK = HERE / "bots" / "peek_bot.py"
RANDOM_BOT = HERE.parents[1] / "examples" / "random_bot.py"
SECRET = "PUSOY_PEEK_SECRET"
DRY_BOTS = ("--bot", f"{{python}} {PEEK}", "--bot", "greedy", "--bot", "greedy", "--bot", "random")


def peek_report(log_dir: Path) -> dict:
    (stderr,) = log_dir.glob("*.seat0.stderr")
    lines = [ln for ln in stderr.read_text().splitlines() if ln.startswith("PEEK ")]
    assert lines, stderr.read_text()[-2000:]
    return json.loads(lines[0][5:])


def peek_match(folder: Path, *extra: str) -> tuple[list[str], list[str]]:
    """A match with the peeking bot at seat 0 and another spawned bot (its own folder,
    holding a secret) at seat 1, run from ``folder``: the referee's arguments, and what
    the peeking bot is told to read."""
    other = folder / "other"
    other.mkdir()
    shutil.copy(RANDOM_BOT, other / "random_bot.py")
    (other / "notes.txt").write_text("the other bot's notes\n")
    targets = [folder / "matches", folder / ".referee", other / "notes.txt", other]
    paths = os.pathsep.join(str(t) for t in targets)
    args = [
        "match",
        "--hands",
        "1",
        "--connect-timeout-ms",
        "30000",
        *extra,
        "--bot",
        f"env PUSOY_PEEK_PATHS={paths} {{python}} {PEEK}",
        "--bot",
        f"{{python}} {other / 'random_bot.py'}",
        "--bot",
        "greedy",
        "--bot",
        "random",
    ]
    return args, [str(t) for t in targets]


def assert_found_nothing(report: dict) -> None:
    assert report["match_id"]
    assert report["found"] == {}, report["found"]  # no file named after the match
    for path, got in report["read"].items():
        # Errors, a hidden folder's empty stand-in, or a hidden file's empty one.
        assert got in ("empty", 0) or "Error" in str(got), (path, got)
    assert report["env"] == [], report["env"]


def test_a_peeking_bot_finds_nothing_in_the_full_jail_and_everything_bare(tmp_path):
    jailing.require_level(Level.FULL)
    jailed = tmp_path / "jailed"
    jailed.mkdir()
    args, _ = peek_match(jailed, "--sandbox", "on")
    done = run_referee(*args, cwd=jailed, env={SECRET: "referee-only"})
    assert done.returncode == 0, done.stdout + done.stderr
    report = peek_report(jailed / "matches")
    assert_found_nothing(report)
    assert report["uid"] == jailing.NOBODY

    bare = tmp_path / "bare"  # the control: the same bot, unjailed, finds the live log
    bare.mkdir()
    args, _ = peek_match(bare, "--sandbox", "off")
    done = run_referee(*args, cwd=bare, env={SECRET: "referee-only"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("WARNING: spawned bots run WITHOUT a jail") == 1
    report = peek_report(bare / "matches")
    log = str(bare / "matches" / f"{report['match_id']}.jsonl")
    assert report["found"][log] > 1000  # every hand, from the first event
    assert report["read"][str(bare / "other" / "notes.txt")] > 0
    # A bare bot gets a small environment, not the referee's (whose own /proc entry its
    # user can still read: that is why bots are jailed).
    assert "own environment" not in report["env"]


def test_a_peeking_bot_finds_nothing_in_the_light_jail_as_an_ordinary_user(nobody_python):
    folder = jailing.nobody_folder()
    try:
        probe = jailing.run_as_nobody(
            [str(nobody_python), "-m", "referee.cli", "match", "--dry-run", *DRY_BOTS],
            cwd=folder,
        )
        if "light jail" not in probe.stdout:
            jailing.unavailable(f"no light jail for user 65534: {probe.stdout}{probe.stderr}")
        args, _ = peek_match(folder, "--sandbox", "on")
        for made in (folder / "other", folder / "other" / "random_bot.py"):
            os.chown(made, jailing.NOBODY, jailing.NOBODY)
        done = jailing.run_as_nobody(
            [str(nobody_python), "-m", "referee.cli", *args],
            cwd=folder,
            env={SECRET: "referee-only"},
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report = peek_report(folder / "matches")
        assert_found_nothing(report)
        assert report["uid"] == jailing.NOBODY  # its own user, in its own namespace
        live = next((folder / "matches").glob("*.jsonl"))
        assert live.stat().st_uid == jailing.NOBODY and live.stat().st_mode & 0o777 == 0o600
    finally:
        shutil.rmtree(folder, ignore_errors=True)


AUTHOR_BOT = """\
from pathlib import Path
from pusoy_client import main
from pusoy_client.samples import GreedyBot

print("notes:", Path("notes.txt").read_text().strip(), flush=True)
main(GreedyBot())
"""


@pytest.fixture
def author_folder() -> Iterator[Path]:
    """A bot author's folder as ``mktemp -d`` makes it: mode 0700, the referee's user's."""
    folder = Path(tempfile.mkdtemp(prefix="pusoy-author-"))
    try:
        (folder / "bot.py").write_text(AUTHOR_BOT)
        (folder / "notes.txt").write_text("mine\n")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def author_match(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    bots = ["{python} bot.py", "greedy", "greedy", "random"]
    return run_referee(
        "match",
        "--hands",
        "1",
        "--log-dir",
        str(folder / "matches"),
        "--state-dir",
        str(folder / "state"),
        *extra,
        *[a for b in bots for a in ("--bot", b)],
        cwd=folder,
    )


def test_an_authors_bot_in_a_private_folder_plays_in_the_jail(author_folder):
    """mktemp -d's folder is 0700: the jail rebuilds it from its entries, so the bot
    (nobody in the full jail) reads its files and imports pusoy_client from the referee's
    environment. The finished log is published when asked, private otherwise."""
    support = jailing.require_level(Level.LIGHT)
    assert author_folder.stat().st_mode & 0o777 == 0o700
    dry = author_match(author_folder, "--dry-run")
    assert dry.returncode == 0 and f"{support.level.value} jail" in dry.stdout, dry.stdout
    assert "cannot read" not in dry.stdout
    done = author_match(author_folder, "--publish-logs")
    assert done.returncode == 0, done.stdout + done.stderr
    (stderr,) = (author_folder / "matches").glob("*.seat0.stderr")
    assert "notes: mine" in stderr.read_text()
    (log,) = (author_folder / "matches").glob("*.jsonl")
    assert log.stat().st_mode & 0o777 == 0o644  # --publish-logs, at the match's end
    assert stderr.stat().st_mode & 0o777 == 0o600


def test_a_file_the_jailed_bot_cannot_read_is_named_before_and_after(author_folder):
    jailing.require_level(Level.FULL)  # as root the bot runs as nobody: the modes matter
    (author_folder / "notes.txt").chmod(0o600)
    dry = author_match(author_folder, "--dry-run")
    assert dry.returncode == 0
    assert f"cannot read: {author_folder / 'notes.txt'}" in dry.stdout, dry.stdout
    done = author_match(author_folder)
    assert done.returncode == 3, done.stdout + done.stderr  # the bot crashed
    assert "PermissionError" in done.stderr
    assert "why, most likely: in its jail it runs as nobody (uid 65534)" in done.stderr
    (log,) = (author_folder / "matches").glob("*.jsonl")
    assert log.stat().st_mode & 0o777 == 0o600  # not published: private

    (author_folder / "bot.py").chmod(0o600)  # its program: it cannot even start
    refused = author_match(author_folder)
    assert refused.returncode == 2
    assert f"cannot read {author_folder / 'bot.py'}" in refused.stderr, refused.stderr


async def test_a_live_log_and_a_bots_output_are_private_in_an_open_folder(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o755)
    old = os.umask(0o022)
    try:
        writer = EventLogWriter.create(folder / "m.jsonl", "m")
        proc = await BotProcess.spawn(
            [sys.executable, "-c", "import time; print('x', flush=True); time.sleep(30)"],
            env={},
            cwd=None,
            stderr_path=folder / "new" / "m.seat0.stderr",
        )
        try:
            assert (folder / "m.jsonl").stat().st_mode & 0o777 == 0o600
            assert (folder / "new").stat().st_mode & 0o777 == 0o700
            assert (folder / "new" / "m.seat0.stderr").stat().st_mode & 0o777 == 0o600
        finally:
            await proc.stop(0)
            writer.close()
    finally:
        os.umask(old)


def test_where_no_jail_can_be_made_auto_warns_once_and_on_refuses(tmp_path):
    """The decision alone, for a machine that can make no jail (this one can): what it
    would say is what probe() says is missing."""
    none = Support(
        Level.NONE,
        {Level.FULL: ("it needs root",), Level.LIGHT: ("bubblewrap cannot make namespaces",)},
    )
    seats = [Seat("mine", parse_bot(f"{{python}} {RANDOM_BOT}"))]
    seats += [Seat(n, BuiltinBot("greedy")) for n in ("a", "b", "c")]
    where = {"log_dir": tmp_path / "matches", "state_dir": tmp_path / ".referee"}
    plan = plan_jails("auto", seats, support=none, **where)
    assert plan.jails is None and plan.level is Level.NONE and len(plan.warnings) == 1
    (warning,) = plan.warnings
    assert "WITHOUT a jail" in warning and "it needs root" in warning
    assert str(tmp_path / "matches") in warning and "all four hands" in warning
    with pytest.raises(SandboxUnavailable, match="light jail: bubblewrap cannot make"):
        plan_jails("on", seats, support=none, **where)
    assert plan_jails("auto", seats[1:] + seats[1:2], support=none, **where).warnings == []


async def test_the_light_jail_holds_its_bot_to_rlimits(tmp_path):
    """As root the light jail runs the bot as nobody in a user namespace of its own: its
    rlimits stay under the referee's own accounting (against what a poll could miss),
    and spinning past cpu_s is a CPU breach."""
    support = probe_light()
    if not support.ok:
        jailing.unavailable(support.explain())
    sock = RefereeSocket()
    listener = socket.socket(socket.AF_UNIX)  # the referee's end, bridged into the jail
    listener.bind(str(sock.path))
    try:
        limits = SandboxLimits(cpu_s=1, processes=20, memory_mb=512, tmp_mb=8)
        spin = "import time\nprint(open('/proc/self/limits').read(), flush=True)\nwhile 1: pass"
        spec = JailSpec(
            argv=["/usr/bin/python3", "-c", spin],  # the system's: visible in any jail
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
            referee_socket=sock.path,
            port=40123,
            uid=os.getuid() if os.geteuid() else jailing.NOBODY,
            gid=os.getgid() if os.geteuid() else jailing.NOBODY,
            limits=limits,
            level=Level.LIGHT,
        )
        jail = Jail(spec, None, bwrap=support.bwrap)
        proc = await BotProcess.spawn([], env={}, cwd=None, stderr_path=tmp_path / "out", jail=jail)
        code = await proc.wait(30)
        await proc.stop(0)
    finally:
        listener.close()
        sock.close()
    out = (tmp_path / "out").read_text()
    assert code == -signal.SIGXCPU, out
    assert jail.report is not None and jail.report.breach is Breach.CPU
    assert jail.report.cpu_s is not None and jail.report.cpu_s > 0.5  # counted all the same
    rows = {line[:26].strip(): line[26:].split() for line in out.splitlines()}
    assert rows["Max cpu time"][:2] == ["1", "2"]  # SIGXCPU at 1 s, SIGKILL at 2 s
    assert rows["Max processes"][:2] == [str(20 + HELPER_TASKS)] * 2
    assert rows["Max address space"][0] == str(512 << 20)
    assert rows["Max file size"][0] == str(8 << 20)
