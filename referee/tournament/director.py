"""The tournament director: plays the schedule through a referee, resumably.

The referee is embedded in this process by default, or a running ``referee serve``
(``referee.table.referees``). One asyncio task dispatches matches in schedule order,
up to the concurrency limit (and, for a remote bot, up to the number of matches it said
it can play at once). Each match is one task that plays it at a table
(``referee.table``: create the match, seat its four bots, notice a bot that ends early,
wait for the end, stop the bots, collect the log), then records the result:

1. the match log is moved (or, from a referee server, fetched) into ``logs/``;
2. its line is appended to results.jsonl (fsynced) and its rows to results.csv;
3. standings.json and standings.csv are rewritten (atomically).

With ``[execution] backend = "ray"`` the matches are played by Ray tasks on a cluster
instead (``referee.tournament.backends``): the same table code runs on a worker, and the
log it sends back is written to ``logs/``, verified and recorded here exactly as above.

Only results.jsonl is trusted on resume; results.csv and the standings are rebuilt from
it. Log verification, the one costly step, runs in a worker process so that the event
loop, which hosts the referee and the built-in bots, keeps serving the other matches.

A director killed at any point loses at most the matches that were being played: on the
next run with the same configuration and folder, ``prepare`` drops their partial logs,
kills the bot processes the dead run left (``ProcessLedger``), and plays them again;
matches with a results line are never played twice.

Fair play (issue 10) has two hooks here, each in its own module: the sandboxes of the
spawned bots (``referee.tournament.isolation``, handed to every table) and the
disqualification policy (``referee.tournament.disqualify``: who sits in a seat, and
after each match whether a bot is out).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from referee.client.tokens import TokenError, read_token
from referee.log.summary import SeatSummary
from referee.log.verify import verify_log
from referee.rules import new_seed
from referee.table.bots import EmptySeat, Seat
from referee.table.procs import ProcessLedger
from referee.table.referees import (
    Lobby,
    LocalReferee,
    Referee,
    RefereeUnavailable,
    ServerReferee,
    state_signer,
)
from referee.table.table import BOT_EXIT_GRACE_S, BotExit, SeatReport, Table
from referee.tournament.backends import MatchJob, RayBackend, RayNotInstalled, require_ray
from referee.tournament.config import (
    Backend,
    RemoteDeals,
    Seatings,
    TournamentConfig,
    identity_changes,
)
from referee.tournament.disqualify import Disqualifier
from referee.tournament.isolation import Isolation, SandboxUnavailable
from referee.tournament.progress import Counts, Progress
from referee.tournament.ratings import (
    PAIRWISE_UNIT,
    PairRow,
    StandingRow,
    Standings,
    pairwise_csv,
    replay,
    table_csv,
)
from referee.tournament.results import (
    STATUS_FAILED,
    MatchResult,
    ResultsFiles,
    SeatResult,
    csv_rows,
    write_atomic,
)
from referee.tournament.schedule import MatchSpec, build_schedule
from referee.tournament.sprt import SequentialTest, for_schedule

log = structlog.get_logger("referee.tournament")

STATE_FORMAT = 1
PROGRESS_TICK_S = 1.0
"""How often the progress line is redrawn while matches run."""


class TournamentError(Exception):
    """The tournament cannot start (the message says why and what to do)."""


@dataclasses.dataclass(frozen=True)
class TournamentSummary:
    folder: Path
    total: int
    done: int
    failed: int
    played_now: int
    standings: list[StandingRow]
    seconds: float
    pairwise: list[PairRow] = dataclasses.field(default_factory=list)
    test: SequentialTest | None = None
    """The gauntlet's sequential test, when configured."""

    @property
    def complete(self) -> bool:
        """Every match is recorded, or the sequential test decided (nothing left to play)."""
        return self.done == self.total or (self.test is not None and self.test.decision is not None)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a dry run found: the schedule's size and what a run would play."""

    matches: int
    groups: int
    recorded: int
    to_play: int
    resuming: bool
    test: SequentialTest | None


