"""Sandboxed bots, for real: bubblewrap, cgroups, hostile bot processes, whole matches.

Each escape a bot might try is tried by a real bot in a real sandbox, and must fail or
get the bot killed with the cause in the results. The same bots run once without the
sandbox, to show that the attempts are real (they succeed there). On a machine that cannot
sandbox they are skipped with the reason ``probe()`` gives (what is missing).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from referee.log import read_log
from referee.log.verify import verify_log
from referee.sandbox import probe
from referee.sandbox.cgroups import GROUP_PREFIX
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config
from referee.tournament.verify import verify_tournament

from .conftest import (
    BOTS,
    bot_entry,
    example_bot,
    read_results,
    require_sandbox,
    spawned_bot,
    write_config,
)


@pytest.fixture(autouse=True)
def sandbox_works() -> None:
    require_sandbox()


def lines(path: Path, prefix: str) -> list[dict]:
    return [
        json.loads(line[len(prefix) + 1 :])
        for line in path.read_text(errors="replace").splitlines()
        if line.startswith(prefix + " ")
    ]


def outputs(folder: Path, bot: str) -> list[Path]:
    """The bot's output files, in match order."""
    return sorted((folder / "stderr").glob(f"*/seat*-{bot}.txt"), key=lambda p: p.parent.name)


def leftover_cgroups() -> list[Path]:
    support = probe()
    assert support.cgroups is not None
    mine = f"{GROUP_PREFIX}{os.getpid()}-"
    return [
        child
        for d in set(support.cgroups.dirs.values())
        for child in d.iterdir()
        if child.name.startswith(mine)
    ]


async def listener() -> tuple[asyncio.AbstractServer, int, list[bool]]:
    """A TCP port on 127.0.0.1 that is not the referee; records every connection."""
    hits: list[bool] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hits.append(True)
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], hits


def snoop_tournament(tmp_path: Path, port: int, *, sandbox: dict, memo_dir: str = "") -> Path:
    """snoop and memo at one table with two built-in bots: four matches on one deal."""
    out = tmp_path / "out"
    reads = [
        str(out / "tournament.json"),
        str(out / "results.jsonl"),
        str(tmp_path / "t.toml"),
        str(BOTS / "memo_bot.py"),
        "/proc/1/environ",
    ]
    writes = [str(tmp_path / "escape.txt"), "/tmp/inside.txt"]
    if sandbox.get("enabled", True):
        writes += [str(BOTS / "escape.txt"), "/etc/escape.txt"]
    snoop_env = {
        "PUSOY_SNOOP_READ": os.pathsep.join(reads),
        "PUSOY_SNOOP_WRITE": os.pathsep.join(writes),
        "PUSOY_SNOOP_PORTS": str(port),
    }
    memo_env = {"PUSOY_MEMO_DIR": memo_dir} if memo_dir else {}
    bots = [
        bot_entry("snoop", **spawned_bot("snoop_bot.py"), env=snoop_env),
        bot_entry("memo", **spawned_bot("memo_bot.py"), **({"env": memo_env} if memo_env else {})),
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
    ]
    text = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "rotations"},
        rules={"hands": 1},
        time={"turn_time_ms": 5000, "connect_timeout_ms": 20000},
    ).read_text()
    sandbox_lines = [f"{k} = {json.dumps(v)}" for k, v in sandbox.items()]
    path = tmp_path / "t.toml"
    path.write_text(text + "\n[sandbox]\n" + "\n".join(sandbox_lines) + "\n")
    return path


async def test_sandboxed_bots_cannot_get_out_or_remember(tmp_path):
    server, port, hits = await listener()
    path = snoop_tournament(
        tmp_path, port, sandbox={"enabled": True, "open_files": 64, "tmp_mb": 8}
    )
    tournament = Tournament(load_config(path))
    summary = await tournament.run()
    server.close()
    folder = tmp_path / "out"
    assert (summary.done, summary.failed) == (4, 0)
    assert tournament.isolation.active
    results = read_results(folder)

    for output in outputs(folder, "snoop"):
        got = {line["attempt"]: line["got"] for line in lines(output, "SNOOP")}
        assert set(got) >= {"read", "write", "connect", "tokens", "processes", "uid"}, output
        # The tournament's folder, the configuration (remote bots' keys) and another
        # bot's program: not there, or empty.
        for target, read in got["read"].items():
            assert read == 0 or "Error" in str(read), (target, read)
        assert got["write"]["/tmp/inside.txt"] == "written"  # its own /tmp
        for target, wrote in got["write"].items():
            if target != "/tmp/inside.txt":
                assert "Error" in wrote, (target, wrote)
        assert "Error" in got["connect"][f"127.0.0.1:{port}"]
        assert "Error" in got["connect"]["192.0.2.1:80"]
        assert got["tokens"] == []  # no other seat's token under /proc
        assert len(got["processes"]) < 10 and max(got["processes"]) < 50  # its own PID space
        assert got["uid"] == 65534
        assert got["keyring"] == "Error: Operation not permitted"  # seccomp
        assert got["organise"] == "Error: UNIMPLEMENTED"  # PlayService alone
        assert got["open_files"] < 64
        assert got["tmp_mb"] <= 8
    assert not hits
    assert not (tmp_path / "escape.txt").exists() and not (BOTS / "escape.txt").exists()

    memo = [lines(o, "MEMO") for o in outputs(folder, "memo")]
    assert len(memo) == 4
    for match in memo:
        assert match[0] == {"found": 0}, match  # nothing kept from an earlier match
        assert {"knows_seed": False} in match
        assert not any(m.get("recognised") for m in match), match

    for r in results:
        assert r["verified"] is True
        for s in r["seats"]:
            if s["bot"] in ("snoop", "memo"):
                assert s["exit_code"] == 0 and not s["crashed"] and s["breach"] == ""
                assert s["cpu_s"] > 0 and s["memory_mb"] > 0
                assert s["turns"] > 0 and s["wall_ms_per_turn"] is not None
                assert s["cpu_ms_per_turn"] is not None and s["cpu_ms_max_turn"] is not None
            else:
                assert s["cpu_s"] is None  # built-in bots run in the referee's process
    assert leftover_cgroups() == []
    report = verify_tournament(folder)
    assert report.ok, (report.problems, [r.summary() for r in report.logs])
    assert report.groups == 1 and report.matches == 4


