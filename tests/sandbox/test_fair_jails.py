"""Fair on every host: a jailed bot sees nothing of its author's files, and cannot slow or
starve the others, as root with cgroup v1, on a cgroup-v2-only host, with no cgroup at
all, and as an ordinary user (``hosts.KINDS``), each through ``referee match`` as a user
runs it.

The author's folder is a real one: a match already played in it (its log deals the same
cards again for the same seed), the state folder with the signing key, the seat tokens of
``organiser create --tokens-dir``, a tournament's folder, a key and a file the author's
``.pusoyignore`` lists. The hostile table seats a bot with busy loops in sessions of
their own (120 in bench/bench_fairness.py), one holding memory in three processes, one
holding connections open through its forwarder while filling its /tmp and writing to /,
and a plain bot, whose turns must all be its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import hosts
import pytest

from referee.log.summary import summarize_log

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PEEK = ROOT / "tests" / "table" / "bots" / "peek_bot.py"
HOG = HERE / "bots" / "hog_bot.py"
RANDOM_BOT = ROOT / "examples" / "random_bot.py"
SEED = "same-deal"


def author_folder(host: hosts.Host) -> tuple[Path, dict[str, Path]]:
    """A bot's folder where its author has worked: what must stay hidden, by name."""
    folder = host.folder("author")
    shutil.copy(PEEK, folder / "peek_bot.py")
    (folder / "book.txt").write_text("my opening book\n")
    (folder / "seats").mkdir()
    (folder / "seats" / "seat-0.token").write_text("a seat's token\n")
    (folder / "night1").mkdir()
    (folder / "night1" / "standings.json").write_text("{}\n")
    (folder / "night1" / "results.jsonl").write_text("{}\n")
    (folder / "client.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (folder / "notes").mkdir()
    (folder / "notes" / "plan.txt").write_text("how I beat them\n")
    (folder / ".pusoyignore").write_text("notes/\n")
    host.own(folder)
    done = host.referee(
        "match", "--hands", "1", "--seed", SEED, "--log-dir", "runs/1", "--publish-logs",
        cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = (folder / "runs" / "1").glob("*.jsonl")
    secrets = {
        "the earlier log": log,
        "the signing key": folder / ".referee" / "signing-key.pem",
        "a seat token": folder / "seats" / "seat-0.token",
        "a tournament's standings": folder / "night1" / "standings.json",
        "a key": folder / "client.pem",
        "an ignored file": folder / "notes" / "plan.txt",
    }
    return folder, secrets


def peek(host: hosts.Host, folder: Path, paths: list[Path], *extra: str) -> dict:
    """A match with the peeking bot at seat 0, run from its folder (shown to it, but for
    what is private); what it read of ``paths``."""
    listed = ":".join(str(p) for p in paths)
    done = host.referee(
        "match", "--hands", "1", "--seed", SEED, "--log-dir", "runs/2", *extra,
        "--bot", f"env PUSOY_PEEK_PATHS={listed} {{python}} peek_bot.py",
        "--bot", "greedy", "--bot", "greedy", "--bot", "random", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (stderr,) = (folder / "runs" / "2").glob("*.seat0.stderr")
    lines = [ln for ln in stderr.read_text().splitlines() if ln.startswith("PEEK ")]
    assert lines, stderr.read_text()[-2000:]
    return json.loads(lines[0][5:])["read"]


def test_a_bot_reads_nothing_of_its_authors_files(host: hosts.Host) -> None:
    folder, secrets = author_folder(host)
    try:
        host.check_level(folder)
        dry = host.referee(
            "match", "--dry-run", "--bot", "{python} peek_bot.py",
            "--bot", "greedy", "--bot", "greedy", "--bot", "random", cwd=folder,
        )  # fmt: skip
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert f"\n    {ROOT}\n" not in dry.stdout  # the checkout (PYTHONPATH): not shown
        for what in ("runs/1", ".referee", "seats", "night1", "client.pem", "notes"):
            assert f"    {folder / what}: " in dry.stdout, dry.stdout
        read = peek(host, folder, [*secrets.values(), folder / "book.txt"])
        assert read[str(folder / "book.txt")] == len("my opening book\n")
        for what, path in secrets.items():
            got = read.get(str(path), "absent")
            assert got == 0 or "Error" in str(got), (what, got)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_attack_is_real_without_a_jail(tmp_path: Path) -> None:
    host = hosts.Host("root")
    folder, secrets = author_folder(host)
    try:
        read = peek(host, folder, list(secrets.values()), "--sandbox", "off")
        for what, path in secrets.items():
            assert isinstance(read[str(path)], int) and read[str(path)] > 0, (what, read)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("where", ["home", "tmp"])
def test_a_relative_bot_path_works_from_home_and_from_tmp(nobody_python: Path, where: str) -> None:
    """From a folder that is its user's HOME (never shown whole: only the files named),
    or from /tmp itself (the jail's /tmp is its own), ``{python} mybot.py`` runs."""
    host = hosts.Host("user", nobody_python)
    logs = host.folder("logs")
    folder = host.folder("home") if where == "home" else Path("/tmp")
    script = folder / f"pusoy-relative-{hosts.os.getpid()}.py"
    shutil.copy(RANDOM_BOT, script)
    try:
        host.own(script)
        bots = ["--bot", f"{{python}} {script.name}", *("--bot", "greedy") * 3]
        dry = host.referee("match", "--dry-run", *bots, cwd=folder, env={"HOME": str(folder)})
        assert f"works in {folder} " in dry.stdout, dry.stdout + dry.stderr
        done = host.referee(
            "match", "--hands", "1", "--log-dir", str(logs), *bots,
            cwd=folder, env={"HOME": str(folder)},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        script.unlink(missing_ok=True)
        shutil.rmtree(logs, ignore_errors=True)
        if folder != Path("/tmp"):
            shutil.rmtree(folder, ignore_errors=True)


HOSTILE = [
    ("env PUSOY_HOG_LOOPS=30 {python} hog_bot.py", "hog"),
    ("env PUSOY_HOG_HOLDERS=3 PUSOY_HOG_MB=250 {python} hog_bot.py", "hoarder"),
    ("env PUSOY_HOG_CONNECTIONS=70 PUSOY_HOG_SCRATCH_MB=64 {python} hog_bot.py", "flooder"),
    ("{python} random_bot.py", "victim"),
]
LIMITS = ("memory_mb=512", "processes=48", "tmp_mb=16", "turn_cores=0.1")
"""Low enough for a test on a busy machine (bench/bench_fairness.py holds the defaults
against 120 loops)."""


def test_no_bot_can_slow_or_starve_the_others(host: hosts.Host) -> None:
    folder = host.folder("hostile")
    try:
        shutil.copy(HOG, folder / "hog_bot.py")
        shutil.copy(RANDOM_BOT, folder / "random_bot.py")
        host.own(folder)
        host.check_level(folder)
        seats = [a for command, name in HOSTILE for a in ("--bot", command, "--name", name)]
        limits = [a for limit in LIMITS for a in ("--limit", limit)]
        done = host.referee(
            "match", "--hands", "2", "--turn-time-ms", "1000", "--connect-timeout-ms", "60000",
            "--log-dir", "runs", *limits, *seats, cwd=folder,
        )  # fmt: skip
        out = done.stdout + done.stderr
        assert done.returncode == 3, out  # bots were stopped: "a bot crashed"
        (log,) = (folder / "runs").glob("*.jsonl")
        seat = summarize_log(log).seats
        assert (seat[3].timeouts, seat[3].gone_cause) == (0, ""), out  # every turn its own
        assert seat[3].turns > 0
        stopped = "its bot was stopped by its jail for breaking its"
        assert seat[0].gone_cause.startswith(f"{stopped} CPU limit (CPU: "), out
        assert "cores on average across" in seat[0].gone_cause
        assert seat[1].gone_cause.startswith(f"{stopped} memory limit (memory: "), out
        assert "limit 512 MB" in seat[1].gone_cause or "over 512 MB" in seat[1].gone_cause
        assert seat[2].gone_cause.startswith(f"{stopped} process limit (processes: "), out
        # The terminal says it too, seat by seat.
        for s in range(3):
            assert seat[s].gone_cause.removeprefix("its bot ") in out, (s, out)
        (flooder,) = (folder / "runs").glob("*.seat2.stderr")
        said = [ln for ln in flooder.read_text().splitlines() if ln.startswith("HOG ")]
        if said:  # stopped before it could say (its forwarders are counted): fine too
            report = json.loads(said[0][4:])
            assert report.get("scratch", "No space left on device") == "No space left on device"
            assert report.get("root", "Read-only file system") == "Read-only file system"
            assert report.get("run", "Read-only file system") == "Read-only file system"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
