#!/usr/bin/env python3
"""The sandbox's cost: start-up per bot per match, and per turn in real matches.

1. Start-up: the whole life of one sandboxed bot whose program does nothing but connect
   to the referee's address and exit (``socat`` to 127.0.0.1:PORT), from making its
   cgroups to removing them: what a tournament (or ``referee match``) pays per spawned
   bot per match on top of the bot's own start-up; for the full jail (root, cgroups)
   and the light one (a user namespace, rlimits; made as root here, the bot as
   nobody). The reference is the same program spawned without a sandbox, connecting to
   a TCP port of this process. Medians of --runs, run alternately so that all see the
   same load; CPU time moves less with the machine's load than wall time (the full
   jail's: its cgroup's, every process; the light jail's: the reaped children's, which
   leaves out the forwarder killed with the namespace).
2. Matches (--matches N): tournaments of four spawned example bots (examples/greedy_bot.py
   and random_bot.py), sandbox off and on in turn, N matches each: matches per minute, and
   the spawned bots' mean wall time per turn (prompt to answer, from the logs, so the
   forwarder's two extra hops per turn are in it).

    .venv/bin/python bench/bench_sandbox.py --runs 50 --matches 8
    .venv/bin/python bench/bench_sandbox.py --runs 20 --levels full light
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.sandbox import (  # noqa: E402
    Jail,
    JailSpec,
    Level,
    RefereeSocket,
    SandboxLimits,
    SandboxUnavailable,
    Support,
    probe,
    probe_light,
)


async def _serve(sock: RefereeSocket) -> tuple[asyncio.AbstractServer, asyncio.AbstractServer, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello\n")
        await writer.drain()
        writer.close()

    unix = await asyncio.start_unix_server(handle, path=str(sock.path))
    sock.opened(0)
    tcp = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    return unix, tcp, port


def _client(port: int) -> list[str]:
    return ["socat", "-u", f"TCP:127.0.0.1:{port}", "STDOUT"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def plain_once(port: int) -> tuple[float, float]:
    """Wall and CPU seconds of the bot run as it is."""
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = await asyncio.create_subprocess_exec(
        *_client(port), stdout=asyncio.subprocess.PIPE, start_new_session=True
    )
    out, _ = await proc.communicate()
    assert out == b"hello\n", out
    return time.perf_counter() - t0, _children_cpu() - c0


async def sandboxed_once(
    sock: RefereeSocket, port: int, support: Support
) -> tuple[float, float, float]:
    """Wall seconds to the bot's exit and to the sandbox's removal, and the CPU seconds
    of everything in its cgroups (a light jail: of this process's children)."""
    c0 = _children_cpu()
    spec = JailSpec(
        argv=_client(port),
        cwd=Path("/tmp"),
        env={"PATH": "/usr/bin:/bin"},
        referee_socket=sock.path,
        port=port,
        limits=SandboxLimits(),
        level=support.level,
    )
    t0 = time.perf_counter()
    jail = Jail(spec, support.cgroups, bwrap=support.bwrap)
    argv, env, fds = jail.open()
    proc = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=asyncio.subprocess.PIPE, start_new_session=True, pass_fds=fds
    )
    jail.spawned(proc)
    out, _ = await proc.communicate()
    ran = time.perf_counter() - t0
    report = await jail.close()
    assert out == b"hello\n", out
    cpu = report.cpu_s if report.cpu_s is not None else _children_cpu() - c0
    return ran, time.perf_counter() - t0, cpu


def matches(n: int, sandbox: str) -> tuple[float, float, float | None]:
    """Matches per minute, the spawned bots' wall and CPU ms per turn."""
    import io
    import json
    import tempfile

    from bench_tournament import spawned, write_config

    from referee.server.logging import configure_logging
    from referee.tournament.director import Tournament
    from referee.tournament.progress import Progress
    from referee.tournament.toml_reader import load_config

    configure_logging("json", "warning")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_config(
            Path(tmp),
            [spawned(i) for i in range(4)],
            rounds=max(1, n // 4),
            hands=4,
            concurrency=1,
            verify=False,
            fmt="fixed",
            sandbox=sandbox,
        )
        tournament = Tournament(load_config(path), progress=Progress(io.StringIO(), tty=False))
        t0 = time.perf_counter()
        summary = asyncio.run(tournament.run())
        seconds = time.perf_counter() - t0
        assert summary.done == summary.total and not summary.failed, summary
        seats = [
            s
            for line in (Path(tmp) / "out" / "results.jsonl").read_text().splitlines()
            for s in json.loads(line)["seats"]
        ]
    turns = sum(s["turns"] for s in seats)
    wall = sum(s["think_ms"] for s in seats) / turns
    cpu = [s["cpu_turns_ms"] for s in seats if s["cpu_turns_ms"] is not None]
    return summary.done / seconds * 60, wall, (sum(cpu) / turns if cpu else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--matches", type=int, default=0, help="also N matches each way")
    parser.add_argument("--levels", nargs="+", choices=["full", "light"], default=["full", "light"])
    args = parser.parse_args()
    asyncio.run(startup(args.runs, [Level(x) for x in args.levels]))
    if args.matches:
        sys.path.insert(0, str(ROOT / "bench"))
        rows = {mode: matches(args.matches, mode) for mode in ("off", "on")}
        print(f"{args.matches} matches of 4 spawned Python bots, 4 hands, concurrency 1:")
        for mode, (per_min, wall, cpu) in rows.items():
            cpu_text = f", CPU {cpu:.1f} ms per turn" if cpu is not None else ""
            rate = f"{per_min:5.1f} matches/min"
            print(f"  sandbox {mode:3s}: {rate}, wall {wall:.1f} ms per turn{cpu_text}")


async def startup(runs: int, levels: list[Level]) -> None:
    supports = []
    for level in levels:
        support = probe() if level is Level.FULL else probe_light()
        try:
            support.require(level)
        except SandboxUnavailable as exc:
            sys.exit(str(exc))
        supports.append(support)
    sock = RefereeSocket()
    unix, tcp, port = await _serve(sock)
    plain: list[tuple[float, float]] = []
    boxed: dict[Level, list[tuple[float, float, float]]] = {s.level: [] for s in supports}
    try:
        await plain_once(port)
        for support in supports:
            await sandboxed_once(sock, port, support)  # warm the caches
        for _ in range(runs):
            plain.append(await plain_once(port))
            for support in supports:
                boxed[support.level].append(await sandboxed_once(sock, port, support))
    finally:
        unix.close()
        tcp.close()
        sock.close()
    p_wall, p_cpu = (statistics.median(x) for x in zip(*plain, strict=True))
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; {supports[0].version}; {runs} runs, medians"
    )
    ms = 1000
    print(
        f"plain: spawn, connect, exit           {p_wall * ms:7.1f} ms wall {p_cpu * ms:6.1f} ms CPU"
    )
    for level, rows in boxed.items():
        ran, total, cpu = (statistics.median(x) for x in zip(*rows, strict=True))
        print(f"{level.value} jail: spawn, connect, exit       {ran * 1000:7.1f} ms wall")
        print(
            f"  and removed (kill, account, rmdir)  {total * ms:7.1f} ms wall "
            f"{cpu * ms:6.1f} ms CPU"
        )
        print(
            f"{level.value} jail cost per bot per match:    {(total - p_wall) * 1000:7.1f} ms "
            f"wall {(cpu - p_cpu) * 1000:6.1f} ms CPU ({total / p_wall:.1f}x the plain run's "
            "wall time)"
        )


if __name__ == "__main__":
    main()
