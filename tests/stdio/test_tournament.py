"""Stdio bots in tournament configs: checked like commands, spawned behind the bridge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.log.verify import verify_log
from referee.tournament.config import BotKind, ConfigError
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config

from .conftest import KIT, build_samples


def write(folder: Path, bots: str) -> Path:
    path = folder / "t.toml"
    path.write_text(
        "[tournament]\n"
        'seed = "stdio"\nformat = "fixed"\nseatings = "none"\nrounds = 2\noutput = "out"\n'
        '[rules]\nprofile = "big-two"\nhands = 2\n'
        "[time]\nturn_time_ms = 5000\nconnect_timeout_ms = 30000\n" + bots,
        encoding="utf-8",
    )
    return path


def test_a_stdio_bot_is_a_command_run_behind_the_bridge(tmp_path):
    (tmp_path / "plain").write_text("#!/bin/sh\n")
    (tmp_path / "plain").chmod(0o755)
    config = load_config(
        write(
            tmp_path,
            '[[bot]]\nname = "plain"\nstdio = "./plain --seat {seat}"\n'
            + "".join(f'[[bot]]\nname = "g{i}"\nbuiltin = "greedy"\n' for i in range(3)),
        )
    )
    bot = config.bot("plain")
    assert bot.kind is BotKind.COMMAND
    assert bot.argv == (
        "{python}",
        "-m",
        "referee.cli",
        "stdio-bot",
        "--name",
        "{name}",
        "--",
        "./plain",
        "--seat",
        "{seat}",
    )


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        ('stdio = "./missing"', "bot 'x'.stdio", "not found"),
        ('stdio = "{nope}"', "bot 'x'.stdio", "unknown placeholder"),
        ('stdio = ""', "bot 'x'.stdio", "is empty"),
        ('stdio = "./x"\ncommand = "./x"', "bot 'x'", "exactly one of builtin, command, stdio"),
    ],
)
def test_stdio_bot_mistakes_name_the_key(tmp_path, entry, where, message):
    bots = f'[[bot]]\nname = "x"\n{entry}\n' + "".join(
        f'[[bot]]\nname = "g{i}"\nbuiltin = "greedy"\n' for i in range(3)
    )
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, bots))
    assert err.value.where == where and message in err.value.message


async def test_stdio_bots_play_a_tournament(tmp_path):
    build_samples()
    bots = (
        f'[[bot]]\nname = "c-bot"\nstdio = "{KIT / "c" / "bot"}"\n'
        f'[[bot]]\nname = "perl-bot"\nstdio = "perl {KIT / "perl" / "bot.pl"}"\n'
        '[[bot]]\nname = "greedy"\nbuiltin = "greedy"\n'
        '[[bot]]\nname = "random"\nbuiltin = "random"\n'
    )
    config = load_config(write(tmp_path, bots))
    summary = await Tournament(config).run()
    assert summary.done == summary.total == 2 and summary.failed == 0
    folder = tmp_path / "out"
    results = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    for result in results:
        assert result["status"] == "finished" and result["verified"] is True
        assert verify_log(folder / result["log"]).ok
        for seat in result["seats"]:
            assert not seat["crashed"], seat
            if seat["bot"] in ("c-bot", "perl-bot"):
                assert seat["exit_code"] == 0
                assert seat["timeouts"] == seat["rejected"] == seat["disconnects"] == 0
                name = f"seat{seat['seat']}-{seat['bot']}.txt"
                stderr = folder / "stderr" / result["match_id"] / name
                assert "exit 0 (match over)" in stderr.read_text()
