"""Tournaments on Ray: the configuration, and a real two-node Ray cluster on this machine.

The cluster test plays one small tournament twice with the same master seed: at tables
in this process (the local backend), then with ``referee tournament`` as Ray tasks on a
head node and a second node, and kills the second node outright while it plays a match.
The match is played again on the head from scratch, the retry is noted, and
results.jsonl and the standings come out the same as the local run's (timing fields and
the referee's random match ids aside).
A second tournament on the same cluster has its runner (Ray's driver) SIGKILLed
mid-run, and the next run resumes it as a local tournament resumes. The cluster and its
drivers use token authentication as docs/tournaments.md sets it up, with a token of their
own (``LocalCluster``), so nothing here depends on the user's home folder; and a
tournament with a Ray of its own (no address) leaves no token in its home folder.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from referee_cli import run_referee

from referee.log.verify import verify_log
from referee.tournament.config import Backend, ConfigError
from referee.tournament.director import Tournament, TournamentError
from referee.tournament.progress import Progress
from referee.tournament.schedule import build_schedule
from referee.tournament.toml_reader import load_config

from .conftest import ROOT, bot_entry, read_results, spawned_bot, write_config
from .ray_cluster import RAY_SETTINGS, LocalCluster
from .test_tournament import check_results_match_logs

TIMING = {"started", "duration_s", "referee_match_id", "retries", "final_hash", "signed_by"}
"""Fields that differ between two plays of the same deals (the hash covers times; each
folder has its own signing key)."""
MEASURED = {
    "think_ms",
    "wall_ms_per_turn",
    "wall_ms_max_turn",
    "cpu_s",
    "cpu_turns_ms",
    "cpu_ms_per_turn",
    "cpu_ms_max_turn",
    "memory_mb",
}
"""A seat's measured time and memory (its sandbox's figures)."""
"""What may differ between two runs of the same matches."""


def bots() -> list[str]:
    return [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("slow", **spawned_bot("slow_bot.py")),
        bot_entry("greedy-2", builtin="greedy"),
    ]


def config(folder: Path, execution: dict[str, Any] | None = None, name: str = "t.toml") -> Path:
    path = write_config(
        folder,
        bots(),
        tournament={"format": "fixed", "concurrency": 2, "output": name[:-5]},
        rules={"hands": 1},
        time={"turn_time_ms": 5000, "connect_timeout_ms": 30000},
        name=name,
    )
    if execution is not None:
        lines = [f"{k} = {json.dumps(v)}" for k, v in execution.items()]
        path.write_text(path.read_text() + "\n[execution]\n" + "\n".join(lines) + "\n")
    return path


def comparable(folder: Path) -> dict[str, dict[str, Any]]:
    """results.jsonl by match (lines are in the order matches ended), timing aside."""
    out = {}
    for r in read_results(folder):
        kept = {k: v for k, v in r.items() if k not in TIMING}
        kept["seats"] = [{k: v for k, v in s.items() if k not in MEASURED} for s in r["seats"]]
        out[r["match_id"]] = kept
    return out


def standings(folder: Path) -> dict[str, Any]:
    doc = json.loads((folder / "standings.json").read_text())
    for key in ("updated", "tournament"):  # the time, and the configuration file's name
        doc.pop(key)
    return doc


# -- the configuration ---------------------------------------------------------------


def test_local_is_the_default_and_ray_options_are_checked(tmp_path):
    assert load_config(config(tmp_path)).execution.backend is Backend.LOCAL
    cfg = load_config(config(tmp_path, {"backend": "ray", "address": "10.0.0.5:6379"}))
    assert cfg.execution.backend is Backend.RAY
    assert cfg.execution.address == "10.0.0.5:6379"
    # Not part of the identity: a tournament may be resumed on the other backend.
    assert cfg.identity_hash() == load_config(config(tmp_path)).identity_hash()
    bad = [
        ({"backend": "spark"}, "execution.backend"),
        ({"backend": "ray", "address": "nowhere"}, "execution.address"),
        ({"backend": "ray", "cpus_per_match": 0}, "execution.cpus_per_match"),
        ({"address": "auto"}, "execution.address"),  # only for ray
        ({"backend": "ray", "workers": 3}, "execution.workers"),
    ]
    for execution, where in bad:
        with pytest.raises(ConfigError) as err:
            load_config(config(tmp_path, execution))
        assert err.value.where == where, execution


def test_ray_refuses_remote_bots_and_a_referee_server(tmp_path):
    ray_section = '\n[execution]\nbackend = "ray"\n'
    remote = bot_entry("far", key="a-secret-key")
    path = write_config(tmp_path, [*bots()[:3], remote])
    path.write_text(path.read_text() + ray_section)
    with pytest.raises(ConfigError, match="remote bots") as err:
        load_config(path)
    assert err.value.where == "execution.backend"
    token = tmp_path / "token"
    token.write_text("x" * 43 + "\n")
    token.chmod(0o600)
    path = write_config(
        tmp_path,
        bots(),
        referee={"server": "127.0.0.1:50051", "organiser_token_file": str(token)},
    )
    path.write_text(path.read_text() + ray_section)
    with pytest.raises(ConfigError, match="its own referee") as err:
        load_config(path)
    assert err.value.where == "execution.backend"


async def test_ray_not_installed_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    cfg = load_config(config(tmp_path, {"backend": "ray"}))
    tournament = Tournament(cfg, progress=Progress(io.StringIO(), tty=False))
    with pytest.raises(TournamentError, match=r"pusoy-referee\[ray\]"):
        await tournament.dry_run()
    with pytest.raises(TournamentError, match=r'pip install "pusoy-referee\[ray\]"'):
        await tournament.run()


def test_a_ray_of_its_own_stops_in_order_and_leaves_no_token_behind(tmp_path):
    """``backend = "ray"`` without an address: the tournament's Ray has a token of its own,
    kept out of the home folder. (Ray's default left it in ~/.ray/auth_token, after which
    the next ``ray start --head`` on the machine turned authentication on by itself and its
    other nodes and drivers failed with InvalidAuthToken.) SIGTERM stops it as it stops a
    local tournament (ray.init installs a handler that exits at once; the backend puts the
    runner's back), and the same command finishes it."""
    home = tmp_path / "home"
    home.mkdir()
    names = ("greedy", "random", "greedy-2", "random-2")
    rounds = 20
    path = write_config(
        tmp_path,
        [bot_entry(name, builtin=name.split("-")[0]) for name in names],
        tournament={"format": "fixed", "seatings": "none", "rounds": rounds},
        rules={"hands": 1},
        time={"turn_time_ms": 5000, "connect_timeout_ms": 30000},
    )
    path.write_text(path.read_text() + '\n[execution]\nbackend = "ray"\n')
    env = {k: v for k, v in os.environ.items() if k not in RAY_SETTINGS}
    env = {**env, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "referee.cli", "tournament", str(path)]
    results = tmp_path / "out" / "results.jsonl"
    printed = tmp_path / "first-run.txt"
    with open(printed, "wb") as sink:
        first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=sink)
        try:
            deadline = time.monotonic() + 240
            while not (results.exists() and results.read_text().strip()):
                assert first.poll() is None, printed.read_text()
                assert time.monotonic() < deadline, printed.read_text()
                time.sleep(0.02)
            first.send_signal(signal.SIGTERM)
            assert first.wait(120) == 130, printed.read_text()
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
    done = len(results.read_text().splitlines())
    assert 1 <= done < rounds
    assert f"Stopped after {done} of {rounds} matches" in printed.read_text()

    again = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"Resuming: {done} matches already recorded" in again.stdout
    assert f"{rounds}/{rounds} matches recorded (0 failed)" in again.stdout
    assert not (home / ".ray").exists()


