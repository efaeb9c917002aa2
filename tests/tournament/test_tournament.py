"""Whole tournaments over real gRPC with real bot processes."""

from __future__ import annotations

import csv
import io
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

from referee.log import read_log
from referee.log.verify import verify_log
from referee.protocol import common
from referee.tournament.director import Tournament
from referee.tournament.progress import Progress
from referee.tournament.toml_reader import load_config

from .conftest import (
    bot_entry,
    example_bot,
    processes_with,
    read_results,
    spawned_bot,
    write_config,
)


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def dropped_streams(events: list[common.Event], seat: int) -> int:
    """A seat's disconnects: streams that ended while it was connected (not the news that
    the bot of a seat that was not connected is gone)."""
    connected, dropped = False, 0
    for e in events:
        if e.HasField("seat_connected") and e.seat_connected.seat == seat:
            connected = True
        elif e.HasField("seat_disconnected") and e.seat_disconnected.seat == seat:
            dropped += connected
            connected = False
        elif e.HasField("referee_restarted"):
            connected = False
    return dropped


def check_results_match_logs(folder: Path) -> list[dict]:
    """Every results line agrees with its log, read with the strict protobuf reader."""
    results = read_results(folder)
    for r in results:
        assert r["status"] == "finished", r
        read = read_log(folder / r["log"])
        assert read.complete
        events = [ln.entry.event for ln in read.lines]
        ended = events[-1].match_ended
        assert ended.status == common.MATCH_STATUS_FINISHED
        assert ended.seed == r["seed"]
        assert read.lines[0].entry.match_id == r["referee_match_id"]
        hands = [e.hand_ended for e in events if e.WhichOneof("kind") == "hand_ended"]
        assert r["hands"] == len(hands)
        names = list(events[0].match_created.config.seat_names)
        places = {s: st.place for st in ended.standings for s in st.seats}
        for seat in r["seats"]:
            s = seat["seat"]
            assert names[s] == seat["bot"]
            assert seat["place"] == places[s]
            assert seat["total"] == ended.totals[s]
            assert seat["scores"] == [h.scores[s] for h in hands]
            causes = Counter(
                e.played.default_cause if e.HasField("played") else e.passed.default_cause
                for e in events
                if (e.HasField("played") and e.played.seat == s)
                or (e.HasField("passed") and e.passed.seat == s)
            )
            assert seat["timeouts"] == causes[common.DEFAULT_CAUSE_TIMEOUT]
            assert seat["illegal_defaults"] == causes[common.DEFAULT_CAUSE_ILLEGAL_ATTEMPTS]
            assert seat["absent_turns"] == causes[common.DEFAULT_CAUSE_DISCONNECTED]
            rejected = [
                e.action_rejected
                for e in events
                if e.HasField("action_rejected") and e.action_rejected.seat == s
            ]
            assert seat["rejected"] == sum(not rj.late for rj in rejected)
            assert seat["late"] == sum(rj.late for rj in rejected)
            assert seat["disconnects"] == dropped_streams(events, s)
    rows = read_csv(folder / "results.csv")
    assert len(rows) == 4 * len(results)
    by_key = {(row["match_id"], int(row["seat"])): row for row in rows}
    for r in results:
        for seat in r["seats"]:
            row = by_key[(r["match_id"], seat["seat"])]
            assert row["bot"] == seat["bot"]
            assert int(row["place"]) == seat["place"] and int(row["total"]) == seat["total"]
            assert int(row["timeouts"]) == seat["timeouts"]
    return results


async def test_five_example_bots_with_duplicate_deals(tmp_path):
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("random-proc", **example_bot("random_bot.py")),
        bot_entry("weak", **example_bot("weak_bot.py")),
        bot_entry(
            "sleepy",
            **example_bot("sleepy_bot.py", PUSOY_SLEEPY_P="0.2", PUSOY_SLEEPY_EXTRA_MS="50"),
        ),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"rounds": 1, "seatings": "rotations", "concurrency": 2},
        rules={"hands": 2},
        time={"turn_time_ms": 300},
    )
    config = load_config(path)
    tournament = Tournament(config)
    summary = await tournament.run()
    folder = config.output
    assert (summary.total, summary.done, summary.failed) == (20, 20, 0)

    logs = sorted((folder / "logs").glob("*.jsonl"))
    assert len(logs) == 20
    for path in logs:
        report = verify_log(path)
        assert report.ok, report.summary()

    results = check_results_match_logs(folder)
    assert sorted(r["match_id"] for r in results) == [s.match_id for s in tournament.schedule]
    assert all(r["verified"] is True for r in results)

    # Duplicate deals: each group is one seed, its four bots in every seat once.
    groups = defaultdict(list)
    for r in results:
        groups[r["group"]].append(r)
    assert len(groups) == 5
    for members in groups.values():
        assert len(members) == 4 and len({m["seed"] for m in members}) == 1
        for seat in range(4):
            assert len({m["seats"][seat]["bot"] for m in members}) == 4

    standings = json.loads((folder / "standings.json").read_text())
    rows = {b["name"]: b for b in standings["bots"]}
    assert standings["final"] is True
    assert [b["name"] for b in standings["bots"]][-1] == "weak"
    assert rows["weak"]["wins"] == 0
    assert rows["sleepy"]["timeouts"] > 0
    assert rows["sleepy"]["timeouts"] > max(rows[n]["timeouts"] for n in rows if n != "sleepy")
    for name, row in rows.items():
        mine = [s for r in results for s in r["seats"] if s["bot"] == name]
        assert row["matches"] == len(mine) == 16
        assert row["wins"] == sum(s["place"] == 1 for s in mine)
        assert row["timeouts"] == sum(s["timeouts"] for s in mine)
        assert row["crashes"] == 0
        assert row["ci95_low"] <= row["score_per_hand"] <= row["ci95_high"]
    names = [row["name"] for row in read_csv(folder / "standings.csv")]
    assert names == [b["name"] for b in standings["bots"]]

    # Spawned bots kept their output per match and seat, and all of them are gone.
    outputs = list((folder / "stderr").glob("*/seat*-weak.txt"))
    assert len(outputs) == 16
    assert all(s["exit_code"] == 0 for r in results for s in r["seats"] if s["bot"] == "weak")
    assert json.loads((folder / "work" / "processes.json").read_text()) == []
    assert not processes_with(str(folder))