def _remote_warnings(config: TournamentConfig) -> list[str]:
    """Remote bots run outside any sandbox: say what that means for duplicate deals."""
    remote = [b.name for b in config.remote_bots]
    if not remote or config.seatings is Seatings.NONE:
        return []
    if config.remote_deals is RemoteDeals.UNSEEN:
        return [
            f"remote bots ({', '.join(remote)}) are not sandboxed; they are dealt only deals "
            'they have not seen (remote_deals = "unseen"), so the luck of the cards does '
            "not cancel out within their groups"
        ]
    return [
        f"remote bots ({', '.join(remote)}) are not sandboxed and see each deal of their "
        f"groups {config.seatings.per_group} times: they can remember it and know every "
        'hand in the later matches of a group. Set [tournament] remote_deals = "unseen" '
        "to deal them only deals they have not seen"
    ]


def _log_verifies(path: str, public_key: str = "") -> bool:
    """Runs in the verification worker: the rules, and the signature of ``public_key``
    (base64) when given."""
    key = base64.b64decode(public_key) if public_key else None
    return verify_log(Path(path), key).ok


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _result_of(spec: MatchSpec, **outcome: Any) -> MatchResult:
    """A result that carries the spec's identity fields, so a finished and a failed match agree."""
    return MatchResult(
        match_id=spec.match_id,
        index=spec.index,
        group=spec.group,
        round=spec.round,
        table=spec.table,
        seating=spec.seating,
        seed=spec.seed,
        **outcome,
    )


def _sandbox_fields(seat: SeatReport) -> dict[str, Any]:
    """A seat's result fields from what its sandbox measured (none when it had none)."""
    out: dict[str, Any] = {}
    if seat.sandbox is not None:
        out["breach"] = seat.sandbox.breach.value if seat.sandbox.breach else ""
        out["cpu_s"] = seat.sandbox.cpu_s
        out["memory_mb"] = seat.sandbox.memory_peak_mb
    if seat.turns_cpu_ms is not None:
        out["cpu_turns_ms"], out["cpu_turn_max_ms"] = seat.turns_cpu_ms
    return out


