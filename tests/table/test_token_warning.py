"""A seat token on a bot's command line (``{token}``) is visible to every user of the
machine in ``ps``: ``referee match`` and ``referee tournament`` say so in one line where
the bot is configured, and nothing the project ships puts it there (issue 29, item 4)."""

from __future__ import annotations

import re
from pathlib import Path

from referee_cli import ROOT, run_referee

from referee.table.bots import TOKEN_WARNING
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config

BOT = ROOT / "examples" / "random_bot.py"


def test_referee_match_warns_of_a_token_on_a_command_line(tmp_path):
    exposed = f"{{python}} {BOT} --token={{token}}"
    done = run_referee(
        "match", "--dry-run", "--bot", exposed, "--bot", f"{{python}} {BOT}",
        "--bot", "greedy", "--bot", "random", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    warned = [ln for ln in done.stdout.splitlines() if TOKEN_WARNING in ln]
    assert warned == [f"warning: seat 0 (random_bot-1): {TOKEN_WARNING}"]
    assert "PUSOY_TOKEN" in warned[0] and "ps" in warned[0]


def test_referee_tournament_warns_of_each_bot_with_a_token_on_its_command_line(tmp_path):
    (tmp_path / "random_bot.py").write_text(BOT.read_text())
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\nseed = "s"\n'
        '[[bot]]\nname = "exposed"\ncommand = "{python} random_bot.py --token={token}"\n'
        '[[bot]]\nname = "quiet"\ncommand = "{python} random_bot.py"\n'
        '[[bot]]\nname = "g"\nbuiltin = "greedy"\n[[bot]]\nname = "r"\nbuiltin = "random"\n'
    )
    # What the runner prints as "warning: ..." before anything starts (and with --dry-run).
    warnings = Tournament(load_config(tmp_path / "t.toml")).preflight()
    assert [w for w in warnings if TOKEN_WARNING in w] == [f"bot exposed: {TOKEN_WARNING}"]


COMMAND_WITH_TOKEN = re.compile(r"(command\s*=|--bot\b|bot_entry\(|\bcommand=).*\{\{?token\}")


def test_no_example_doc_kit_readme_or_test_puts_the_token_on_a_command_line():
    shipped = [
        *ROOT.glob("examples/**/*.*"),
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("clients/*/README.md"),
        ROOT / "README.md",
        *(p for p in ROOT.glob("tests/**/*.py") if p != Path(__file__)),
        *ROOT.glob("referee/**/*.py"),
    ]
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in shipped
        if path.is_file() and path.suffix in (".py", ".md", ".toml")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if COMMAND_WITH_TOKEN.search(line)
    ]
    assert found == []
