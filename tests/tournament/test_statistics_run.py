"""The statistics hooks of a real run: the sequential test stops a gauntlet at the end
of a deal group and resumes consistently, head to head agrees with results.jsonl, and
the progress line is redrawn while a match is being played."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import math
from collections import defaultdict

from referee.tournament.director import Tournament
from referee.tournament.progress import Progress
from referee.tournament.sprt import H1, for_schedule
from referee.tournament.stats import paired
from referee.tournament.toml_reader import load_config

from .conftest import bot_entry, example_bot, read_results, write_config


def gauntlet(tmp_path, **sprt: object):
    bots = [
        bot_entry("hero", builtin="greedy"),
        bot_entry("weak", **example_bot("weak_bot.py")),
        bot_entry("g2", builtin="greedy"),
        bot_entry("r", builtin="random"),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "gauntlet", "hero": "hero", "rounds": 12, "concurrency": 3},
        rules={"hands": 1},
        time={"turn_time_ms": 2000},
    )
    settings = {"baseline": "weak", "delta1": 1.0, "min_groups": 3, **sprt}
    path.write_text(
        path.read_text()
        + "\n[sprt]\n"
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
    )
    return path


async def test_the_sequential_test_stops_at_a_group_end_and_resumes_consistently(tmp_path):
    path = gauntlet(tmp_path)
    out = tmp_path / "out"
    # A first run, stopped (as by Ctrl-C) after two matches.
    first = asyncio.create_task(Tournament(load_config(path)).run())
    while not (out / "results.jsonl").exists() or len(read_results(out)) < 2:
        assert not first.done(), first
        await asyncio.sleep(0.05)
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first
    before = len(read_results(out))
    assert before < 12

    again = Tournament(load_config(path))
    summary = await again.run()
    assert summary.complete and summary.test is not None
    test = summary.test
    # The weak bot loses by tens of points per hand: H1 at the first chance, once the
    # minimum of three deal groups is in.
    assert test.decision == H1 and test.n == 3
    assert [s.group for s in test.steps] == [0, 1, 2]
    results = read_results(out)
    per_group = defaultdict(int)
    for r in results:
        per_group[r["group"]] += 1
    assert all(per_group[g] == 4 for g in (0, 1, 2))  # stopped at the end of group 2
    assert len(results) < 48 and summary.done == len(results)
    assert summary.played_now == len(results) - before

    # standings.json tells the same, and so does the test recomputed from the results.
    doc = json.loads((out / "standings.json").read_text())
    assert doc["final"] is True and doc["sprt"]["decision"] == "H1"
    cfg = load_config(path)
    replayed = for_schedule(cfg, again.schedule, again.results.values())
    assert replayed is not None and replayed.to_json() == doc["sprt"] == test.to_json()
    assert doc["sprt"]["llr"] >= doc["sprt"]["upper"]

    # Run again: decided, so nothing is played and nothing changes.
    lines = (out / "results.jsonl").read_text()
    third = await Tournament(load_config(path)).run()
    assert third.played_now == 0 and third.complete
    assert (out / "results.jsonl").read_text() == lines


async def test_head_to_head_in_standings_agrees_with_the_results(tmp_path):
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("g2", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("r2", builtin="random"),
        bot_entry("weak", **example_bot("weak_bot.py")),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"rounds": 1, "concurrency": 3},
        rules={"hands": 1},
        time={"turn_time_ms": 2000},
    )
    summary = await Tournament(load_config(path)).run()
    assert summary.done == 20
    out = tmp_path / "out"
    doc = json.loads((out / "standings.json").read_text())
    # Recompute one pair by hand from results.jsonl: per deal group, the difference of
    # the two bots' penalty points per hand, b minus a.
    points: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for r in read_results(out):
        for s in r["seats"]:
            points[r["group"]][s["bot"]] += s["scores"]
    pairs = {(p["a"], p["b"]): p for p in doc["pairwise"]}
    assert len(pairs) == 10
    order = [b["name"] for b in doc["bots"]]
    for (a, b), p in pairs.items():
        assert order.index(a) < order.index(b)
        diffs = [(sum(g[b]) - sum(g[a])) / len(g[a]) for g in points.values() if a in g and b in g]
        assert p["groups"] == len(diffs) == 3  # each pair shares 3 of the 5 tables
        expected = paired(diffs)
        assert math.isclose(p["mean"], expected.mean, abs_tol=1e-4)
        assert math.isclose(p["ci95_high"], expected.ci95_high, abs_tol=1e-4)
        assert math.isclose(p["los"], expected.los, abs_tol=1e-4)
    weak_rows = [p for p in doc["pairwise"] if p["b"] == "weak"]
    assert all(p["mean"] > 5 and p["los"] > 0.95 for p in weak_rows)
    rows = list(csv.DictReader(io.StringIO((out / "pairwise.csv").read_text())))
    assert [(r["a"], r["b"]) for r in rows] == list(pairs)
    assert all("rating_low" in b and "overlaps_above" in b for b in doc["bots"])


async def test_the_progress_line_is_redrawn_while_a_match_runs(tmp_path):
    sleepy = example_bot("sleepy_bot.py", PUSOY_SLEEPY_P="1.0", PUSOY_SLEEPY_EXTRA_MS="0")
    bots = [bot_entry(n, **sleepy) for n in ("a", "b", "c", "d")]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none"},
        rules={"hands": 1},
        time={"turn_time_ms": 200},
    )
    screen = io.StringIO()
    summary = await Tournament(load_config(path), progress=Progress(screen, tty=True)).run()
    assert summary.done == 1
    frames = screen.getvalue().split("\r")
    # Every turn times out (200 ms each, 13 cards a seat): the match lasts seconds, and
    # the line is redrawn meanwhile, not only when it ends.
    assert sum(f.startswith("0/1 done | 1 running") for f in frames) >= 2, frames
    assert frames[-1].startswith("1/1 done | 0 running | 0 failed | ")
    assert "/min" in frames[-1]