# -- a real cluster --------------------------------------------------------------------


@pytest.fixture(scope="module")
def nodes():
    with LocalCluster() as c:
        c.start_head()
        node = c.add_node()
        yield c, node


@pytest.fixture
def cluster(nodes, monkeypatch):
    """The cluster, with its settings in this process's environment for the runners it
    starts (Ray's driver is always a process of its own, with them from its start)."""
    for name in RAY_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name, value in nodes[0].auth_env().items():
        monkeypatch.setenv(name, value)
    return nodes


def test_same_results_on_ray_when_a_node_dies_mid_run(tmp_path, cluster):
    c, second = cluster
    local = asyncio.run(
        Tournament(
            load_config(config(tmp_path, name="local.toml")),
            progress=Progress(io.StringIO(), tty=False),
        ).run()
    )
    assert local.complete and local.failed == 0

    # The runner is its own process, with the cluster's settings in its environment from
    # the start, as a user runs it: Ray reads RAY_AUTH_MODE once per process, so a driver
    # in this process would depend on whether an earlier test had imported ray.
    path = config(tmp_path, {"backend": "ray", "address": c.address}, "ray.toml")
    output = tmp_path / "ray-run.txt"
    with open(output, "wb") as sink:
        run = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "tournament", str(path)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            # Kill the second node while it plays a match (its worker is ray::play_here).
            deadline = time.monotonic() + 180
            while not second.running("ray::play_here"):
                assert run.poll() is None, output.read_text()
                assert time.monotonic() < deadline, output.read_text()
                time.sleep(0.1)
            time.sleep(0.5)
            second.kill()
            assert run.wait(240) == 0, output.read_text()
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    printed = output.read_text()

    folder = tmp_path / "ray"
    results = read_results(folder)
    assert f"{len(results)}/{len(results)} matches recorded (0 failed)" in printed, printed
    retried = [r for r in results if r["retries"]]
    assert len(retried) == 1, printed
    assert "lost" in retried[0]["retries"][0]
    assert f"{retried[0]['match_id']}: attempt 1 was lost" in printed
    # Verified on arrival: the entries byte for byte what the worker's referee wrote.
    assert all(r["verified"] is True for r in results)
    # Every log is signed with the tournament's own key (not a worker's), as locally.
    key = base64.b64decode((folder / "signing-key.pub").read_text().strip())
    assert all(verify_log(folder / r["log"], public_key=key).ok for r in results)
    assert {r["signed_by"] for r in results} == {base64.b64encode(key).decode()}
    check_results_match_logs(folder)
    assert sorted(p.name for p in (folder / "logs").iterdir()) == sorted(
        f"{r['match_id']}.jsonl" for r in results
    )
    # The slow bot's output came back from its worker, where a local match puts it.
    assert all((folder / s["stderr"]).is_file() for r in results for s in r["seats"] if s["stderr"])

    on_ray, local = comparable(folder), comparable(tmp_path / "local")
    assert on_ray.keys() == local.keys()
    for match_id, result in on_ray.items():
        assert result == local[match_id], match_id
    assert standings(folder) == standings(tmp_path / "local")


