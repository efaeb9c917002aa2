"""A ladder's organiser's first mistakes, each one line and exit 2 (issue 31, item 3): the
lobby's port held by a running referee, and a command on a ladder never made."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from referee.ladder.config import load_ladder_config
from referee.ladder.errors import NotFound
from referee.ladder.runner import prepare
from referee.ladder.store import LadderStore
from referee.sandbox import Level
from tests.support.jailing import require_level
from tests.support.pythons import run_commands_without
from tests.support.referee_cli import ROOT, run_referee
from tests.support.referee_process import Serve, free_port


def example_ladder(folder: Path, lobby: str) -> Path:
    for name in ("weak_bot.py", "greedy_bot.py", "random_bot.py"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    text = (ROOT / "examples" / "ladder.toml").read_text()
    assert 'address = "127.0.0.1:50070"' in text
    path = folder / "ladder.toml"
    path.write_text(text.replace("127.0.0.1:50070", lobby).replace("count = 0 ", "count = 1 "))
    return path


def test_ladder_run_with_its_lobby_port_taken_by_a_referee_is_one_line(tmp_path):
    require_level(Level.LIGHT)  # a ladder refuses to run where it cannot jail its bots
    held = Serve(tmp_path / "serve")
    held.start()
    try:
        config = example_ladder(tmp_path, held.address)
        done = run_referee("ladder", "run", str(config), cwd=tmp_path, timeout=60)
    finally:
        held.stop()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "RefereeUnavailable" not in done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("referee ")]
    assert line.startswith(f"referee ladder run: the lobby cannot listen on {held.address}")
    assert "[lobby] address" in line and "another ladder or referee" in line
    # Stopped before any worker process was started.
    assert not list((tmp_path / "ladder-data" / "work").glob("*-w1.stderr"))


def test_a_command_on_a_ladder_never_made_says_to_init_it_first(tmp_path):
    config = example_ladder(tmp_path, "127.0.0.1:0")
    commands = [
        ["ladder", "serve", str(config), "--http", "127.0.0.1:0"],
        ["ladder", "status", str(config)],
        ["ladder", "backup", str(config), "b.db"],
        ["ladder", "retire", str(config), "alpha", "mybot"],
    ]
    (tmp_path / "python").mkdir()
    results = run_commands_without([], commands, folder=tmp_path / "python", cwd=tmp_path)
    for done in results:
        assert (done["code"], done["raised"]) == (2, ""), done
        (line,) = done["stderr"].splitlines()
        assert line.startswith(f"referee ladder {done['argv'][1]}: {config} has no ladder yet")
        assert line.endswith(f" ladder init {config}")
    assert not (tmp_path / "ladder-data").exists()


CRASH_TAIL = "\n".join(
    ("loading my model", "Traceback (most recent call last):", "ZeroDivisionError: oops")
)


def test_submit_wait_shows_a_rejected_versions_output_lines(tmp_path):
    """``--wait`` answers a rejected version with its reason and its output's last lines
    (docs/ladder.md), over the web with the team's key and on the ladder's machine. The
    verdict is recorded by the store's ``reject``, as validation records it."""
    config = example_ladder(tmp_path, "127.0.0.1:0")
    store = prepare(load_ladder_config(config))  # what `referee ladder init` makes
    try:
        key = store.create_team("alpha").key
    finally:
        store.close()
    bot = tmp_path / "mybot"
    bot.mkdir()
    shutil.copy(ROOT / "examples" / "weak_bot.py", bot / "weak_bot.py")
    (bot / "bot.toml").write_text('runtime = "python"\ncommand = ["weak_bot.py"]\n')
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PUSOY_LADDER_KEY": key}
    argv = [sys.executable, "-m", "referee.cli", "ladder"]
    web = subprocess.Popen(
        [*argv, "serve", str(config), "--http", f"127.0.0.1:{port}"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    waits: list[subprocess.Popen[str]] = []
    try:
        deadline = time.monotonic() + 60
        while not web_up(port):
            assert web.poll() is None and time.monotonic() < deadline, "ladder serve did not start"
            time.sleep(0.1)
        for name, where in (("overweb", ["--url", f"http://127.0.0.1:{port}"]),
                            ("local", ["--config", str(config)])):  # fmt: skip
            waits.append(
                subprocess.Popen(
                    [*argv, "submit", *where, name, str(bot), "--wait"],
                    cwd=tmp_path,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        store = LadderStore.open(load_ladder_config(config).database, migrate=False)
        try:
            for name in ("overweb", "local"):
                deadline = time.monotonic() + 60
                while True:
                    try:
                        version = store.find_version("alpha", name, 1)
                        break
                    except NotFound:
                        assert time.monotonic() < deadline, f"{name} was never uploaded"
                        time.sleep(0.1)
                why = "its bot exited with status 1 before the match ended"
                store.reject(version.id, why, CRASH_TAIL)
        finally:
            store.close()
        answers = [w.communicate(timeout=60) for w in waits]
    finally:
        for p in (web, *waits):
            if p.poll() is None:
                p.kill()
                p.wait()
    for (out, err), w, name in zip(answers, waits, ("overweb", "local"), strict=True):
        assert w.returncode == 1, out + err
        assert f"alpha/{name}#1: rejected: its bot exited with status 1" in out, out
        assert "its output in the validation match, its last 3 lines" in out, out
        assert out.rstrip().endswith("  | ZeroDivisionError: oops"), out


def web_up(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2):
            return True
    except OSError:
        return False
