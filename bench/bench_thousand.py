#!/usr/bin/env python3
"""1,000 matches at once on one referee process.

Starts a real ``referee serve`` (its live and waiting-match limits raised by option),
creates N big-two matches with a 5 s turn limit, and plays all of them at once with the
Go kit's ``pusoy-seats`` load generator: a few bot processes, each playing the four
seats of its share of the matches, one goroutine and one gRPC connection per seat (so
the referee holds 4 N bot connections, as with separate bot programs). Then it checks
that every match finished, verifies every log with the server's public key (``referee
verify``) and counts the default actions the referee took (timeouts, disconnections).

Variants, each on a fresh server: ``live`` (every bot takes live events), ``batch``
(every bot asks for Hello.batch_events) and ``slow`` (live events, plus one spectator
that reads its WatchMatch stream from the start, one message every 0.1 s).

Prints, per variant: matches finished and verified, default actions, the referee's RSS
and file descriptors idle (the same run's reference) and at peak, RSS per live match
((peak - idle) / N), server CPU per move, moves/s, wall time, and p50/p99 from a bot's
action to the next prompt of its match, as the bots see it.

    python bench/bench_thousand.py                          # 1000 matches, all variants
    python bench/bench_thousand.py --matches 200 --variant batch --hands 2

Needs Go (the kit is built with clients/go/build.sh when its program is missing or old).
The referee needs about 5 file descriptors per live match (four bot connections and the
log): this script raises its own soft RLIMIT_NOFILE (inherited by the server and the
bots) to what N matches need, within the hard limit (docs/deploy.md).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    ROOT,
    cpu_seconds,
    create_matches,
    open_fds,
    organiser_metadata,
    pct,
    raise_open_files,
    rss_kb,
    serve_argv,
    start_server,
)

from referee.protocol import (
    common,
    match_service,
    match_service_grpc,
    spectator_service,
    spectator_service_grpc,
)

GO_KIT = ROOT / "clients" / "go"
SEATS = GO_KIT / "bin" / "pusoy-seats"
VARIANTS = ("live", "batch", "slow")
FDS_PER_MATCH = 5
"""Referee side: four bot connections and the match's log."""
CONNECT_TIMEOUT_MS = 600_000
"""The longest a server lets a match wait for its bots by default: seating 4,000 bots at
once takes minutes here (the connect phase is reported)."""
SLOW_READ_S = 0.1
SAMPLE_S = 0.2


