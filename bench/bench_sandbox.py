#!/usr/bin/env python3
"""The sandbox's start-up cost per bot per match.

Times the whole life of one sandboxed bot whose program does nothing but connect to the
referee's address and exit (``socat`` to 127.0.0.1:PORT), from making its cgroups to
removing them: the cost a tournament pays per spawned bot per match on top of the bot's
own start-up. The reference is the same program spawned without a sandbox, connecting
to a TCP port of this process. Each figure is the median of --runs, run alternately so
that both see the same load.

    .venv/bin/python bench/bench_sandbox.py --runs 50
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

from referee.sandbox import Jail, JailSpec, Limits, RefereeSocket, probe  # noqa: E402


async def _serve(sock: RefereeSocket) -> tuple[asyncio.AbstractServer, asyncio.AbstractServer, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello\n")
        await writer.drain()
        writer.close()

    unix = await asyncio.start_unix_server(handle, path=str(sock.path))
    sock.opened()
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


async def sandboxed_once(sock: RefereeSocket, port: int) -> tuple[float, float, float]:
    """Wall seconds to the bot's exit and to the sandbox's removal, and the CPU seconds
    of everything in its cgroups."""
    support = probe()
    assert support.cgroups is not None
    spec = JailSpec(
        argv=_client(port),
        cwd=Path("/tmp"),
        env={"PATH": "/usr/bin:/bin"},
        referee_socket=sock.path,
        port=port,
        limits=Limits(),
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
    return ran, time.perf_counter() - t0, report.cpu_s


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    support = probe()
    if not support.ok:
        sys.exit(f"the sandbox cannot work here: {support.describe()}")
    sock = RefereeSocket()
    unix, tcp, port = await _serve(sock)
    plain: list[tuple[float, float]] = []
    boxed: list[tuple[float, float, float]] = []
    try:
        await plain_once(port)
        await sandboxed_once(sock, port)  # warm the caches
        for _ in range(args.runs):
            plain.append(await plain_once(port))
            boxed.append(await sandboxed_once(sock, port))
    finally:
        unix.close()
        tcp.close()
        sock.close()
    p_wall, p_cpu = (statistics.median(x) for x in zip(*plain, strict=True))
    ran, total, cpu = (statistics.median(x) for x in zip(*boxed, strict=True))
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; {support.version}; {args.runs} runs, medians"
    )
    ms = 1000
    print(
        f"plain: spawn, connect, exit           {p_wall * ms:7.1f} ms wall {p_cpu * ms:6.1f} ms CPU"
    )
    print(f"sandboxed: spawn, connect, exit       {ran * 1000:7.1f} ms wall")
    print(f"  and removed (kill, account, rmdir)  {total * ms:7.1f} ms wall {cpu * ms:6.1f} ms CPU")
    print(
        f"sandbox cost per bot per match:       {(total - p_wall) * 1000:7.1f} ms wall "
        f"{(cpu - p_cpu) * 1000:6.1f} ms CPU ({total / p_wall:.1f}x the plain run's wall time)"
    )


if __name__ == "__main__":
    asyncio.run(main())
