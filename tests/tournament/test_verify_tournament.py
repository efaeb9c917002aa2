"""``referee verify --tournament``: a real tournament's folder passes; tampered copies fail,
each for the reason a reader would look for."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from referee.cli import main
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config
from referee.tournament.verify import verify_tournament

from .conftest import bot_entry, read_results, write_config


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    """Four built-in bots, two deal groups of four rotations: eight short matches."""
    tmp = tmp_path_factory.mktemp("verify")
    bots = [bot_entry(n, builtin=b) for n, b in zip("abcd", ["greedy", "random"] * 2, strict=True)]
    path = write_config(
        tmp, bots, tournament={"format": "fixed", "rounds": 2, "concurrency": 2}, rules={"hands": 1}
    )
    summary = asyncio.run(Tournament(load_config(path)).run())
    assert summary.done == 8
    return tmp / "out"


@pytest.fixture
def copy(played, tmp_path) -> Path:
    return Path(shutil.copytree(played, tmp_path / "copy"))


def problems(folder: Path) -> str:
    report = verify_tournament(folder)
    assert not report.ok
    return "\n".join(report.problems + [r.summary() for r in report.logs if not r.ok])


def by_group(folder: Path) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in sorted(read_results(folder), key=lambda r: r["index"]):
        out.setdefault(r["group"], []).append(r)
    return out


def test_a_played_tournament_verifies(played, capsys):
    report = verify_tournament(played)
    assert report.ok, report.problems
    assert (len(report.logs), report.matches, report.groups) == (8, 8, 2)
    assert main(["verify", "--tournament", str(played)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: ") and "2 deal groups dealt the same cards" in out


def test_a_log_swapped_with_another_groups_log_is_caught(copy, capsys):
    groups = by_group(copy)
    a, b = copy / groups[0][1]["log"], copy / groups[1][1]["log"]
    text_a, text_b = a.read_text(), b.read_text()
    a.write_text(text_b)
    b.write_text(text_a)
    found = problems(copy)
    assert "its log reveals seed" in found and "its log is of match" in found
    assert main(["verify", "--tournament", str(copy)]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_a_different_master_seed_is_caught(copy):
    state = json.loads((copy / "tournament.json").read_text())
    state["master_seed"] = "another"
    (copy / "tournament.json").write_text(json.dumps(state))
    assert problems(copy).count("the schedule's is") == 8
    assert "results line is not its schedule entry" in problems(copy)


def test_a_changed_identity_is_caught(copy):
    state = json.loads((copy / "tournament.json").read_text())
    state["identity"]["seatings"] = "none"
    (copy / "tournament.json").write_text(json.dumps(state))
    assert "does not hash to config_hash" in problems(copy)


def test_results_that_disagree_with_the_log_are_caught(copy):
    lines = (copy / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["seats"][0]["place"] = (
        5 - first["seats"][0]["place"] if first["seats"][0]["place"] != 0 else 1
    )
    first["seats"][0]["total"] += 1
    lines[0] = json.dumps(first)
    (copy / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert "seat 0 in results.jsonl disagrees with its log" in problems(copy)


def test_a_stray_log_and_a_changed_deal_are_caught(copy):
    groups = by_group(copy)
    shutil.copy(copy / groups[0][0]["log"], copy / "logs" / "stray.jsonl")
    assert "stray.jsonl: a log with no line in results.jsonl" in problems(copy)
    (copy / "logs" / "stray.jsonl").unlink()
    # One card of one hand, swapped between two seats: the log no longer verifies, and
    # its group no longer shares its deals.
    path = copy / groups[0][2]["log"]
    out = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if "trailer" in entry:  # the signature: left as it is (it no longer matches)
            out.append(line)
            continue
        dealt = entry["event"].get("hand_dealt")
        if dealt and dealt.get("hand_number", 0) == 1:
            hands = dealt["hands"]
            hands[0]["cards"][0], hands[1]["cards"][0] = hands[1]["cards"][0], hands[0]["cards"][0]
            line = json.dumps(entry, separators=(",", ":"))
        out.append(line)
    path.write_text("\n".join(out) + "\n")
    found = problems(copy)
    assert "hand 1 was not dealt the cards of" in found
    assert f"FAILED: {path}" in found


def test_not_a_tournament_folder(tmp_path, capsys):
    assert main(["verify", "--tournament", str(tmp_path)]) == 2
    assert "no tournament.json" in capsys.readouterr().err
    assert main(["verify"]) == 2


def test_a_remote_bot_dealt_a_deal_twice_is_caught_under_unseen_deals():
    from referee.tournament.schedule import MatchSpec
    from referee.tournament.verify import TournamentReport, _check_groups, _Played

    def match(i: int, group: int, seed: str, bots: tuple[str, str, str, str]):
        spec = MatchSpec(i, f"m{i}", group, 0, 0, i, bots, seed)
        return spec, _Played(bots, seed, f"r{i}", {1: ((), (), (), ())})

    played = [
        match(0, 0, "s0", ("far", "a", "b", "c")),
        match(1, 0, "s1", ("a", "b", "c", "far")),
        match(2, 1, "s1", ("a", "b", "c", "d")),
    ]
    report = TournamentReport(Path("."))
    _check_groups(played, {"far"}, report)
    assert report.problems == []
    played.append(match(3, 0, "s0", ("b", "c", "far", "a")))
    _check_groups(played, {"far"}, report)
    assert report.problems == [
        'remote bot far was dealt 1 deal(s) more than once (remote_deals = "unseen")'
    ]
