#!/usr/bin/env python3
"""Crash recovery: how long a restart takes to resume a match, and kills at random points.

1. Resume time: an unfinished log of about N events (N = 100 and 10,000), made by the
   match machine itself, resumed by a fresh registry (read, fold, append the restart).
2. SIGKILL at random points: ``referee serve`` with four bots of the Python kit, killed
   at a random moment of the match, started again on the same folders; after each
   restart the match must finish, its log verify end to end, every line written before
   the kill still be there, and exactly one restart be logged. The kill comes once the
   log has reached a random number of lines (the middle of a hand, a rejected attempt,
   a hand's end: wherever it falls).

    python bench/bench_recovery.py                    # both, 20 kills
    python bench/bench_recovery.py --kills 50 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "match"))

from sim import MS, T0, Sim, settings  # noqa: E402

from referee.log.reader import read_log  # noqa: E402
from referee.log.verify import verify_log  # noqa: E402
from referee.log.writer import EventLogWriter  # noqa: E402
from referee.protocol import common, match_service, match_service_grpc  # noqa: E402
from referee.server.registry import MatchRegistry  # noqa: E402

KIT_BOT = ROOT / "clients" / "python" / "bot"


def unfinished_log(logs: Path, state: Path, events: int) -> str:
    """Write a log of about ``events`` events that stops mid-match; its match id."""
    sim = Sim(settings("pusoy-dos", hands=10_000, turn_time_ms=1000))
    sim.connect_all(T0)
    t = T0
    while len(sim.log) < events:
        t += 5 * MS
        sim.play_lowest(t)
    match_id = "20261201-000000-00c0ffee"
    writer = EventLogWriter.create(logs / f"{match_id}.jsonl", match_id)
    groups: list[tuple[common.Command, list[common.Event], int]] = []
    for cmd, event, at in sim.log:
        if groups and groups[-1][0] is cmd:
            groups[-1][1].append(event)
        else:
            groups.append((cmd, [event], at))
    for cmd, evs, at in groups:
        writer.append(evs, at, cmd)
    writer.close()
    (state / "seeds").mkdir(parents=True, exist_ok=True)
    (state / "seeds" / f"{match_id}.seed").write_text(sim.settings.seed)
    return match_id


async def time_resume(events: int, repeat: int = 5) -> tuple[int, list[float], list[float]]:
    """Wall and CPU seconds of each resume (CPU: steadier on a shared machine)."""
    times = []
    cpus = []
    lines = 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            logs, state = Path(d) / "logs", Path(d) / "state"
            logs.mkdir()
            match_id = unfinished_log(logs, state, events)
            lines = len(read_log(logs / f"{match_id}.jsonl").lines)
            registry = MatchRegistry(logs, state)
            t0 = time.perf_counter()
            c0 = time.process_time()
            resumed = registry.resume_all()
            host = registry.get(match_id)
            assert host is not None and resumed[0].resumed
            while host.writer.seq == lines:  # noqa: ASYNC110 (the restart entry is its task's)
                await asyncio.sleep(0)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            await registry.suspend()
    return lines, times, cpus


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(tmp: Path, port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "serve",
            "--address",
            f"127.0.0.1:{port}",
            "--log-dir",
            str(tmp / "logs"),
            "--state-dir",
            str(tmp / "state"),
            "--log-level",
            "error",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    while not proc.stdout.readline().startswith("referee listening"):
        pass
    return proc


def organiser(tmp: Path) -> tuple[tuple[str, str], ...]:
    """The organiser's credential, from the server's state folder (none before tokens)."""
    token = tmp / "state" / "organiser-token"
    if not token.exists():
        return ()
    return (("authorization", "Bearer " + token.read_text().strip()),)


def one_kill(tmp: Path, rng: random.Random) -> dict[str, object]:
    port = free_port()
    address = f"127.0.0.1:{port}"
    proc = serve(tmp, port)
    with __import__("grpc").insecure_channel(address) as channel:
        created = match_service_grpc.MatchServiceStub(channel).CreateMatch(
            match_service.CreateMatchRequest(
                profile=rng.choice(["pusoy-dos", "big-two", "pusoy-dos-chips"]),
                hands=3,
                seed=f"kill-{rng.random()}",
                time_control=common.TimeControl(turn_time_ms=3000, resume_grace_ms=15000),
            ),
            metadata=organiser(tmp),
        )
    log = tmp / "logs" / f"{created.match_id}.jsonl"
    bots = [
        subprocess.Popen(
            [str(KIT_BOT), "--address", address, "--token", t]
            + (["--misbehave"] if seat == 2 else []),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for seat, t in enumerate(created.seat_tokens)
    ]
    target = rng.randint(2, 450)  # a 3-hand match logs about 550 lines
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and log.read_bytes().count(b"\n") < target:
        time.sleep(rng.uniform(0.0, 0.01))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = log.read_bytes()
    committed = before[: before.rfind(b"\n") + 1]
    down = rng.uniform(0.0, 3.0)
    time.sleep(down)
    t0 = time.perf_counter()
    proc = serve(tmp, port)
    restart_s = time.perf_counter() - t0
    try:
        codes = [b.wait(120) for b in bots]
    finally:
        proc.terminate()
        proc.wait()
    after = log.read_bytes()
    report = verify_log(log)
    kinds = [ln.kind for ln in read_log(log).lines]
    return {
        "lines_before": committed.count(b"\n"),
        "lines_after": len(kinds),
        "down_s": round(down, 2),
        "restart_s": round(restart_s, 2),
        "bots_ok": codes == [0, 0, 0, 0],
        "prefix_kept": after.startswith(committed),
        "verified": report.ok,
        "restarts": kinds.count("referee_restarted"),
        "finished": kinds[-1] == "match_ended"
        and read_log(log).lines[-1].entry.event.match_ended.status == common.MATCH_STATUS_FINISHED,
        "problem": report.problem,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for events in (100, 10_000):
        lines, times, cpus = asyncio.run(time_resume(events))
        print(
            f"resume a {lines}-line log: median {statistics.median(times) * 1000:.1f} ms "
            f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}) over {len(times)} runs; "
            f"CPU median {statistics.median(cpus) * 1000:.1f} ms"
        )
    rng = random.Random(args.seed)
    results = []
    for i in range(args.kills):
        with tempfile.TemporaryDirectory() as d:
            r = one_kill(Path(d), rng)
        results.append(r)
        print(f"kill {i + 1}: {json.dumps(r)}", flush=True)
    if not results:
        return
    good = [
        r
        for r in results
        if r["bots_ok"]
        and r["prefix_kept"]
        and r["verified"]
        and r["restarts"] == 1
        and r["finished"]
    ]
    print(
        f"{len(good)}/{len(results)} kills: match finished, log verified end to end, nothing "
        f"committed lost, one restart logged; restart to listening median "
        f"{statistics.median(float(r['restart_s']) for r in results):.2f} s"  # type: ignore[arg-type]
    )
    sys.exit(0 if len(good) == len(results) else 1)


if __name__ == "__main__":
    main()
