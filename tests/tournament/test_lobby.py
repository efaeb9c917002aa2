"""Remote bots: they connect once to the lobby and are seated as the schedule needs."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys

import pytest

from pusoy_client import LobbyRefused, run_lobby
from pusoy_client.samples import GreedyBot
from referee.log import read_log
from referee.log.verify import verify_log
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config

from .conftest import EXAMPLES, ROOT, bot_entry, read_results, write_config

KEY = "far-away-secret-key"


def lobby_config(tmp_path, *, rounds=1, max_matches=0, lobby_wait_s=30.0, **time):
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("random2", builtin="random"),
        bot_entry("far", key=KEY, **({"max_matches": max_matches} if max_matches else {})),
    ]
    return load_config(
        write_config(
            tmp_path,
            bots,
            tournament={"rounds": rounds, "concurrency": 2},
            rules={"hands": 1},
            time={"turn_time_ms": 500, **time},
            referee={"lobby_wait_s": lobby_wait_s},
        )
    )


def span(path):
    lines = read_log(path).lines
    first, last = lines[0].entry.time.ToDatetime(), lines[-1].entry.time.ToDatetime()
    return first, last


async def test_a_remote_bot_plays_through_the_lobby_one_match_at_a_time(tmp_path):
    config = lobby_config(tmp_path, max_matches=1)
    tournament = Tournament(config)
    run = asyncio.create_task(tournament.run())
    await asyncio.wait_for(tournament.ready.wait(), 10)
    # The bot asks for 3 at once; the organiser's limit of 1 wins.
    remote = asyncio.create_task(run_lobby(GreedyBot, tournament.address, KEY, max_matches=3))
    summary = await asyncio.wait_for(run, 120)
    lobby = await asyncio.wait_for(remote, 30)
    assert (summary.done, summary.failed) == (4, 0)
    assert lobby.name == "far" and lobby.closed_reason == "the tournament is over"
    assert len(lobby.outcomes) == 4 and not lobby.failures
    results = read_results(config.output)
    spans = []
    for r in results:
        far = next(s for s in r["seats"] if s["bot"] == "far")
        assert far["connected"] and far["absent_turns"] == 0 and far["timeouts"] == 0
        assert verify_log(config.output / r["log"]).ok
        spans.append(span(config.output / r["log"]))
    spans.sort()
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start  # never two of its matches at once
    assert {o.match_id for o in lobby.outcomes} == {r["referee_match_id"] for r in results}


async def test_a_remote_bot_that_never_comes_only_loses_its_own_matches(tmp_path):
    # The connect limit leaves the in-process bots time to connect on a loaded machine:
    # a match that no bot joins within it is cancelled.
    config = lobby_config(tmp_path, lobby_wait_s=0.2, connect_timeout_ms=1500)
    summary = await asyncio.wait_for(Tournament(config).run(), 120)
    assert (summary.done, summary.failed) == (4, 0)
    rows = {r.name: r for r in summary.standings}
    assert rows["far"].rank == 4 and rows["far"].absent_turns > 0
    for r in read_results(config.output):
        for s in r["seats"]:
            assert s["connected"] == (s["bot"] != "far")


async def test_a_wrong_key_is_refused(tmp_path):
    config = lobby_config(tmp_path, lobby_wait_s=0.2, connect_timeout_ms=300)
    tournament = Tournament(config)
    run = asyncio.create_task(tournament.run())
    await asyncio.wait_for(tournament.ready.wait(), 10)
    with pytest.raises(LobbyRefused, match="BAD_KEY"):
        await run_lobby(GreedyBot, tournament.address, "not-the-key")
    await asyncio.wait_for(run, 120)


def test_the_example_remote_bot_through_the_command_line(tmp_path):
    config = lobby_config(tmp_path)
    runner = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "tournament", str(config.source)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        address = ""
        assert runner.stderr is not None
        for line in runner.stderr:
            if "referee listening on " in line:
                address = line.split("referee listening on ")[1].split(";")[0]
                break
        assert address, "the runner did not say where it listens"
        bot = subprocess.run(
            [
                sys.executable,
                str(EXAMPLES / "remote_bot.py"),
                "--address",
                address,
                "--key",
                KEY,
                "--max-matches",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        _, err = runner.communicate(timeout=120)
    finally:
        runner.kill()
    assert bot.returncode == 0, bot.stderr
    assert "far: lobby closed (the tournament is over); 4 matches played, 0 failed" in bot.stdout
    assert runner.returncode == 0, err
    results = read_results(config.output)
    assert len(results) == 4 and all(r["status"] == "finished" for r in results)
    standings = json.loads((config.output / "standings.json").read_text())
    far = next(b for b in standings["bots"] if b["name"] == "far")
    assert far["matches"] == 4 and far["absent_turns"] == 0
