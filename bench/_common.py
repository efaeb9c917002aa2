"""What the server benchmarks share: start ``referee serve`` as a real process, read its
organiser token, create matches, and read a process's CPU, memory and descriptors."""

from __future__ import annotations

import asyncio
import os
import resource
import sys
from collections.abc import Sequence
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from referee.protocol import common, match_service, match_service_grpc  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """User + system CPU of a running process (its threads included), or of its thread
    ``tid`` alone."""
    stat = Path(f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_kb(pid: int) -> int:
    """Resident set size of a running process, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def open_fds(pid: int) -> int:
    """File descriptors a process has open (sockets, files, pipes, epoll...)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def raise_open_files(wanted: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``wanted`` (never past the hard
    limit); children started afterwards inherit it. Returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def serve_argv(log_dir: Path, state_dir: Path, *extra: str) -> list[str]:
    """``referee serve`` on a free loopback port, quiet, with these folders."""
    return [
        sys.executable,
        "-m",
        "referee.cli",
        "serve",
        "--address",
        "127.0.0.1:0",
        "--log-dir",
        str(log_dir),
        "--state-dir",
        str(state_dir),
        "--log-level",
        "error",
        *extra,
    ]


async def start_server(
    argv: Sequence[str], stderr: int | object = asyncio.subprocess.DEVNULL
) -> tuple[asyncio.subprocess.Process, str]:
    """Start a server that prints ``... listening on ADDRESS;`` first; its address."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=ROOT
    )
    assert proc.stdout is not None
    line = (await proc.stdout.readline()).decode()
    if "listening on " not in line:
        await proc.wait()
        raise RuntimeError(f"the server did not start (exit {proc.returncode}): {line!r}")
    return proc, line.split("listening on ")[1].split(";")[0].strip()


def organiser_metadata(state_dir: Path) -> tuple[tuple[str, str], ...]:
    """The organiser's credentials, from the token a referee keeps in its state folder
    (none for a referee too old to have one)."""
    token_file = state_dir / "organiser-token"
    if not token_file.exists():
        return ()
    return (("authorization", "Bearer " + token_file.read_text().strip()),)


async def create_matches(
    address: str,
    metadata: tuple[tuple[str, str], ...],
    count: int,
    hands: int,
    time_control: common.TimeControl,
    seed_prefix: str = "bench",
) -> list[match_service.CreateMatchResponse]:
    """Create ``count`` big-two matches, one after the other."""
    created = []
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        for i in range(count):
            response = await stub.CreateMatch(
                match_service.CreateMatchRequest(
                    profile="big-two",
                    hands=hands,
                    seed=f"{seed_prefix}-{i}",
                    time_control=time_control,
                ),
                metadata=metadata,
            )
            created.append(response)
    return created
