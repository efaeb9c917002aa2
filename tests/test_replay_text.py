"""``referee replay``'s text reads as a person expects: one line per disconnect, scores by
seat name, "no legal play: pass", and a folder answered with what to run on it.

A real match with a bot that crashes mid-hand (a spawned process on the Python kit), and
a real small tournament, each run as a user runs the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee_cli import run_referee

CRASHER = """\
import os
import sys

from pusoy_client import PASS, Bot, main


class Crasher(Bot):
    name = "crasher"
    turns = 0

    def choose(self, prompt):
        Crasher.turns += 1
        if Crasher.turns > 3:
            os._exit(1)  # dies mid-match: its stream closes, then the table sees the exit
        return list(prompt.legal_plays[0].cards) if prompt.legal_plays else PASS


sys.exit(main(Crasher()))
"""


def crashed_match(tmp_path: Path) -> Path:
    (tmp_path / "crasher.py").write_text(CRASHER)
    done = run_referee(
        "match", "--hands", "2", "--seed", "replay-text", "--log-dir", "m",
        "--bot", "{python} crasher.py", "--name", "crash",
        "--bot", "greedy", "--bot", "random", "--bot", "greedy",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr  # a bot crashed
    (log,) = (tmp_path / "m").glob("*.jsonl")
    return log


def events(log: Path) -> list[dict]:
    return [
        json.loads(raw)["event"]
        for raw in log.read_text().splitlines()
        if not raw.startswith('{"trailer":')
    ]


def test_a_crash_is_one_line_and_scores_are_labelled_by_seat(tmp_path):
    log = crashed_match(tmp_path)
    logged = events(log)
    gone = [e["seat_disconnected"] for e in logged if "seat_disconnected" in e]
    assert len(gone) == 2 and gone[1]["gone"]  # the log has both: the stream, then the exit
    hands = [e["hand_ended"] for e in logged if "hand_ended" in e]
    names = ["0:crash", "1:greedy-1", "2:random", "3:greedy-2"]

    full = run_referee("replay", str(log), cwd=tmp_path)
    seat = run_referee("replay", str(log), "--seat", "0", cwd=tmp_path)
    for done in (full, seat):
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        disconnects = [x for x in lines if "disconnected" in x and x.strip().startswith("[")]
        assert disconnects == ["  [0:crash disconnected: its bot exited with status 1]"]
        # Told where the stream dropped: before the referee's first move for the seat.
        first_default = next(i for i, x in enumerate(lines) if "[default:" in x)
        assert lines.index(disconnects[0]) < first_default

        scores = [x.strip() for x in lines if x.strip().startswith(("scores:", "totals:"))]
        expected = []
        for hand in hands:
            for label in ("scores", "totals"):
                values = hand.get(label, [])
                values += [0] * (4 - len(values))  # the JSON mapping leaves zeros out
                pairs = ", ".join(f"{n} {v}" for n, v in zip(names, values, strict=True))
                expected.append(f"{label}: {pairs}")
        assert scores == expected

    text = seat.stdout
    assert "no legal play: pass" in text
    assert not re.search(r"\b0 legal plays\b", text)
    assert re.search(r"\d+ legal plays?, or pass: \S", text)  # a choice still lists them


def test_replay_of_a_folder_says_what_to_run_on_it(tmp_path):
    matches = crashed_match(tmp_path).parent
    done = run_referee("replay", "m", cwd=tmp_path)
    assert done.returncode == 2 and "Errno" not in done.stderr
    assert "m is a folder; replay reads one match's log" in done.stderr
    assert f"replay m/{next(matches.glob('*.jsonl')).name}" in done.stderr
    assert "view m " in done.stderr and "verify m/*.jsonl" in done.stderr

    config = tmp_path / "t.toml"
    config.write_text(
        '[tournament]\nseed = "s"\nformat = "fixed"\nseatings = "none"\noutput = "night1"\n'
        + "[rules]\nhands = 1\n"
        + "".join(f'[[bot]]\nname = "b{i}"\nbuiltin = "greedy"\n' for i in range(4))
    )
    played = run_referee("tournament", str(config), cwd=tmp_path)
    assert played.returncode == 0, played.stdout + played.stderr
    for args in (["night1"], ["night1", "--seat", "2"]):
        done = run_referee("replay", *args, cwd=tmp_path)
        assert done.returncode == 2 and "Errno" not in done.stderr
        assert "replay night1/logs/" in done.stderr
        assert "view night1 " in done.stderr and "verify --tournament night1 " in done.stderr
    # What it names works.
    assert run_referee("verify", "--tournament", "night1", cwd=tmp_path).returncode == 0