async def test_without_the_sandbox_the_same_attempts_succeed(tmp_path):
    """The control: the attempts above are real ones."""
    server, port, hits = await listener()
    memo_dir = tmp_path / "memo"
    memo_dir.mkdir()
    path = snoop_tournament(tmp_path, port, sandbox={"enabled": False}, memo_dir=str(memo_dir))
    tournament = Tournament(load_config(path))
    summary = await tournament.run()
    server.close()
    folder = tmp_path / "out"
    assert summary.done == 4 and not tournament.isolation.active
    assert any("sandbox is off" in w for w in tournament.warnings)
    snooped = [
        {line["attempt"]: line["got"] for line in lines(o, "SNOOP")}
        for o in outputs(folder, "snoop")
    ]
    assert any(isinstance(g["read"][str(folder / "tournament.json")], int) for g in snooped)
    assert any(g["read"][str(folder / "tournament.json")] for g in snooped)
    assert hits  # reached a port that is not the referee
    assert all(g["uid"] == os.getuid() for g in snooped)
    assert all(g["keyring"] == "stored" for g in snooped)
    # MatchService is reachable but needs the organiser's token, which a bot never has.
    assert all(not g["organise"].startswith("listed ") for g in snooped)
    memo = [lines(o, "MEMO") for o in outputs(folder, "memo")]
    assert {"knows_seed": True} in memo[-1]  # knew every seat's cards of match 4
    assert any(m.get("recognised") for m in memo[-1])
    assert (tmp_path / "escape.txt").exists()


async def test_bots_over_their_limits_are_killed_and_the_cause_recorded(tmp_path):
    hog = str(BOTS / "hog_bot.py")
    bots = [
        bot_entry("forker", command=["{python}", hog, "fork"], limits={"processes": 24}),
        bot_entry("hungry", command=["{python}", hog, "memory"], limits={"memory_mb": 96}),
        bot_entry("spinner", command=["{python}", hog, "cpu"], limits={"cpu_s": 1.5}),
        bot_entry("chatty", command=["{python}", hog, "spam"], limits={"stderr_kb": 64}),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none"},
        rules={"hands": 2},
        time={"turn_time_ms": 3000, "connect_timeout_ms": 20000},
    )
    summary = await Tournament(load_config(path)).run()
    assert (summary.done, summary.failed) == (1, 0)
    folder = tmp_path / "out"
    (result,) = read_results(folder)
    seats = {s["bot"]: s for s in result["seats"]}
    assert seats["forker"]["breach"] == "process limit"
    assert seats["hungry"]["breach"] == "memory limit"
    assert seats["spinner"]["breach"] == "CPU limit"
    # The log says why too: the table told the referee the seat's bot was gone, and why.
    causes = {
        e.seat_disconnected.seat: e.seat_disconnected.cause
        for e in (line.entry.event for line in read_log(folder / result["log"]).lines)
        if e.HasField("seat_disconnected") and e.seat_disconnected.gone
    }
    for name in ("forker", "hungry", "spinner"):
        assert seats[name]["crashed"] and seats[name]["exit_code"] < 0, seats[name]
        why = f"was stopped by its jail for breaking its {seats[name]['breach']} ("
        assert seats[name]["crash"].startswith(why), seats[name]["crash"]
        assert causes[seats[name]["seat"]] == f"its bot {seats[name]['crash']}"
    assert seats["spinner"]["cpu_s"] >= 1.5
    assert seats["hungry"]["memory_mb"] <= 96
    # A refused fork may be reported before the kill, or not: the breach is what counts.
    forked = [h for h in lines(outputs(folder, "forker")[0], "HOG") if "forked" in h]
    assert all(h["forked"] < 24 for h in forked)
    chatty = seats["chatty"]
    assert chatty["breach"] == "" and not chatty["crashed"] and chatty["exit_code"] == 0
    out = outputs(folder, "chatty")[0].read_bytes()
    assert out.endswith(b"[output cut at 65536 bytes]\n")
    assert len(out) < 65536 + 100
    assert verify_log(folder / result["log"]).ok
    rows = {r.name: r for r in summary.standings}
    assert (rows["forker"].breaches, rows["chatty"].breaches) == (1, 0)
    assert leftover_cgroups() == []


