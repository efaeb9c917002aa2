"""What of an author's folder is private: what no jailed bot sees and no submission carries.

The folder is the one an author really has after playing: ``referee match`` run in it
(logs, the state folder with the signing key), a tournament's folder, the seats' token
files of ``organiser create --tokens-dir``, a log saved under another name."""

from __future__ import annotations

import shutil
from pathlib import Path

from referee_cli import run_referee

from referee.sandbox.private_files import (
    IGNORE_FILE,
    parse_ignore,
    private_files,
    private_reason,
    scan_folder,
)

FIXTURE_LOG = next((Path(__file__).parents[1] / "fixtures" / "logs" / "v2").glob("*.jsonl"))


def author_folder(tmp_path: Path) -> Path:
    """A bot's folder after its author played a match in it, and kept other things."""
    folder = tmp_path / "firstbot"
    folder.mkdir()
    (folder / "bot.py").write_text("print('hello')\n")
    (folder / "data").mkdir()
    (folder / "data" / "book.json").write_text('{"openings": []}\n')
    done = run_referee("match", "--hands", "1", "--seed", "s", "--log-dir", "runs/1", cwd=folder)
    assert done.returncode == 0, done.stderr
    tokens = folder / "seats"
    tokens.mkdir()
    (tokens / "seat-0.token").write_text("secret\n")
    shutil.copy(FIXTURE_LOG, folder / "game.json")  # a log, renamed
    (folder / "saved").mkdir()
    shutil.copy(FIXTURE_LOG, folder / "saved" / "best-game.txt.log")
    (folder / ".git" / "objects").mkdir(parents=True)  # its history may hold a log
    (folder / ".venv" / "lib").mkdir(parents=True)
    (folder / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (folder / "tls").mkdir()
    (folder / "tls" / "client.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    return folder


def test_an_authors_folder_shows_the_bot_and_its_data_and_hides_the_rest(tmp_path: Path) -> None:
    folder = author_folder(tmp_path)
    scan = scan_folder(folder)
    assert scan.complete
    hidden = {h.path.relative_to(folder).as_posix(): h.why for h in scan.hidden}
    assert hidden == {
        ".git": "a version control folder",
        ".referee": "a state folder",
        "game.json": "a match log",
        "saved": "a log folder (it holds best-game.txt.log)",
        "runs/1": hidden["runs/1"],
        "seats": "a tokens folder (it holds seat-0.token)",
        "tls": "a state folder (it holds client.pem)",
    }
    assert hidden["runs/1"].startswith("a log folder (it holds ")
    shown = [p.relative_to(folder).as_posix() for p in scan.files()]
    assert shown == [".venv/pyvenv.cfg", "bot.py", "data/book.json"]  # a venv: not searched


def test_a_folder_that_is_itself_a_log_folder_is_hidden_entry_by_entry(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.py").write_text("")
    shutil.copy(FIXTURE_LOG, folder / "m.jsonl")
    (folder / "m.seat0.stderr").write_text("my cards: 3D 4C\n")
    (folder / "m.seat0.stderr.times").write_text("")
    scan = scan_folder(folder)
    assert [p.name for p in scan.files()] == ["bot.py"]
    assert private_reason(folder) is not None  # as a subfolder it would go whole


def test_a_tournament_folder_is_private(tmp_path: Path) -> None:
    run = tmp_path / "t" / "my-tournament"
    run.mkdir(parents=True)
    (run / "standings.json").write_text("{}")
    assert private_reason(run) == "a tournament folder (it holds standings.json)"
    assert [h.path for h in scan_folder(tmp_path / "t").hidden] == [run]


def test_single_files_by_name_and_content(tmp_path: Path) -> None:
    log = tmp_path / "copy.log"
    shutil.copy(FIXTURE_LOG, log)
    plain = tmp_path / "notes.jsonl"
    plain.write_text('{"match_id": "mine", "moves": []}\n')
    key = tmp_path / "id.key"
    key.write_text("")
    found = {h.path.name: h.why for h in private_files([log, plain, key])}
    assert found == {"copy.log": "a match log", "id.key": "a private key"}


def test_the_ignore_file_as_in_gitignore(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    for name in (
        "bot.py",
        "notes/plan.txt",
        "notes/keep.txt",
        "build/out.o",
        "src/build",
        "src/a.txt",
        "src/deep/a.txt",
        "a.txt",
        "weights/big.bin",
    ):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (folder / IGNORE_FILE).write_text(
        "# my notes stay home\nnotes/\n!notes/keep.txt\nbuild/\n/a.txt\n**/deep/\n"
    )
    (folder / "weights" / IGNORE_FILE).write_text("*.bin\n")
    shown = [p.relative_to(folder).as_posix() for p in scan_folder(folder).files()]
    # A folder left out is left out whole (as git does: a pattern cannot take back
    # a file inside it); "build/" matches folders only, so the file src/build stays.
    assert shown == [".pusoyignore", "bot.py", "src/a.txt", "src/build", "weights/.pusoyignore"]


def test_patterns() -> None:
    (rule,) = parse_ignore("*.log")
    assert rule.pattern.fullmatch("a/b/c.log") and not rule.pattern.fullmatch("a/b.log/c")
    (rule,) = parse_ignore("/top/*.txt")
    assert rule.pattern.fullmatch("top/x.txt") and not rule.pattern.fullmatch("a/top/x.txt")
    (rule,) = parse_ignore("a/**/z")
    assert rule.pattern.fullmatch("a/z") and rule.pattern.fullmatch("a/b/c/z")
    assert parse_ignore("\n# only a comment\n/\n") == []


def test_a_folder_too_big_to_check_is_not_complete(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}").write_text("")
    scan = scan_folder(tmp_path, limit=20)
    assert not scan.complete and scan.files() == []
    assert scan_folder(tmp_path, limit=40).complete