async def test_faulty_bots_only_hurt_themselves(tmp_path):
    marker = f"hang-{tmp_path.name}"
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("crashy", **spawned_bot("crashy_bot.py")),
        bot_entry("cheat", **spawned_bot("cheat_bot.py")),
        bot_entry(
            "hang",
            command=["{python}", str(Path(__file__).parent / "bots" / "hang_bot.py"), marker],
        ),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none", "rounds": 2},
        rules={"hands": 1},
        # The hanging bot holds each match for the whole connect time; the others are
        # Python processes that must start and connect within it on a loaded CI machine
        # (at 1.5 s the crashing bot once missed its match and never got to crash).
        time={"turn_time_ms": 300, "connect_timeout_ms": 5000},
    )
    summary = await Tournament(load_config(path)).run()
    assert (summary.done, summary.failed) == (2, 0)
    folder = tmp_path / "out"
    results = check_results_match_logs(folder)
    seats = defaultdict(list)
    for r in results:
        for s in r["seats"]:
            seats[s["bot"]].append(s)
    assert all(
        s["crashed"] and s["exit_code"] == 1 and s["disconnects"] == 1 for s in seats["crashy"]
    )
    assert all(s["crash"] == "exited with status 1" for s in seats["crashy"])
    assert all((folder / s["stderr"]).is_file() for b in ("crashy", "cheat") for s in seats[b])
    assert all(s["rejected"] > 0 and not s["crashed"] for s in seats["cheat"])
    assert all(not s["connected"] and s["absent_turns"] > 0 for s in seats["hang"])
    assert all(s["exit_code"] == -9 for s in seats["hang"])  # killed with its group
    for s in seats["greedy"]:
        assert (s["timeouts"], s["rejected"], s["disconnects"], s["crashed"]) == (0, 0, 0, False)
    rows = {b.name: b for b in summary.standings}
    assert rows["crashy"].crashes == 2 and rows["greedy"].crashes == 0
    assert not processes_with(marker)  # the hanging bot's child went with it
    for r in results:
        assert verify_log(folder / r["log"]).ok


async def test_a_match_over_its_time_limit_is_cancelled_and_not_rated(tmp_path):
    bots = [bot_entry(n, builtin=b) for n, b in zip("abcd", ["greedy", "random"] * 2, strict=True)]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none"},
        rules={"hands": 1000},
        time={"match_timeout_s": 1},
    )
    summary = await Tournament(load_config(path)).run()
    assert (summary.done, summary.failed) == (1, 1)
    (result,) = read_results(tmp_path / "out")
    assert result["status"] == "cancelled" and "limit" in result["error"]
    assert 0 < result["hands"] < 1000
    assert verify_log(tmp_path / "out" / result["log"]).ok
    assert all(r.matches == 0 and r.failed == 1 and r.mu == 25 for r in summary.standings)


async def test_a_bot_that_dies_before_connecting_is_reported_and_not_waited_for(tmp_path):
    dead = "import sys; print('Error: Cannot find module mybot', file=sys.stderr); sys.exit(1)"
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("greedy2", builtin="greedy"),
        bot_entry("dead", command=["{python}", "-c", dead]),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none"},
        rules={"hands": 1},
        time={"connect_timeout_ms": 60_000},
    )
    out = io.StringIO()
    t0 = time.monotonic()
    summary = await Tournament(load_config(path), progress=Progress(out, tty=False)).run()
    assert time.monotonic() - t0 < 40, "the match waited for the 60 s connect limit"
    assert (summary.done, summary.failed) == (1, 0)
    folder = tmp_path / "out"
    (result,) = check_results_match_logs(folder)
    seat = next(s for s in result["seats"] if s["bot"] == "dead")
    assert (seat["crashed"], seat["exit_code"], seat["connected"]) == (True, 1, False)
    assert seat["crash"] == "exited with status 1" and seat["disconnects"] == 0
    assert seat["absent_turns"] > 0
    assert "Cannot find module mybot" in (folder / seat["stderr"]).read_text()
    assert (
        f"seat {seat['seat']} (dead) exited with status 1 before the match ended; "
        f"its output: {seat['stderr']}"
    ) in out.getvalue()
    assert verify_log(folder / result["log"]).ok
