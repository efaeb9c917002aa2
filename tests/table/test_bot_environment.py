"""What a spawned bot finds in its environment, as docs/kits.md (section 7) and
docs/first-bot.md say (issue 31, item 7): the variables the referee sets for it and a
few of the starter's, never the rest of the starter's shell, and a setting given on its
command through ``env`` reaches it, jailed and bare."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jailing
import pytest
from referee_cli import ROOT, run_referee

from referee.table.jails import BARE_ENV, PASSED_ENV

BOT = Path(__file__).resolve().parent / "bots" / "env_bot.py"
SET_BY_THE_REFEREE = {"PUSOY_ADDRESS", "PUSOY_TOKEN"}
JAILED = {"HOME", "TMPDIR", "USER", "PWD"}
"""Set by the jail itself (/tmp, /tmp, bot, and its working folder)."""


def env_report(log_dir: Path) -> dict:
    (stderr,) = log_dir.glob("*.seat0.stderr")
    (line,) = [ln for ln in stderr.read_text().splitlines() if ln.startswith("ENV ")]
    return json.loads(line[4:])


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_spawned_bot_gets_its_own_settings_and_not_the_starters_shell(tmp_path, sandbox):
    shell = {"PUSOY_SAFETY_MARGIN_MS": "80", "MY_SECRET": "organisers-only", "LANG": "C.UTF-8"}
    done = run_referee(
        "match", "--hands", "1", "--sandbox", sandbox, "--log-dir", str(tmp_path / "logs"),
        "--bot", f"env MYBOT_DEPTH=3 {{python}} {BOT}",
        *("--bot", "greedy", "--bot", "random", "--bot", "greedy"),
        cwd=tmp_path, env=shell,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = env_report(tmp_path / "logs")
    assert report["depth"] == "3"  # through env on its command
    names = set(report["names"]) - {"MYBOT_DEPTH"}
    kept = set(PASSED_ENV if sandbox == "auto" else BARE_ENV)
    allowed = SET_BY_THE_REFEREE | kept | (JAILED if sandbox == "auto" else set())
    assert names <= allowed, names - allowed
    assert names >= SET_BY_THE_REFEREE and "LANG" in names
    assert "MY_SECRET" not in names and "PUSOY_SAFETY_MARGIN_MS" not in names


def test_the_docs_name_every_variable_a_spawned_bot_gets():
    for doc in ("docs/kits.md", "docs/first-bot.md"):
        text = (ROOT / doc).read_text()
        said = set(re.findall(r"`([A-Z_]{2,})`", text))
        assert set(BARE_ENV) <= said, (doc, set(BARE_ENV) - said)


def test_as_an_ordinary_user_in_the_light_jail_too(nobody_python):
    folder = jailing.nobody_folder()
    try:
        done = jailing.run_as_nobody(
            [str(nobody_python), "-m", "referee.cli", "match", "--hands", "1", "--sandbox", "on",
             "--log-dir", str(folder / "logs"), "--bot", f"env MYBOT_DEPTH=3 {{python}} {BOT}",
             *("--bot", "greedy", "--bot", "random", "--bot", "greedy")],
            cwd=folder, env={"PUSOY_SAFETY_MARGIN_MS": "80", "MY_SECRET": "organisers-only"},
        )  # fmt: skip
        if "no jail" in done.stderr or "cannot be made" in done.stderr:
            jailing.unavailable(f"no light jail for user 65534: {done.stderr}")
        assert done.returncode == 0, done.stdout + done.stderr
        report = env_report(folder / "logs")
        assert report["depth"] == "3"
        names = set(report["names"]) - {"MYBOT_DEPTH"}
        assert names <= SET_BY_THE_REFEREE | set(PASSED_ENV) | JAILED, names
        assert "MY_SECRET" not in names and "PUSOY_SAFETY_MARGIN_MS" not in names
    finally:
        shutil.rmtree(folder, ignore_errors=True)