async def test_a_disqualified_bot_is_replaced_and_not_rated(tmp_path):
    bots = [
        bot_entry("crashy", **spawned_bot("crashy_bot.py"), env={"PUSOY_CRASH_AFTER": "1"}),
        bot_entry("a", builtin="greedy"),
        bot_entry("b", builtin="random"),
        bot_entry("c", builtin="greedy"),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none", "rounds": 3},
        rules={"hands": 1},
        time={"turn_time_ms": 1000, "connect_timeout_ms": 20000},
    )
    path.write_text(path.read_text() + '\n[disqualify]\ncrashes = 1\nreplacement = "random"\n')
    summary = await Tournament(load_config(path)).run()
    assert (summary.done, summary.failed) == (3, 0)
    folder = tmp_path / "out"
    results = sorted(read_results(folder), key=lambda r: r["index"])
    crashy = [next(s for s in r["seats"] if s["bot"] == "crashy") for r in results]
    assert crashy[0]["crashed"] and crashy[0]["disqualified"] == "1 crash"
    assert crashy[0]["replaced_by"] == ""
    for later in crashy[1:]:
        assert later["replaced_by"] == "random" and not later["crashed"]
        assert later["exit_code"] is None and later["connected"]  # the built-in bot played
    rows = {r.name: r for r in summary.standings}
    assert rows["crashy"].disqualified == "1 crash" and rows["crashy"].matches == 1
    assert summary.standings[-1].name == "crashy"
    assert all(rows[n].matches == 3 for n in "abc")
    assert verify_tournament(folder).ok

    # Resuming replays the same decision: the bot is still out.
    again = Tournament(load_config(path))
    again.prepare()
    assert again.disqualifier.out == {"crashy": "1 crash"}


async def test_sandboxed_bots_reach_a_referee_server_through_the_relay(tmp_path):
    from .test_server_referee import server_referee, start_serve

    proc, address = start_serve(tmp_path / "server-logs")
    try:
        bots = [
            bot_entry("greedy-proc", **example_bot("greedy_bot.py")),
            bot_entry("snoop", **spawned_bot("snoop_bot.py")),
            bot_entry("greedy", builtin="greedy"),
            bot_entry("random", builtin="random"),
        ]
        path = write_config(
            tmp_path,
            bots,
            tournament={"format": "fixed", "seatings": "none"},
            time={"turn_time_ms": 3000, "connect_timeout_ms": 20000},
            referee=server_referee(address, tmp_path / "server-logs"),
            more={"sandbox": {"enabled": True}},
        )
        tournament = Tournament(load_config(path))
        summary = await tournament.run()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert (summary.done, summary.failed) == (1, 0) and tournament.isolation.active
    (result,) = read_results(tmp_path / "out")
    for seat in result["seats"]:
        assert seat["connected"] and seat["absent_turns"] == 0, seat
        if seat["bot"] in ("greedy-proc", "snoop"):
            assert seat["cpu_s"] > 0 and seat["exit_code"] == 0
    (output,) = outputs(tmp_path / "out", "snoop")
    got = {line["attempt"]: line["got"] for line in lines(output, "SNOOP")}
    assert got["organise"] == "Error: UNIMPLEMENTED"  # the relay passes PlayService alone
    assert leftover_cgroups() == []


async def test_a_bot_with_a_core_of_its_own_runs_only_there(tmp_path):
    """own_cores pins each bot with its cpuset; cpu_cores caps it with a CFS quota."""
    from referee.sandbox import CoreAllocator, Jail, JailSpec, RefereeSocket

    support = probe()
    assert support.cgroups is not None and support.cgroups.has_cpuset
    core = str(CoreAllocator.available()[-1])
    sock = RefereeSocket()
    server = await asyncio.start_unix_server(lambda r, w: w.close(), path=str(sock.path))
    sock.opened(40123)
    spec = JailSpec(
        argv=["/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"],
        cwd=Path("/tmp"),
        env={"PATH": "/usr/bin:/bin"},
        referee_socket=sock.path,
    )
    jail = Jail(spec, support.cgroups, cpus=core, cpu_cores=0.5, bwrap=support.bwrap)
    try:
        argv, env, fds = jail.open()
        assert jail.group is not None
        cpu = jail.group.dirs["cpu"]
        assert (cpu / "cpu.cfs_quota_us").read_text().strip() == "50000"
        assert (cpu / "cpu.shares").read_text().strip() == "1024"
        proc = await asyncio.create_subprocess_exec(
            *argv, env=env, stdout=asyncio.subprocess.PIPE, pass_fds=fds
        )
        jail.spawned(proc)
        out, _ = await proc.communicate()
    finally:
        await jail.close()
        server.close()
        sock.close()
    assert out.decode().split() == ["Cpus_allowed_list:", core]
    assert leftover_cgroups() == []
