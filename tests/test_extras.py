"""Every command of an optional extra, run without that extra: one line naming the extra
and how to install it, exit status 2, no traceback (issue 31, item 1).

The commands are the ones the ``--help`` of each ladder command shows as its example (so
a new ladder command is covered when it is added), ``referee dataset``'s examples, and a
tournament and a ladder that ask for Ray or PostgreSQL. They run in this checkout's
environment with the extra's packages left out (tests/support/pythons.py): what a user
has who installed ``pusoy-referee`` alone.
"""

from __future__ import annotations

import argparse
import shlex
import shutil

from pythons import ROOT, run_commands_without

from referee.cli import build_parser
from referee.extras import EXTRAS, install_hint


def examples_of(command: str) -> list[list[str]]:
    """The example command lines of ``referee COMMAND``'s subcommands' ``--help`` (or of
    the command's own), as arguments, without ``VAR=value`` words and comments."""
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    top = sub.choices[command]
    nested = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    parsers = list(nested[0].choices.values()) if nested else [top]
    found = []
    for p in parsers:
        for line in (p.epilog or "").splitlines():
            if f"referee {command} " not in line:
                continue
            words = shlex.split(line.split("#", 1)[0])
            while words and "=" in words[0]:
                words.pop(0)
            if words[:2] == ["referee", command]:
                found.append(words[1:])
    return found


def assert_one_line(result: dict, extra: str) -> None:
    shown = " ".join(result["argv"])
    assert result["raised"] == "", (shown, result)
    assert result["code"] == 2, (shown, result)
    lines = result["stderr"].splitlines()
    assert len(lines) == 1, (shown, result["stderr"])
    assert f"the {extra} extra" in lines[0] or f"pusoy-referee[{extra}]" in lines[0], lines
    assert install_hint(extra) in lines[0], lines
    assert "Traceback" not in result["stderr"]


def test_every_ladder_command_without_the_ladder_extra_is_one_line(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / "mybot").mkdir()  # submit's example sends ./mybot/
    shutil.copy(ROOT / "examples" / "weak_bot.py", work / "mybot" / "bot.py")
    commands = examples_of("ladder")
    named = {c[1] for c in commands}
    assert named >= {"init", "team", "submit", "run", "serve", "status", "retire", "backup"}
    results = run_commands_without(
        EXTRAS["ladder"],
        [["ladder", *c[1:]] for c in commands],
        folder=tmp_path,
        cwd=work,
        env={"PUSOY_LADDER_KEY": "pdl_test"},
    )
    for result in results:
        assert_one_line(result, "ladder")
        assert result["stderr"].startswith(f"referee ladder {result['argv'][1]}: sqlalchemy")
    assert not (work / "examples" / "ladder-data").exists()  # nothing was made


def test_dataset_without_the_rl_extra_is_one_line(tmp_path):
    commands = [["dataset", *c[1:]] for c in examples_of("dataset")]
    assert commands
    for left_out in ("pyarrow", "gymnasium"):
        (tmp_path / left_out).mkdir()
        results = run_commands_without(
            [left_out], commands, folder=tmp_path / left_out, cwd=tmp_path
        )
        for result in results:
            assert_one_line(result, "rl")
            assert f": {left_out} is missing" in result["stderr"]


TOURNAMENT_ON_RAY = """\
[tournament]
name = "on-ray"
seed = "s"
[execution]
backend = "ray"
[[bot]]
name = "a"
builtin = "random"
[[bot]]
name = "b"
builtin = "greedy"
[[bot]]
name = "c"
builtin = "random"
[[bot]]
name = "d"
builtin = "greedy"
"""


def test_ray_and_postgres_without_their_extras_are_one_line(tmp_path):
    (tmp_path / "t.toml").write_text(TOURNAMENT_ON_RAY)
    ladder = (ROOT / "examples" / "ladder.toml").read_text()
    (tmp_path / "weak_bot.py").write_text("")
    for name in ("greedy_bot.py", "random_bot.py", "weak_bot.py"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    on_ray = ladder.replace("[workers]\n", '[workers]\nbackend = "ray"\n')
    (tmp_path / "ray.toml").write_text(on_ray.replace('folder = "ladder-data"', 'folder = "r"'))
    (tmp_path / "r").mkdir()
    url = 'database = "postgresql+psycopg://ladder@/ladder?host=/nowhere"'
    (tmp_path / "pg.toml").write_text(
        ladder.replace('folder = "ladder-data"', f"{url}\nfolder = 'p'")
    )
    (tmp_path / "ray").mkdir()
    results = run_commands_without(
        ["ray"],
        [
            ["tournament", "t.toml", "--dry-run"],
            ["tournament", "t.toml"],
            ["ladder", "run", "ray.toml"],
        ],
        folder=tmp_path / "ray",
        cwd=tmp_path,
    )
    for result in results:
        assert_one_line(result, "ray")
    (tmp_path / "pg").mkdir()
    (result,) = run_commands_without(
        ["psycopg", "psycopg_binary"],
        [["ladder", "init", "pg.toml"]],
        folder=tmp_path / "pg",
        cwd=tmp_path,
    )
    assert_one_line(result, "postgres")