class Tournament:
    """``prepare()`` checks the folder and works out what is left; ``await run()`` plays it."""

    def __init__(
        self,
        config: TournamentConfig,
        *,
        output: Path | None = None,
        concurrency: int | None = None,
        address: str | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.config = config
        self.folder = Path(output) if output is not None else config.output
        self.concurrency = concurrency or config.concurrency
        self.listen = address or config.referee.address
        self.progress = progress or Progress(sys.stderr, tty=False)
        self.address = ""
        """The referee's address once it is listening (remote bots connect there)."""
        self.public_key = ""
        """The key the referee signs logs with (base64), once it is started."""
        self.ready = asyncio.Event()
        self.master_seed = ""
        self.schedule: list[MatchSpec] = []
        self.pending: list[MatchSpec] = []
        self.results: dict[str, MatchResult] = {}
        self.files = ResultsFiles(self.folder)
        self.work = self.folder / "work"
        self.ledger = ProcessLedger(self.work / "processes.json")
        self.group_sizes: dict[int, int] = {}
        self.standings: Standings | None = None
        self.counts = Counts(total=0)
        self.referee: Referee | None = None
        self.test: SequentialTest | None = None
        """The gauntlet's sequential test ([sprt]); the run stops when it decides."""
        self._remote_busy: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._prepared = False
        self._pool: ProcessPoolExecutor | None = None
        self._ray: RayBackend | None = None
        """The Ray backend, when matches are played on a cluster; None: at tables here."""
        self.isolation = Isolation(config, self.folder, self.concurrency)
        """hook: the spawned bots' sandboxes (each table gets it)."""
        self.disqualifier = Disqualifier(config.disqualify)
        """hook: who sits in a disqualified bot's seat; who is out after each match."""
        self.warnings: list[str] = []
        """To print before the first match (``preflight``)."""

    # -- before anything starts ---------------------------------------------------

    def prepare(self) -> None:
        """Check the folder against the configuration and clean up after a crashed run.

        Raises TournamentError when the folder holds another tournament (or something
        else altogether)."""
        cfg = self.config
        folder = self.folder
        self.warnings = self.preflight()  # before the folder is touched
        state_path = folder / "tournament.json"
        identity = cfg.identity()
        digest = cfg.identity_hash()
        state = self._check_folder()
        if state is not None:
            self.master_seed = str(state["master_seed"])
        else:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.chmod(0o700)  # private whatever the umask: live logs hold every hand
            self.master_seed = cfg.seed or new_seed()
            state = {
                "format": STATE_FORMAT,
                "name": cfg.name,
                "config_file": str(cfg.source),
                "config_hash": digest,
                "identity": identity,
                "master_seed": self.master_seed,
                "matches": cfg.total_matches,
                "created": _now(),
            }
            write_atomic(state_path, json.dumps(state, indent=2, ensure_ascii=False) + "\n")
        self.schedule = build_schedule(cfg, self.master_seed)
        ids = {s.match_id for s in self.schedule}
        for spec in self.schedule:
            self.group_sizes[spec.group] = self.group_sizes.get(spec.group, 0) + 1

        killed = self.ledger.reap_leftovers()
        if killed:
            log.warning("stopped bots left by an earlier run", groups=killed)
        loaded = self.files.load()
        self._check_recorded(loaded, ids)
        self.results = {r.match_id: r for r in loaded}
        # Matches that were being played when an earlier run stopped start again.
        shutil.rmtree(self.work / "referee", ignore_errors=True)
        logs = folder / "logs"
        if logs.is_dir():
            for path in logs.glob("*.jsonl"):
                if path.stem not in self.results:
                    path.unlink()
            for path in logs.glob("*.jsonl.part"):  # a log from a worker, half written
                path.unlink()
        self.pending = [s for s in self.schedule if s.match_id not in self.results]
        self.disqualifier.replay(loaded)
        self.test = for_schedule(cfg, self.schedule, loaded)
        if self.test is not None and self.test.decision is not None:
            self.pending = []  # decided in an earlier run: the tournament is over
        self.standings = replay(
            [b.name for b in cfg.bots], cfg.rules.scoring, self.group_sizes, loaded
        )
        self.counts = Counts(
            total=len(self.schedule),
            done=len(self.results),
            failed=sum(not r.finished for r in loaded),
            test=self.test.status() if self.test is not None else "",
        )
        self._write_standings()
        self._prepared = True

    def _check_folder(self) -> dict[str, Any] | None:
        """The folder's tournament.json when it holds this tournament, None when the
        folder is new or empty; changes nothing. Raises TournamentError when it holds
        another tournament (naming what changed) or something else altogether."""
        folder = self.folder
        state_path = folder / "tournament.json"
        if not state_path.exists():
            if folder.exists() and any(folder.iterdir()):
                raise TournamentError(
                    f"{folder} is not empty and holds no tournament.json: give an empty or "
                    "new folder (--out)"
                )
            return None
        try:
            state: dict[str, Any] = json.loads(state_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise TournamentError(f"{state_path} is damaged ({exc})") from None
        if state.get("config_hash") != self.config.identity_hash():
            changed = identity_changes(state.get("identity", {}), self.config.identity())
            raise TournamentError(
                f"{folder} holds a tournament with a different configuration "
                f"(changed: {', '.join(changed) or 'format version'}). Run the "
                "configuration it was started with to resume it, or give another "
                "output folder (--out) to start a new tournament."
            )
        return state

    def _check_recorded(self, loaded: list[MatchResult], ids: set[str]) -> None:
        if any(r.match_id not in ids for r in loaded):
            raise TournamentError(f"{self.files.jsonl_path} lists matches not in the schedule")

    def preflight(self) -> list[str]:
        """hook: the warnings to print before anything starts (remote bots and duplicate
        deals, a sandbox that cannot work here); TournamentError when the configuration
        requires what this machine cannot do. Touches no file."""
        try:
            return _remote_warnings(self.config) + self.isolation.check()
        except SandboxUnavailable as exc:
            raise TournamentError(str(exc)) from None

    # -- hook: --dry-run -----------------------------------------------------------

    async def dry_run(self) -> Plan:
        """Every check a run makes before its first match, changing nothing: the folder
        against the configuration (the resume identity check), the recorded results
        against the schedule, the referee (its listen address can be bound, or the
        referee server answers), and the sandbox (``preflight``, whose warnings it keeps).
        Raises TournamentError like ``prepare`` and ``run``."""
        self.warnings = self.preflight()
        state = self._check_folder()
        seed = str(state["master_seed"]) if state is not None else self.config.seed or "dry-run"
        schedule = build_schedule(self.config, seed)
        loaded = self.files.read() if state is not None else []
        self._check_recorded(loaded, {s.match_id for s in schedule})
        test = for_schedule(self.config, schedule, loaded)
        if self.config.execution.backend is Backend.RAY:
            try:
                require_ray()
            except RayNotInstalled as exc:
                raise TournamentError(str(exc)) from None
        with tempfile.TemporaryDirectory(prefix="referee-dry-run-") as scratch:
            referee = self._make_referee(Path(scratch) / "logs", Path(scratch) / "state")
            try:
                await referee.start()
            except RefereeUnavailable as exc:
                raise TournamentError(str(exc)) from None
            await referee.stop()
        recorded = {r.match_id for r in loaded}
        decided = test is not None and test.decision is not None
        return Plan(
            matches=len(schedule),
            groups=len({s.group for s in schedule}),
            recorded=len(recorded),
            to_play=0 if decided else sum(s.match_id not in recorded for s in schedule),
            resuming=state is not None,
            test=test,
        )

    def _make_referee(self, log_dir: Path, state_dir: Path) -> Referee:
        """The referee server named by the config (with its organiser token), or one in
        this process that logs to ``log_dir`` and keeps its signing key in ``state_dir``."""
        ref = self.config.referee
        if not ref.server:
            return LocalReferee(
                self.listen,
                log_dir,
                state_dir,
                tls=ref.server_tls,
                insecure=ref.insecure,
                bot_listen=self.isolation.listen_addresses(),
            )
        assert ref.organiser_token_file is not None  # the config requires it
        try:
            token = read_token(ref.organiser_token_file, private=True)
        except TokenError as exc:
            raise TournamentError(str(exc)) from None
        return ServerReferee(
            ref.server, token, organiser_address=ref.organiser_address, tls=ref.client_tls
        )

    # -- the run ------------------------------------------------------------------

    async def run(self) -> TournamentSummary:
        """Play every match not yet recorded; the final standings are returned."""
        if not self._prepared:
            self.prepare()
        started = time.monotonic()
        played_before = self.counts.done
        if self.config.execution.backend is Backend.RAY:
            await self._run_on_ray()
            return self._summary(started, played_before)
        self.referee = self._make_referee(self.work / "referee", self.folder / "state")
        try:
            await self.referee.start()
            await self.isolation.start(self.referee.address, local=not self.config.referee.server)
        except (RefereeUnavailable, OSError) as exc:
            await self.isolation.close()
            raise TournamentError(str(exc)) from None
        self.address = self.referee.address
        self.public_key = self.referee.public_key
        if self.public_key:
            write_atomic(self.folder / "signing-key.pub", self.public_key + "\n", sync=False)
        for warning in self.warnings:
            self.progress.message(f"warning: {warning}")
        lobby = self.referee.lobby
        if lobby is not None:
            lobby.tournament = self.config.name
            for bot in self.config.remote_bots:
                lobby.register(bot.name, bot.key, bot.max_matches)
                self._remote_busy[bot.name] = 0
            lobby.add_listener(self._wake.set)
        self.files.open()
        if self.config.referee.verify_logs and self.pending:
            # "spawn": never fork a process that runs gRPC threads.
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        self.ready.set()
        ticker = asyncio.create_task(self._tick(), name="progress")
        if self.config.remote_bots:
            self.progress.message(
                f"referee listening on {self.address}; remote bots connect to its lobby there"
            )
        try:
            await self._dispatch(lobby)
        except RefereeUnavailable as exc:
            raise TournamentError(
                f"{exc}. The matches finished so far are saved: run the same command again "
                "(with a referee that answers) to play the rest."
            ) from None
        finally:
            ticker.cancel()
            self.files.close()
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
            if lobby is not None:
                lobby.close("the tournament is over")
            await self.referee.stop()
            if self.referee.metrics is not None:  # this run's figures, as /metrics has them
                self.referee.metrics.write(self.folder / "metrics.prom")
            await self.isolation.close()
        return self._summary(started, played_before)

    async def _run_on_ray(self) -> None:
        """``run`` with the Ray backend: no referee here (each task runs its own), no
        lobby (refused by the configuration); the same dispatch and recording."""
        execution = self.config.execution
        try:
            # The workers' referees sign with keys of their own; each log is signed again
            # with the tournament's key when it arrives, as a local run signs it.
            signer = state_signer(self.folder / "state")
        except RefereeUnavailable as exc:
            raise TournamentError(str(exc)) from None
        self.public_key = signer.public_key_text
        write_atomic(self.folder / "signing-key.pub", self.public_key + "\n", sync=False)
        self._ray = RayBackend(execution, on_retry=self._retry_notice, signer=signer)
        try:
            if self.pending:  # nothing left to play: no cluster needed
                self._ray.start()
        except (RayNotInstalled, RefereeUnavailable) as exc:
            raise TournamentError(str(exc)) from None
        self.files.open()
        if self.pending:
            # Every log of the cluster is verified here: with no referee or bots in this
            # process, each core can verify one (a cluster's logs arrive faster than one
            # process verifies them: about 0.1 s a one-hand log).
            self._pool = ProcessPoolExecutor(
                max(1, os.cpu_count() or 1), mp_context=multiprocessing.get_context("spawn")
            )
        self.ready.set()
        ticker = asyncio.create_task(self._tick(), name="progress")
        where = execution.address or "a Ray started on this machine"
        self.progress.message(f"playing matches on Ray ({where})")
        try:
            await self._dispatch(None)
        except RefereeUnavailable as exc:
            raise TournamentError(
                f"{exc}. The matches finished so far are saved: run the same command again "
                "(with a cluster that answers) to play the rest."
            ) from None
        finally:
            ticker.cancel()
            self.files.close()
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
            self._ray.stop()

    def _retry_notice(self, match_id: str, why: str, attempt: int) -> None:
        self.progress.message(
            f"{match_id}: {why}; playing it again from scratch (attempt {attempt})"
        )

    def _summary(self, started: float, played_before: int) -> TournamentSummary:
        final = self._write_standings(final=True)
        self.progress.close(self.counts, final[0] if final else None)
        return TournamentSummary(
            folder=self.folder,
            total=self.counts.total,
            done=self.counts.done,
            failed=self.counts.failed,
            played_now=self.counts.done - played_before,
            standings=final,
            seconds=time.monotonic() - started,
            pairwise=self.standings.pairwise() if self.standings is not None else [],
            test=self.test,
        )

    # -- hook: the progress line on a timer ------------------------------------------

    async def _tick(self) -> None:
        """Redraw the progress line every second (running matches, rate, ETA), not only
        when a match ends."""
        while True:
            await asyncio.sleep(PROGRESS_TICK_S)
            self.progress.update(self.counts, self._leader())

    # -- hook: the sequential test stops the run at the end of a deal group ------------

    def _test_decided(self) -> bool:
        return self.test is not None and self.test.decision is not None

    async def _dispatch(self, lobby: Lobby | None) -> None:
        queue = list(self.pending)
        running: dict[asyncio.Task[MatchResult], MatchSpec] = {}
        try:
            while queue or running:
                if self._test_decided():
                    break  # the matches still running are dropped (finally), as on Ctrl-C
                while queue and len(running) < self.concurrency:
                    spec = self._next_startable(queue, lobby)
                    if spec is None:
                        break
                    for name in self._remote_names(spec):
                        self._remote_busy[name] += 1
                    task = asyncio.create_task(self._play(spec), name=f"match {spec.match_id}")
                    running[task] = spec
                self.counts.running = len(running)
                self.progress.update(self.counts, self._leader())
                self._wake.clear()
                waiter = asyncio.create_task(self._wake.wait())
                timeout = 0.5 if queue and self.config.remote_bots else None
                done, _ = await asyncio.wait(
                    [*running, waiter], timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                waiter.cancel()
                for task in [t for t in running if t in done]:
                    spec = running.pop(task)
                    for name in self._remote_names(spec):
                        self._remote_busy[name] -= 1
                    self.counts.running = len(running)  # as the progress line shows it
                    self._record(task.result())
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
            self.counts.running = 0

    def _remote_names(self, spec: MatchSpec) -> list[str]:
        return [n for n in spec.bots if n in self._remote_busy]

    def _next_startable(self, queue: list[MatchSpec], lobby: Lobby | None) -> MatchSpec | None:
        """The first match whose remote bots can take a seat now (or have been waited for
        long enough); matches of local bots only are always startable."""
        if not self._remote_busy or lobby is None:
            return queue.pop(0)
        now = asyncio.get_running_loop().time()
        for i, spec in enumerate(queue):
            ready = True
            for name in self._remote_names(spec):
                if name in self.disqualifier.out:
                    continue  # hook: its replacement plays, nothing to wait for
                bot = lobby.bot(name)
                if bot.connection is not None:
                    ready = self._remote_busy[name] < bot.capacity
                else:
                    ready = now - bot.absent_since >= self.config.referee.lobby_wait_s
                if not ready:
                    break
            if ready:
                return queue.pop(i)
        return None

    def _leader(self) -> StandingRow | None:
        return self.standings.leader() if self.standings is not None else None

    # -- one match ------------------------------------------------------------------

    async def _play(self, spec: MatchSpec) -> MatchResult:
        """Play one match to its end; never raises but CancelledError."""
        started, t0 = _now(), time.monotonic()
        seats = [self._seat_of(name) for name in spec.bots]
        replaced = [self.disqualifier.replacement_name(name) for name in spec.bots]
        settings = self.config.match_settings(spec.seed, spec.bots)
        log_path = self.folder / "logs" / f"{spec.match_id}.jsonl"
        table: Table | None = None
        retries: tuple[str, ...] = ()
        try:
            if self._ray is not None:
                job = MatchJob(
                    spec.match_id,
                    settings,
                    tuple(seats),
                    self.config.match_timeout_s,
                    config=self.config,
                    folder=self.folder,
                )
                arrived = await self._ray.play(
                    job,
                    log_path=log_path,
                    stderr_path=lambda seat, name: self._stderr_path(spec, seat, name),
                )
                report, retries = arrived.report, arrived.retries
                notice = self._bot_exit_notice(spec)
                for seat in report.seats:
                    if seat.exit is not None:
                        notice(seat.exit)  # told on arrival: the worker cannot tell at once
            else:
                assert self.referee is not None
                table = Table(
                    self.referee,
                    on_exit=self._bot_exit_notice(spec),
                    ledger=self.ledger,
                    exit_grace_s=BOT_EXIT_GRACE_S,
                    tls=self.config.referee.client_tls,
                    sandbox=self.isolation if self.isolation.active else None,
                )
                report = await table.play(
                    settings,
                    seats,
                    label=spec.match_id,
                    log_path=lambda _: log_path,
                    stderr_path=lambda _, seat, name: self._stderr_path(spec, seat, name),
                    time_limit_s=self.config.match_timeout_s,
                )
            # The log is in logs/, signed with the tournament's key, whichever backend
            # played it; it is verified here (signature included) and recorded by _record.
            verify = self.config.referee.verify_logs
            verified = await self._verify(report.log_path) if verify else None
            return _result_of(
                spec,
                status=report.status,
                error=report.cancel_reason,
                referee_match_id=report.match_id,
                log=self._relative(report.log_path),
                hands=report.hands,
                verified=verified,
                started=started,
                duration_s=time.monotonic() - t0,
                retries=retries,
                seats=tuple(
                    SeatResult(
                        bot=spec.bots[r.seat],
                        summary=r.summary,
                        crashed=r.crashed,
                        exit_code=r.exit_code,
                        crash=r.exit.what if r.exit is not None else "",
                        stderr=self._relative(r.stderr_path),
                        replaced_by=replaced[r.seat],
                        **_sandbox_fields(r),
                    )
                    for r in report.seats
                ),
                final_hash=report.final_hash,
                signed_by=report.signed_by,
            )
        except (asyncio.CancelledError, RefereeUnavailable):
            raise  # not the match's fault: the tournament stops, and resumes it later
        except Exception as exc:
            log.exception("match failed", match_id=spec.match_id)
            return _result_of(
                spec,
                status=STATUS_FAILED,
                error=f"{type(exc).__name__}: {exc}",
                referee_match_id=table.match_id if table is not None else "",
                log="",
                hands=0,
                verified=None,
                started=started,
                duration_s=time.monotonic() - t0,
                retries=retries,
                seats=tuple(SeatResult(spec.bots[s], SeatSummary(seat=s)) for s in range(4)),
            )

    def _seat_of(self, name: str) -> Seat:
        """hook: the seat of a bot, or of its replacement once it is disqualified."""
        stand_in = self.disqualifier.stand_in(self.config.bot(name))
        if stand_in is None:
            reason = f"forfeited: {name} is disqualified ({self.disqualifier.out[name]})"
            return Seat(name, EmptySeat(reason))
        return Seat(name, stand_in.table_bot())

    def _stderr_path(self, spec: MatchSpec, seat: int, name: str) -> Path:
        return self.folder / "stderr" / spec.match_id / f"seat{seat}-{name}.txt"

    def _relative(self, path: Path | None) -> str:
        return "" if path is None else str(path.relative_to(self.folder))

    def _bot_exit_notice(self, spec: MatchSpec) -> Callable[[BotExit], None]:
        """A bot that ended before its match is told at once, above the progress line."""

        def notice(ended: BotExit) -> None:
            output = self._relative(ended.stderr_path)
            where = f"; its output: {output}" if output else ""
            self.progress.message(f"{spec.match_id}: {ended.headline}{where}")

        return notice

    async def _verify(self, path: Path) -> bool:
        """``referee verify`` on a log, in the worker process (inline if it broke)."""
        if self._pool is not None:
            try:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(
                    self._pool, _log_verifies, str(path), self.public_key
                )
            except BrokenProcessPool:
                log.warning("the verification worker died; verifying in-process")
                self._pool = None
        return _log_verifies(str(path), self.public_key)

    # -- recording ------------------------------------------------------------------

    def _record(self, result: MatchResult) -> None:
        result = self.disqualifier.judge(result)  # hook: is a bot out after this match?
        for sr in result.seats:
            if sr.disqualified:
                self.progress.message(f"{sr.bot} is disqualified: {sr.disqualified}")
        self.files.append(result)
        self.results[result.match_id] = result
        assert self.standings is not None
        self.standings.add(result)
        if self.test is not None:
            if self.test.add(result):
                self.progress.message(self.test.verdict_text() + "; stopping the tournament")
            self.counts.test = self.test.status()
        self.counts.done += 1
        self.counts.done_this_run += 1
        self.counts.failed += not result.finished
        self._write_standings()
        places = sorted(result.seats, key=lambda s: (s.summary.place or 9, s.summary.seat))
        text = f"{result.match_id} {result.status}"
        if result.finished:
            text += ": " + ", ".join(
                f"{s.summary.place}. {s.bot} {s.summary.total}" for s in places
            )
        elif result.error:
            text += f" ({result.error})"
        self.progress.match_done(text, self.counts, self._leader())

    def _write_standings(self, final: bool = False) -> list[StandingRow]:
        """standings.json and standings.csv from the results so far. The final table
        replays every result in schedule order."""
        assert self.standings is not None
        if final:
            self.standings = replay(
                [b.name for b in self.config.bots],
                self.config.rules.scoring,
                self.group_sizes,
                self.results.values(),
            )
        rows = self.standings.table()
        pairs = self.standings.pairwise([r.name for r in rows])
        doc: dict[str, Any] = {
            "tournament": self.config.name,
            "config_hash": self.config.identity_hash(),
            "final": final and (self.counts.done == self.counts.total or self._test_decided()),
            "matches": {
                "total": self.counts.total,
                "done": self.counts.done,
                "failed": self.counts.failed,
            },
            "scoring": self.config.rules.scoring.value,
            "rating": "openskill PlackettLuce (mu 25, sigma 25/3); one event per deal group; "
            "ordered by mu - 3 sigma",
            "updated": _now(),
            "bots": [r.to_json() for r in rows],
            "pairwise_unit": PAIRWISE_UNIT,
            "pairwise": [p.to_json() for p in pairs],
        }
        if self.test is not None:
            doc["sprt"] = self.test.to_json()
        write_atomic(
            self.folder / "standings.json",
            json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
            sync=False,
        )
        write_atomic(self.folder / "standings.csv", table_csv(rows), sync=False)
        write_atomic(self.folder / "pairwise.csv", pairwise_csv(pairs), sync=False)
        return rows


__all__ = [
    "Plan",
    "Tournament",
    "TournamentError",
    "TournamentSummary",
    "csv_rows",
]