@dataclasses.dataclass
class Figures:
    """One variant's run."""

    variant: str
    matches: int
    hands: int
    finished: int = 0
    verified: int = 0
    verify_failures: list[str] = dataclasses.field(default_factory=list)
    defaults: dict[str, int] = dataclasses.field(default_factory=dict)
    """Default actions in the logs, by cause (TIMEOUT, DISCONNECTED...)."""
    disconnects: int = 0
    moves: int = 0
    create_s: float = 0.0
    total_s: float = 0.0
    """The whole variant: start, create, play, verify."""
    wall_s: float = 0.0
    server_cpu_s: float = 0.0
    bot_cpu_s: float = 0.0
    idle_rss_kb: int = 0
    waiting_rss_kb: int = 0
    peak_rss_kb: int = 0
    idle_fds: int = 0
    peak_fds: int = 0
    fd_limit: int = 0
    latencies_ms: list[float] = dataclasses.field(default_factory=list, repr=False)
    seated_s: list[float] = dataclasses.field(default_factory=list, repr=False)
    """Per seat, from the bots' start to its Welcome (never seated: left out)."""
    bot_errors: list[str] = dataclasses.field(default_factory=list)
    bot_warnings: dict[str, int] = dataclasses.field(default_factory=dict)
    slow_reader: str = ""

    @property
    def kb_per_match(self) -> float:
        return (self.peak_rss_kb - self.idle_rss_kb) / max(1, self.matches)

    @property
    def ok(self) -> bool:
        """Every match finished, every log verified, no bot failed, no timeout."""
        return (
            self.finished == self.matches
            and self.verified == self.matches
            and not self.bot_errors
            and not self.defaults.get("TIMEOUT", 0)
        )

    def summary(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        del out["latencies_ms"], out["seated_s"]
        out.update(
            kb_per_match=round(self.kb_per_match, 1),
            moves_per_s=round(self.moves / self.wall_s, 1) if self.wall_s else 0,
            server_cpu_us_per_move=round(self.server_cpu_s / max(1, self.moves) * 1e6),
            bot_cpu_us_per_move=round(self.bot_cpu_s / max(1, self.moves) * 1e6),
            p50_ms=round(pct(self.latencies_ms, 0.5), 2),
            p99_ms=round(pct(self.latencies_ms, 0.99), 2),
            latencies=len(self.latencies_ms),
            seated=len(self.seated_s),
            seated_p50_s=round(pct(self.seated_s, 0.5), 2),
            seated_max_s=round(max(self.seated_s, default=float("nan")), 2),
        )
        return out


def build_seats() -> Path:
    """The Go kit's load generator, built (or brought up to date) by its build.sh."""
    done = subprocess.run(
        ["bash", str(GO_KIT / "build.sh")], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not SEATS.exists():
        raise RuntimeError(
            f"clients/go/build.sh failed (exit {done.returncode}):\n{done.stdout[-2000:]}"
            f"\n{done.stderr[-2000:]}"
        )
    return SEATS


class Sampler:
    """The server's RSS and open descriptors, every SAMPLE_S, keeping the peaks."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_rss_kb = 0
        self.peak_fds = 0
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> None:
        self.peak_rss_kb = max(self.peak_rss_kb, rss_kb(self.pid))
        self.peak_fds = max(self.peak_fds, open_fds(self.pid))

    async def _run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(SAMPLE_S)

    def __enter__(self) -> Sampler:
        self._task = asyncio.create_task(self._run())
        return self

    def __exit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()
        self.sample()


async def slow_reader(address: str, match_id: str) -> str:
    """Watch one match from its start, reading one message per SLOW_READ_S; how it went."""
    read = 0
    async with grpc.aio.insecure_channel(address) as channel:
        stub = spectator_service_grpc.SpectatorServiceStub(channel)
        call = stub.WatchMatch(
            spectator_service.WatchMatchRequest(match_id=match_id, from_start=True)
        )
        try:
            async for _ in call:
                read += 1
                await asyncio.sleep(SLOW_READ_S)
        except asyncio.CancelledError:
            call.cancel()
            return f"read {read} events of match {match_id}, still reading when the bots ended"
        except grpc.aio.AioRpcError as exc:
            return f"read {read} events, then {exc.code().name}: {exc.details()}"
    return f"read {read} events: the whole match"


def start_bots(
    address: str,
    created: list[match_service.CreateMatchResponse],
    processes: int,
    batch: bool,
    tmp: Path,
) -> list[subprocess.Popen[bytes]]:
    """Play every seat: whole matches per process, so each can time its matches' turns."""
    shares = [created[i::processes] for i in range(processes)]
    procs = []
    for i, share in enumerate(s for s in shares if s):
        tokens = tmp / f"tokens{i}.txt"
        tokens.write_text("".join(t + "\n" for c in share for t in c.seat_tokens))
        argv = [str(SEATS), "--address", address, "--tokens", str(tokens), "--seed", str(i + 1)]
        argv += ["--reconnect-window", f"{CONNECT_TIMEOUT_MS}ms"]  # as long as a match waits
        if batch:
            argv.append("--batch-events")
        with open(tmp / f"bots{i}.json", "wb") as out, open(tmp / f"bots{i}.stderr", "wb") as err:
            procs.append(subprocess.Popen(argv, stdout=out, stderr=err))
    return procs


async def run_bots(
    address: str,
    created: list[match_service.CreateMatchResponse],
    processes: int,
    batch: bool,
    tmp: Path,
) -> tuple[list[dict[str, object]], float]:
    """The reports of the bot processes, once all have ended, and their CPU seconds."""
    procs = start_bots(address, created, processes, batch, tmp)
    cpu = 0.0
    reports = []
    for i, proc in enumerate(procs):
        _, status, usage = await asyncio.to_thread(os.wait4, proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
        text = (tmp / f"bots{i}.json").read_text()
        try:
            reports.append(json.loads(text))
        except json.JSONDecodeError:
            stderr = (tmp / f"bots{i}.stderr").read_text()[-2000:]
            reports.append({"errors": [f"bot process {i} exit {proc.returncode}: {stderr}"]})
    return reports, cpu


def count_log(path: Path) -> tuple[int, collections.Counter[str], int]:
    """Moves, default actions by cause, and seat disconnections in one log."""
    moves, disconnects = 0, 0
    defaults: collections.Counter[str] = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            event = json.loads(line).get("event")
            if not event:
                continue  # the trailer
            kind, body = next(iter(event.items()))
            if kind in ("played", "passed"):
                moves += 1
                cause = body.get("default_cause")
                if cause:
                    defaults[cause.removeprefix("DEFAULT_CAUSE_")] += 1
            elif kind == "seat_disconnected":
                disconnects += 1
    return moves, defaults, disconnects


def verify_logs(paths: list[Path], key_file: Path, jobs: int) -> tuple[int, list[str]]:
    """``referee verify --public-key`` on every log, in ``jobs`` processes."""
    chunks = [paths[i::jobs] for i in range(jobs)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "verify", "--public-key", str(key_file)]
            + [str(p) for p in chunk],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
        )
        for chunk in chunks
        if chunk
    ]
    ok, failures = 0, []
    for proc in procs:
        out, _ = proc.communicate()
        for line in out.splitlines():
            if line.startswith("OK: ") and "signed by" in line and "not checked" not in line:
                ok += 1
            elif line.strip():
                failures.append(line)
    return ok, failures


async def play_variant(
    variant: str,
    matches: int,
    hands: int,
    bot_processes: int,
    tmp: Path,
    turn_ms: int,
    stderr: BinaryIO,
    server_args: Sequence[str] = (),
) -> Figures:
    fig = Figures(variant, matches, hands)
    fig.fd_limit = raise_open_files(FDS_PER_MATCH * matches + 4 * matches // bot_processes + 256)
    limits = ["--max-live-matches", str(matches), "--max-waiting-matches", str(matches)]
    limits += ["--keep-finished", str(max(matches, 1000))]
    proc, address = await start_server(
        serve_argv(tmp / "logs", tmp / "state", *limits, *server_args), stderr=stderr
    )
    metadata = organiser_metadata(tmp / "state")
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = match_service_grpc.MatchServiceStub(channel)
            info = await stub.GetServerInfo(match_service.GetServerInfoRequest())
            key_file = tmp / "signing-key.pub"
            key_file.write_text(info.signing_public_key + "\n")
            await asyncio.sleep(0.5)  # let start-up settle before the reference
            fig.idle_rss_kb, fig.idle_fds = rss_kb(proc.pid), open_fds(proc.pid)
            with Sampler(proc.pid) as sampler:
                started = time.perf_counter()
                created = await create_matches(
                    address,
                    metadata,
                    matches,
                    hands,
                    common.TimeControl(turn_time_ms=turn_ms, connect_timeout_ms=CONNECT_TIMEOUT_MS),
                    seed_prefix=f"thousand-{variant}",
                )
                fig.create_s = time.perf_counter() - started
                fig.waiting_rss_kb = rss_kb(proc.pid)
                watcher = (
                    asyncio.create_task(slow_reader(address, created[0].match_id))
                    if variant == "slow"
                    else None
                )
                cpu0 = cpu_seconds(proc.pid)
                started = time.perf_counter()
                reports, fig.bot_cpu_s = await run_bots(
                    address, created, bot_processes, variant == "batch", tmp
                )
                fig.wall_s = time.perf_counter() - started
                fig.server_cpu_s = cpu_seconds(proc.pid) - cpu0
            fig.peak_rss_kb, fig.peak_fds = sampler.peak_rss_kb, sampler.peak_fds
            if watcher is not None:
                if not watcher.done():
                    watcher.cancel()
                fig.slow_reader = await watcher
            listed = await stub.ListMatches(match_service.ListMatchesRequest(), metadata=metadata)
            fig.finished = sum(m.status == common.MATCH_STATUS_FINISHED for m in listed.matches)
    finally:
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    warnings: collections.Counter[str] = collections.Counter()
    for report in reports:
        fig.bot_errors += [str(e) for e in report.get("errors", [])]  # type: ignore[attr-defined]
        warnings.update(report.get("warnings") or {})  # type: ignore[arg-type]
        fig.latencies_ms += [us / 1000 for us in report.get("latencies_us") or []]  # type: ignore[attr-defined]
        fig.seated_s += [ms / 1000 for ms in report.get("seated_ms") or [] if ms >= 0]  # type: ignore[attr-defined]
    fig.bot_warnings = dict(warnings)
    logs = sorted((tmp / "logs").glob("*.jsonl"))
    defaults: collections.Counter[str] = collections.Counter()
    for path in logs:
        moves, found, disconnects = count_log(path)
        fig.moves += moves
        defaults.update(found)
        fig.disconnects += disconnects
    fig.defaults = dict(defaults)
    fig.verified, fig.verify_failures = verify_logs(logs, key_file, jobs=2)
    return fig


def show(fig: Figures) -> str:
    s = fig.summary()
    mb = 1024
    lines = [
        f"== {fig.variant}: {fig.matches} matches at once, {fig.hands} hand(s) each, "
        f"turn limit 5 s, Go pusoy-seats bots",
        f"  finished {fig.finished}/{fig.matches}, logs verified with the server's key "
        f"{fig.verified}/{fig.matches}, bot errors {len(fig.bot_errors)}",
        f"  default actions in the logs: {fig.defaults or 'none'}; seat disconnections "
        f"{fig.disconnects}; bot warnings {fig.bot_warnings or 'none'}",
        f"  server RSS: idle {fig.idle_rss_kb / mb:.1f} MB (reference), all waiting "
        f"{fig.waiting_rss_kb / mb:.1f} MB, peak {fig.peak_rss_kb / mb:.1f} MB -> "
        f"{fig.kb_per_match:.0f} KB per live match",
        f"  server fds: idle {fig.idle_fds} (reference), peak {fig.peak_fds} "
        f"(soft limit {fig.fd_limit})",
        f"  {fig.moves} moves in {fig.wall_s:.1f} s: {s['moves_per_s']} moves/s; server CPU "
        f"{s['server_cpu_us_per_move']} us/move ({fig.server_cpu_s:.1f} s), bots' CPU "
        f"{s['bot_cpu_us_per_move']} us/move",
        f"  action -> next prompt as the bots see it: p50 {s['p50_ms']} ms, "
        f"p99 {s['p99_ms']} ms ({s['latencies']} turns)",
        f"  creating the matches took {fig.create_s:.1f} s; seats seated {s['seated']}/"
        f"{4 * fig.matches}, the Welcome after p50 {s['seated_p50_s']} s, at most "
        f"{s['seated_max_s']} s",
        f"  wall time of the whole run (start, create, play, verify): {fig.total_s:.0f} s",
    ]
    if fig.slow_reader:
        lines.append(f"  slow reader: {fig.slow_reader}")
    for problem in (fig.bot_errors + fig.verify_failures)[:10]:
        lines.append(f"  PROBLEM: {problem[:300]}")
    return "\n".join(lines)


def run(
    matches: int,
    variants: list[str],
    hands: int,
    bot_processes: int,
    turn_ms: int = 5000,
    keep: Path | None = None,
    server_args: Sequence[str] = (),
) -> list[Figures]:
    """Each variant on a fresh server; the figures (printed as they come)."""
    build_seats()
    out = []
    for variant in variants:
        with tempfile.TemporaryDirectory(prefix=f"thousand-{variant}-") as d:
            tmp = Path(d) if keep is None else keep / variant
            tmp.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            with open(tmp / "server.stderr", "wb") as stderr:
                fig = asyncio.run(
                    play_variant(
                        variant, matches, hands, bot_processes, tmp, turn_ms, stderr, server_args
                    )
                )
            fig.total_s = time.perf_counter() - started
        print(show(fig), flush=True)
        out.append(fig)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=1000)
    ap.add_argument("--variant", choices=(*VARIANTS, "all"), default="all")
    ap.add_argument("--hands", type=int, default=1, help="hands per match (default 1)")
    ap.add_argument(
        "--bot-processes", type=int, default=4, help="Go bot processes sharing the seats"
    )
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--keep", type=Path, help="keep the logs and files in this folder")
    ap.add_argument(
        "--server-arg", action="append", default=[], help="pass this to referee serve (repeat)"
    )
    args = ap.parse_args()
    variants = list(VARIANTS) if args.variant == "all" else [args.variant]
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {os.cpu_count()} cores", flush=True)
    figures = run(
        args.matches,
        variants,
        args.hands,
        args.bot_processes,
        keep=args.keep,
        server_args=args.server_arg,
    )
    if args.json:
        args.json.write_text(json.dumps([f.summary() for f in figures], indent=1))
    sys.exit(0 if all(f.ok for f in figures) else 1)


if __name__ == "__main__":
    main()
