"""``referee ladder run``: the matchmaker, the worker processes and the lobby, together.

One process keeps the queue (``referee.ladder.matchmaker``) and starts the workers, one
per core by default, each a process of its own with its own embedded referee
(``python -m referee.ladder.worker``): a match's referee, its built-in bots and its
log's writing stay on that worker's core, so one ladder uses every core. With
``[workers] backend = "ray"`` there is one worker process, Ray's driver: it plays
``count`` matches at once as Ray tasks (``referee.ladder.play.ray_backend``). A worker
that dies is started again; the matches it held come back to the queue when their leases
run out. Each worker dies with this process (``PR_SET_PDEATHSIG``), so a ladder killed
outright leaves nothing playing; started again, it goes on where the database says.

With ``[lobby] address``, this process also holds a referee with the lobby there:
remote bots join it with their team's key (``referee.ladder.lobby``), and it plays
their matches (at most a few at once) while they are online.

On a ladder shared by several machines (PostgreSQL), the others run ``referee ladder
run --no-matchmaker``: workers only, claiming from the same queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys

import structlog

from referee.ladder.config import LadderConfig
from referee.ladder.errors import LadderError
from referee.ladder.jails import ladder_support
from referee.ladder.keys import KeyGuard
from referee.ladder.lobby import LadderLobby
from referee.ladder.matchmaker import Matchmaker
from referee.ladder.play import LocalTables
from referee.ladder.store import LadderStore
from referee.ladder.worker import Worker
from referee.sandbox import Support
from referee.table.referees import RefereeUnavailable, state_signer
from referee.tournament.backends import RayNotInstalled, require_ray

log = structlog.get_logger("referee.ladder.run")

TICK_S = 1.0
RESTART_PAUSE_S = (1.0, 30.0)
"""A worker that died is started again after a pause, doubled each time it dies early."""
STOP_GRACE_S = 10.0
LOBBY_SLOTS = 4


def prepare(config: LadderConfig) -> LadderStore:
    """The folder (private), the database at the newest schema, the house's anchors and
    the log signing key: everything the workers open without making."""
    config.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for sub in (config.logs_dir, config.stderr_dir, config.work_dir, config.archives_dir):
        sub.mkdir(mode=0o700, parents=True, exist_ok=True)
    config.versions_dir.mkdir(mode=0o711, parents=True, exist_ok=True)
    store = LadderStore.open(config.database)
    for name in config.anchors:
        store.builtin_version(name)
    state_signer(config.state_dir)
    return store


class WorkerProcess:
    """One worker process, started again when it dies (``slots``: a Ray worker's
    matches at once)."""

    def __init__(self, config: LadderConfig, name: str, log_level: str, slots: int = 0) -> None:
        self.config = config
        self.name = name
        self.log_level = log_level
        self.slots = slots
        self.proc: asyncio.subprocess.Process | None = None
        self.starts = 0

    def argv(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "referee.ladder.worker",
            str(self.config.source),
            self.name,
            "--parent",
            str(os.getpid()),
            "--log-level",
            self.log_level,
            "--slots",
            str(self.slots),
        ]

    async def keep(self, stop: asyncio.Event) -> None:
        pause = RESTART_PAUSE_S[0]
        errors = self.config.work_dir / f"{self.name}.stderr"
        while not stop.is_set():
            self.starts += 1
            err = os.open(errors, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                self.proc = await asyncio.create_subprocess_exec(
                    *self.argv(), stdin=asyncio.subprocess.DEVNULL, stdout=err, stderr=err
                )
            finally:
                os.close(err)
            waiter = asyncio.create_task(self.proc.wait())
            stopping = asyncio.create_task(stop.wait())
            started = asyncio.get_running_loop().time()
            await asyncio.wait([waiter, stopping], return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if stop.is_set():
                await self.terminate(waiter)
                return
            code = waiter.result()
            log.warning("worker ended; starting it again", worker=self.name, code=code)
            if asyncio.get_running_loop().time() - started > 60:
                pause = RESTART_PAUSE_S[0]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)
            pause = min(pause * 2, RESTART_PAUSE_S[1])

    async def terminate(self, waiter: asyncio.Task[int]) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.shield(waiter), STOP_GRACE_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await waiter


class LadderRun:
    """``await run(stop)``: until ``stop`` is set (SIGTERM, SIGINT)."""

    def __init__(
        self,
        config: LadderConfig,
        *,
        workers: int | None = None,
        matchmaker: bool = True,
        log_level: str = "info",
        support: Support | None = None,
        seed: str | None = None,
    ) -> None:
        self.config = config
        self.workers = config.worker_count() if workers is None else workers
        self.matchmaking = matchmaker
        self.log_level = log_level
        self.support = ladder_support(config.folder, support)  # refuses without a jail
        self.on_ray = config.backend == "ray"
        if self.on_ray:
            try:
                require_ray('[workers] backend = "ray"')
            except RayNotInstalled as exc:
                raise LadderError(str(exc)) from None
        self.rng = random.Random(seed)
        self.store: LadderStore | None = None
        self.lobby: LadderLobby | None = None
        self.lobby_address = ""
        self.ready = asyncio.Event()
        self.processes: list[WorkerProcess] = []

    async def run(self, stop: asyncio.Event) -> None:
        store = self.store = await asyncio.to_thread(prepare, self.config)
        tasks: list[asyncio.Task[None]] = []
        tables: LocalTables | None = None
        try:
            if self.config.lobby_address:  # first: a port in use stops the run before any worker
                tables = LocalTables(
                    self.config.lobby_address,
                    self.config.work_dir / "lobby",
                    state_signer(self.config.state_dir),
                    self.support,
                    self.config.bot_limits,
                    slots=LOBBY_SLOTS,
                )
                try:
                    await tables.start()
                except RefereeUnavailable as exc:
                    raise LadderError(self._lobby_failed(exc)) from None
                assert tables.referee is not None and tables.referee.lobby is not None
                self.lobby = LadderLobby(
                    store,
                    tables.referee.lobby,
                    KeyGuard(),
                    self.config.team_limits,
                    insecure=self.config.lobby_insecure,
                )
                self.lobby_address = tables.address
                worker = Worker(
                    "lobby",
                    self.config,
                    store,
                    tables.backend,
                    live_address=tables.address,
                    slots=LOBBY_SLOTS,
                    online=self.lobby.online,
                    lobby_names=self.lobby.names,
                )
                tasks.append(asyncio.create_task(worker.run(stop)))
            host = os.uname().nodename.split(".")[0][:40]
            if self.on_ray:  # one driver, every match a Ray task
                self.processes.append(
                    WorkerProcess(self.config, f"{host}-ray", self.log_level, self.workers)
                )
            else:
                for i in range(self.workers):
                    self.processes.append(
                        WorkerProcess(self.config, f"{host}-w{i + 1}", self.log_level)
                    )
            tasks.extend(asyncio.create_task(p.keep(stop)) for p in self.processes)
            if self.matchmaking:
                tasks.append(asyncio.create_task(self._matchmake(stop)))
            self.ready.set()
            await asyncio.gather(*tasks)
        finally:
            stop.set()
            for task in tasks:
                if not task.done():
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await asyncio.wait_for(task, STOP_GRACE_S + 5)
            if tables is not None:
                await tables.stop()
            store.close()

    def _lobby_failed(self, exc: RefereeUnavailable) -> str:
        where = f"[lobby] address = {self.config.lobby_address!r} in {self.config.source.name}"
        if "cannot listen" not in str(exc):
            return f"the lobby ({where}): {exc}"
        return (
            f"the lobby cannot listen on {self.config.lobby_address} ({where}): is another "
            "ladder or referee using that port? Stop it, or give the lobby another address"
        )

    async def _matchmake(self, stop: asyncio.Event) -> None:
        assert self.store is not None
        maker = await asyncio.to_thread(Matchmaker, self.config, self.store, self.rng)
        try:
            while not stop.is_set():
                online = self.lobby.online() if self.lobby is not None else None
                try:
                    await asyncio.to_thread(maker.tick, online)
                except Exception:  # the database away a moment: the next tick tries again
                    log.exception("matchmaking failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TICK_S)
        finally:
            if maker.first_scores is not None:  # runs being played stop; resumed next start
                maker.first_scores.stop()


def run_ladder(
    config: LadderConfig,
    *,
    workers: int | None = None,
    matchmaker: bool = True,
    metrics: str | None = None,
    log_level: str = "info",
    seed: str | None = None,
) -> int:
    """The command's body: runs until SIGTERM or SIGINT."""
    from referee.ladder.metrics import LadderMetrics
    from referee.server.metrics import MetricsEndpoint

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        ladder = LadderRun(
            config, workers=workers, matchmaker=matchmaker, log_level=log_level, seed=seed
        )
        runner = asyncio.create_task(ladder.run(stop))
        ready = asyncio.create_task(ladder.ready.wait())
        await asyncio.wait([runner, ready], return_when=asyncio.FIRST_COMPLETED)
        if runner.done():
            ready.cancel()
            await runner  # its error
            return
        endpoint = None
        if metrics is not None:
            assert ladder.store is not None
            endpoint = MetricsEndpoint(LadderMetrics(ladder.store), metrics)
            await endpoint.start()
        lobby = f"; remote bots join at {ladder.lobby_address}" if ladder.lobby_address else ""
        shown = f"; metrics at http://{endpoint.address}/metrics" if endpoint else ""
        where = (
            f"matches on Ray ({config.ray_address or 'a Ray of its own'}), {ladder.workers} at once"
            if ladder.on_ray
            else f"{ladder.workers} worker process{'es' * (ladder.workers != 1)}"
        )
        print(
            f"Ladder {config.name!r} running: {where}, jails: {ladder.support.level.describe()}"
            f"{lobby}{shown}. Stop with Ctrl-C.",
            flush=True,
        )
        try:
            await runner
        finally:
            if endpoint is not None:
                await endpoint.stop()

    asyncio.run(main())
    return 0


__all__ = ["LadderRun", "WorkerProcess", "prepare", "run_ladder"]