def test_a_ray_tournament_whose_runner_is_killed_resumes_on_the_next_run(tmp_path, cluster):
    """The runner (Ray's driver) SIGKILLed mid-tournament: the next run records the rest,
    keeps what was recorded, plays no match twice, and every log verifies with the
    tournament's key, as a local tournament resumes."""
    c, _ = cluster
    kinds = {"greedy": "greedy", "random": "random", "greedy-2": "greedy", "random-2": "random"}
    bots_ = [bot_entry(name, builtin=kind) for name, kind in kinds.items()]
    path = write_config(
        tmp_path,
        bots_,
        tournament={"format": "fixed", "rounds": 4, "concurrency": 2},
        rules={"hands": 1},
        time={"turn_time_ms": 5000, "connect_timeout_ms": 30000},
    )
    path.write_text(path.read_text() + f'\n[execution]\nbackend = "ray"\naddress = "{c.address}"\n')
    out = tmp_path / "out"
    results = out / "results.jsonl"
    first_out = tmp_path / "first-run.txt"
    with open(first_out, "wb") as log:
        first = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "tournament", str(path)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 180
            while not (results.exists() and len(results.read_text().splitlines()) >= 2):
                assert first.poll() is None, first_out.read_text()
                assert time.monotonic() < deadline, first_out.read_text()
                time.sleep(0.05)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
    before = results.read_text().splitlines()
    assert 2 <= len(before) < 16, first_out.read_text()

    second = run_referee("tournament", str(path), timeout=300)
    assert second.returncode == 0, second.stderr + second.stdout
    assert f"Resuming: {len(before)} matches already recorded" in second.stdout

    lines = results.read_text().splitlines()
    assert lines[: len(before)] == before  # what was recorded stays as it was
    ids = [json.loads(line)["match_id"] for line in lines]
    seed = json.loads((out / "tournament.json").read_text())["master_seed"]
    schedule = build_schedule(load_config(path), seed)
    assert len(ids) == len(set(ids)) == 16
    assert sorted(ids) == sorted(s.match_id for s in schedule)
    key = base64.b64decode((out / "signing-key.pub").read_text().strip())
    assert all(verify_log(out / r["log"], public_key=key).ok for r in read_results(out))
    check_results_match_logs(out)
    assert sorted(p.stem for p in (out / "logs").glob("*.jsonl")) == sorted(ids)
    # Ray ended the killed runner's tasks with it: no match is left playing on the cluster.
    deadline = time.monotonic() + 30
    while any(n.running("ray::play_here") for n in c.nodes if n.proc.poll() is None):
        assert time.monotonic() < deadline, "a match task outlived its tournament"
        time.sleep(0.2)
