"""A ladder's organiser's first mistakes, each one line and exit 2 (issue 31, item 3): the
lobby's port held by a running referee, and a command on a ladder never made."""

from __future__ import annotations

import shutil
from pathlib import Path

from referee.sandbox import Level
from tests.support.jailing import require_level
from tests.support.pythons import run_commands_without
from tests.support.referee_cli import ROOT, run_referee
from tests.support.referee_process import Serve


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
