"""The tournament director: plays the schedule on a match backend, resumably.

The director keeps what makes a tournament: the folder, the schedule, the results
files, the standings and the sequential test. Matches are played by a backend
(``referee.tournament.backends``): at tables in this process around a referee (embedded
here by default, or a running ``referee serve``), or with ``[execution] backend = "ray"``
as Ray tasks on a cluster. ``referee.tournament.dispatch`` hands the backend the pending
matches in schedule order, each made a job only when it can start; each match the
backend gives back, whichever played it, is recorded here:

1. the match log is already in ``logs/``, signed with the tournament's key, verified;
2. its line is appended to results.jsonl (fsynced) and its rows to results.csv;
3. standings.json and standings.csv are rewritten (atomically).

Only results.jsonl is trusted on resume; results.csv and the standings are rebuilt
from it. A director killed at any point loses at most the matches being played: the
next run with the same configuration and folder (``prepare``) drops their partial logs,
kills the bot processes the dead run left (``ProcessLedger``), and plays them again;
matches with a results line are never played twice.

Fair play (issue 10) has two hooks, each in its own module: the sandboxes of the
spawned bots (``referee.tournament.isolation``, handed to every table) and the
disqualification policy (``referee.tournament.disqualify``: who sits in a seat, and
after each match whether a bot is out).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from referee.client.tokens import TokenError, read_token
from referee.files import write_atomic
from referee.llm.trace import release_group
from referee.rules import new_seed
from referee.table.bots import command_warnings
from referee.table.procs import ProcessLedger
from referee.table.referees import (
    LocalReferee,
    Referee,
    RefereeUnavailable,
    ServerReferee,
    state_signer,
)
from referee.table.table import BotExit
from referee.tournament.backends import (
    LocalBackend,
    MatchBackend,
    MatchJob,
    RayBackend,
    RayNotInstalled,
    require_ray,
)
from referee.tournament.config import Backend, TournamentConfig, identity_changes
from referee.tournament.dispatch import Dispatcher
from referee.tournament.disqualify import Disqualifier
from referee.tournament.isolation import Isolation, SandboxUnavailable, remote_warnings
from referee.tournament.progress import Counts, Progress
from referee.tournament.ratings import (
    PAIRWISE_UNIT,
    PairRow,
    StandingRow,
    Standings,
    pairwise_csv,
    rank_notes_json,
    replay,
    table_csv,
)
from referee.tournament.results import (
    MatchResult,
    ResultsFiles,
    timestamp,
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


def _now() -> str:
    return timestamp(datetime.now(UTC))


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
        self._prepared = False
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
        tokens = command_warnings((bot.name, bot.argv) for bot in self.config.bots)
        try:
            return remote_warnings(self.config) + tokens + self.isolation.check()
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
        dispatcher = Dispatcher(
            self.config, self.folder, self.pending, self.disqualifier, stop=self._test_decided
        )
        ray = self.config.execution.backend is Backend.RAY
        opened = self._on_ray() if ray else self._here(dispatcher)
        async with opened as backend:
            self.files.open()
            self.ready.set()
            ticker = asyncio.create_task(self._tick(backend), name="progress")
            try:
                await self._dispatch(backend, dispatcher)
            except RefereeUnavailable as exc:
                raise TournamentError(
                    f"{exc}. The matches finished so far are saved: run the same command "
                    f"again (with {'a cluster' if ray else 'a referee'} that answers) to "
                    "play the rest."
                ) from None
            finally:
                ticker.cancel()
                self.files.close()
        return self._summary(started, played_before)

    @contextlib.asynccontextmanager
    async def _here(self, dispatcher: Dispatcher) -> AsyncIterator[LocalBackend]:
        """The local backend, around the referee (in this process or a server) and the
        sandboxes, which the tournament keeps from start to end: remote bots meet in
        the referee's lobby, and its figures are written at the end."""
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
            dispatcher.open_lobby(lobby)
        backend = LocalBackend(
            self.referee,
            concurrency=self.concurrency,
            verify=self.config.referee.verify_logs,
            sandbox=(lambda _: self.isolation) if self.isolation.active else None,
            ledger=self.ledger,
            tls=self.config.referee.client_tls,
            on_bot_exit=self._bot_exited,
        )
        try:
            if self.pending:
                await backend.start()
            if self.config.remote_bots:
                self.progress.message(
                    f"referee listening on {self.address}; remote bots connect to its lobby there"
                )
            yield backend
        finally:
            await backend.stop()
            if lobby is not None:
                lobby.close("the tournament is over")
            await self.referee.stop()
            if self.referee.metrics is not None:  # this run's figures, as /metrics has them
                self.referee.metrics.write(self.folder / "metrics.prom")
            await self.isolation.close()

    @contextlib.asynccontextmanager
    async def _on_ray(self) -> AsyncIterator[RayBackend]:
        """The Ray backend: no referee here (each task runs its own), no lobby (refused
        by the configuration); the cluster is reached only when there is a match to play."""
        execution = self.config.execution
        try:
            # The workers' referees sign with keys of their own; each log is signed again
            # with the tournament's key when it arrives, as a local run signs it.
            signer = state_signer(self.folder / "state")
        except RefereeUnavailable as exc:
            raise TournamentError(str(exc)) from None
        self.public_key = signer.public_key_text
        write_atomic(self.folder / "signing-key.pub", self.public_key + "\n", sync=False)
        recipe = functools.partial(Isolation, self.config, self.folder, 1)
        backend = RayBackend(
            signer=signer,
            address=execution.address or "",
            cpus_per_match=execution.cpus_per_match,
            max_attempts=execution.max_attempts,
            concurrency=self.concurrency,
            # The workers jail spawned bots as a local run does, one match at a time.
            sandbox=lambda _: recipe,
            on_retry=self._retry_notice,
            on_bot_exit=self._bot_exited,
        )
        try:
            if self.pending:  # nothing left to play: no cluster needed
                await backend.start()
        except (RayNotInstalled, RefereeUnavailable) as exc:
            raise TournamentError(str(exc)) from None
        where = execution.address or "a Ray started on this machine"
        self.progress.message(f"playing matches on Ray ({where})")
        try:
            yield backend
        finally:
            await backend.stop()

    def _retry_notice(self, job: MatchJob, why: str, attempt: int) -> None:
        self.progress.message(
            f"{job.label}: {why}; playing it again from scratch (attempt {attempt})"
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

    async def _tick(self, backend: MatchBackend) -> None:
        """Redraw the progress line every second (running matches, rate, ETA), not only
        when a match ends."""
        while True:
            await asyncio.sleep(PROGRESS_TICK_S)
            self.counts.running = backend.running
            self.progress.update(self.counts, self._leader())

    # -- hook: the sequential test stops the run at the end of a deal group ------------

    def _test_decided(self) -> bool:
        return self.test is not None and self.test.decision is not None

    async def _dispatch(self, backend: MatchBackend, dispatcher: Dispatcher) -> None:
        """Play the pending matches on ``backend``, recording each as it ends."""
        try:
            async with contextlib.aclosing(backend.run(dispatcher.jobs())) as finished:
                async for match in finished:
                    self.counts.running = backend.running  # as the progress line shows it
                    self._record(dispatcher.ended(match))
                    if self._test_decided():
                        break  # the matches still running are dropped, as on Ctrl-C
        finally:
            self.counts.running = 0

    def _leader(self) -> StandingRow | None:
        return self.standings.leader() if self.standings is not None else None

    def _bot_exited(self, job: MatchJob, ended: BotExit) -> None:
        """A bot that ended before its match is told when the backend knows: at once at a
        table here, on arrival from a Ray worker; above the progress line."""
        output = ended.stderr_path
        where = f"; its output: {output.relative_to(self.folder)}" if output else ""
        self.progress.message(f"{job.label}: {ended.headline}{where}")

    # -- recording ------------------------------------------------------------------

    def _record(self, result: MatchResult) -> None:
        result = self.disqualifier.judge(result)  # hook: is a bot out after this match?
        for sr in result.seats:
            if sr.disqualified:
                self.progress.message(f"{sr.bot} is disqualified: {sr.disqualified}")
        self.files.append(result)
        self.results[result.match_id] = result
        release_group(self.folder, self.results.values(), result.group, self.group_sizes)
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
            **rank_notes_json(rows, pairs, self.config.rules.scoring.value),
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
]
