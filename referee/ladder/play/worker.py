"""A ladder's worker: claim a match from the queue, play it, record it; again.

``Worker`` is the loop, the same whatever plays the match: a tournament's match backend
(``referee.ladder.play.backends``), ``await backend.play(job)``. A worker process (``python -m
referee.ladder.play.worker``, started by ``referee ladder run``) plays with a referee of its
own (one process per core), or, with ``[workers] backend = "ray"``, sends its matches
to a Ray cluster (one process, ``count`` matches at once); the process that holds the
lobby plays the matches of remote bots at its own referee. Each claimed match:

1. its versions become seats (``play.seat_plans``) and its ``MatchJob`` names where its log
   (``logs/<match>-a<attempt>-<claim>.jsonl``) and its bots' output
   (``stderr/<match>-a<attempt>-<claim>/``) go, ``<claim>`` a digest of this claim's
   lease token: one set of files per claim, so a claim whose lease ran out (or that was
   given back, which does not count as an attempt) never touches the files of the one
   that is recorded;
2. while it plays, the lease is renewed every third of ``lease_s``; a lease lost (the
   worker stalled and another took the match over) stops the play and drops its files;
3. its result is recorded (``LadderStore.record``, idempotent, all in one transaction)
   from the backend's ``FinishedMatch``: seats' results, log path, final hash and
   signer, or the cause of a failure (its ``error``); a validation
   match then decides its version (``referee.ladder.play.validation.settle``).

Database calls run in a thread, so the event loop (the referee, its built-in bots) never
waits on a lock of the database. A SIGKILL at any moment loses nothing recorded (the
queue's docstring says why); a SIGTERM gives the matches being played back to the queue.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import dataclasses
import hashlib
import os
import shutil
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import structlog

from referee.backends import (
    FinishedMatch,
    LocalBackend,
    MatchBackend,
    MatchFailure,
    MatchJob,
)
from referee.ladder.config import LadderConfig
from referee.ladder.errors import LadderError, LeaseLost
from referee.ladder.play.backends import seat_plans
from referee.ladder.play.validation import settle
from referee.ladder.storage.records import Claim, GroupPurpose, MatchOutcome, SeatRecord
from referee.ladder.storage.store import LadderStore
from referee.sandbox import SandboxUnavailable
from referee.table.referees import RefereeUnavailable
from referee.table.table import MatchReport, SeatReport

log = structlog.get_logger("referee.ladder.worker")

IDLE_POLL_S = 0.5
"""How often an idle worker looks at the queue."""


def _relative(path: Path | None, folder: Path) -> str:
    if path is None:
        return ""
    try:
        return str(path.resolve().relative_to(folder.resolve()))
    except ValueError:
        return ""


def seat_outcome(seat: SeatReport, folder: Path) -> SeatRecord:
    """A seat as the table reports it, for the store."""
    breach = seat.sandbox.breach if seat.sandbox is not None else None
    return SeatRecord.from_summary(
        seat.summary,
        seat.seat,
        crashed=seat.crashed,
        exit_code=seat.exit_code,
        crash=seat.exit.what if seat.exit is not None else "",
        breach=breach.value if breach is not None else "",
        stderr_path=_relative(seat.stderr_path, folder),
    )


def outcome_of(
    report: MatchReport, folder: Path, duration_s: float, failure: MatchFailure | None
) -> MatchOutcome:
    """What a played match comes to: finished, or failed because it ran over its time
    limit or was cancelled (``timeout``, ``cancelled``)."""
    return MatchOutcome(
        finished=report.finished,
        seats=tuple(seat_outcome(s, folder) for s in report.seats),
        log_path=_relative(report.log_path, folder) or None,
        log_hash=report.final_hash or None,
        log_signed_by=report.signed_by or None,
        hands=report.hands,
        duration_s=round(duration_s, 3),
        failure=None if report.finished else (failure or MatchFailure.CANCELLED).value,
        failure_detail=None if report.finished else report.cancel_reason,
    )


def failure(cause: str, detail: str) -> MatchOutcome:
    return MatchOutcome(finished=False, failure=cause, failure_detail=detail[:4000])


def finished_outcome(match: FinishedMatch, folder: Path) -> MatchOutcome:
    """What a backend's finished match comes to: ``outcome_of`` its report, or its
    failure's cause; a log that does not verify (the backend checked it) is not ranked."""
    if match.report is None:
        if match.failure is MatchFailure.SETTINGS:  # raised here, or on a Ray node
            detail = match.error.partition(": ")[2]
            return failure("settings", f"the referee refused the match: {detail}")
        return failure("error", match.error)
    if match.failure is MatchFailure.UNVERIFIED:
        return failure("error", f"the log {match.report.log_path} does not verify")
    return outcome_of(match.report, folder, match.duration_s, match.failure)


@dataclasses.dataclass(eq=False)
class Worker:
    """Claims, plays and records matches with ``backend`` (``slots`` at once).

    ``live_address``: where the backend's referee can be watched (its public address;
    empty: nowhere, as on Ray); the referee's id of each match is then recorded as
    soon as it exists (the web relays the live match)."""

    name: str
    config: LadderConfig
    store: LadderStore
    backend: MatchBackend
    _: dataclasses.KW_ONLY
    live_address: str = ""
    slots: int = 1
    online: Callable[[], Mapping[int, int]] | None = None
    """For the process that holds the lobby, the remote versions connected now (it
    claims only their matches); None: a worker, which claims only matches without remote
    versions."""
    lobby_names: Mapping[int, str] = dataclasses.field(default_factory=dict)
    on_recorded: Callable[[str, MatchOutcome], None] | None = None
    played: int = dataclasses.field(default=0, init=False)
    _tokens: dict[str, str] = dataclasses.field(default_factory=dict, init=False)
    """The lease token of each match being played, by match id (``job.label``)."""
    _announcing: set[asyncio.Task[None]] = dataclasses.field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        if self.live_address and isinstance(self.backend, LocalBackend):
            self.backend.on_created = self._created

    async def run(self, stop: asyncio.Event) -> None:
        """Until ``stop`` is set; the matches being played then go back to the queue."""
        await asyncio.gather(*(self._slot(stop, i) for i in range(self.slots)))

    async def _slot(self, stop: asyncio.Event, index: int) -> None:
        who = self.name if self.slots == 1 else f"{self.name}.{index}"
        while not stop.is_set():
            try:
                claim = await asyncio.to_thread(self._claim, who)
            except LadderError as exc:
                log.warning("claim failed", worker=who, why=str(exc))
                claim = None
            if claim is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), IDLE_POLL_S)
                continue
            play = asyncio.create_task(self.play(claim))
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait([play, stopping], return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not play.done():
                play.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await play
                try:
                    await asyncio.to_thread(self.store.queue.release, claim.match_id, claim.token)
                except LadderError:
                    # Not ours to give back: recorded just now (the cancel came while the
                    # record's transaction ran in its thread), so these files are the
                    # record's; or another worker's now. Either way they stay.
                    pass
                else:
                    self._drop_files(claim)
            elif play.exception() is not None:
                error = play.exception()
                log.error("playing a match failed", match_id=claim.match_id, exc_info=error)

    def _claim(self, who: str) -> Claim | None:
        if self.online is None:
            return self.store.queue.claim(who, self.config.lease_s)
        online = {v for v, free in self.online().items() if free > 0}
        if not online:
            return None
        return self.store.queue.claim(who, self.config.lease_s, remote_online=online)

    def _paths(self, claim: Claim) -> tuple[Path, Path]:
        tag = hashlib.sha256(claim.token.encode()).hexdigest()[:8]  # not the token itself
        stem = f"{claim.match_id}-a{claim.attempt}-{tag}"
        return self.config.logs_dir / f"{stem}.jsonl", self.config.stderr_dir / stem

    def _drop_files(self, claim: Claim) -> None:
        log_path, stderr_dir = self._paths(claim)
        log_path.unlink(missing_ok=True)
        shutil.rmtree(stderr_dir, ignore_errors=True)

    async def play(self, claim: Claim) -> None:
        """Play one claimed match and record it (or drop it when its lease was lost)."""
        store = self.store
        versions = await asyncio.to_thread(lambda: [store.version(v) for v in claim.version_ids])
        log_path, stderr_dir = self._paths(claim)
        validating = claim.purpose is GroupPurpose.VALIDATION
        plans = seat_plans(versions, self.config.versions_dir, dict(self.lobby_names))
        settings = self.config.match_settings(
            claim.seed,
            [p.name for p in plans],
            hands=self.config.validation_hands if validating else 0,
        )
        job = MatchJob(
            label=claim.match_id,
            settings=settings,
            seats=tuple(p.seat() for p in plans),
            log_path=log_path,
            output_dir=stderr_dir,
            time_limit_s=self.config.match_timeout_s,
        )
        lost = asyncio.Event()
        self._tokens[claim.match_id] = claim.token
        playing = asyncio.create_task(self.backend.play(job))
        keeper = asyncio.create_task(self._keep_lease(claim, playing, lost))
        try:
            outcome = finished_outcome(await playing, self.config.folder)
        except asyncio.CancelledError:
            if not lost.is_set():
                raise
            self._drop_files(claim)
            log.warning("lease lost: the match is another worker's now", match_id=claim.match_id)
            return
        except RefereeUnavailable as exc:  # the referee or the cluster is gone
            outcome = failure("referee", str(exc))
        except Exception as exc:  # the job could not be made (the backend raises no other)
            log.exception("match failed", match_id=claim.match_id)
            outcome = failure("error", f"{type(exc).__name__}: {exc}")
        finally:
            keeper.cancel()
            self._tokens.pop(claim.match_id, None)
        try:
            await asyncio.to_thread(store.queue.record, claim.match_id, claim.token, outcome)
        except LeaseLost:
            self._drop_files(claim)
            log.warning("lease lost before the record", match_id=claim.match_id)
            return
        self.played += 1
        if self.on_recorded is not None:
            self.on_recorded(claim.match_id, outcome)
        if validating:
            await asyncio.to_thread(settle, store, self.config.folder, versions[0])

    def _created(self, job: MatchJob, live_id: str) -> None:
        """The backend's ``on_created``: record where the match can be watched."""
        token = self._tokens.get(job.label)
        if token is None:
            return
        task = asyncio.get_running_loop().create_task(self._announce(job.label, token, live_id))
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    async def _announce(self, match_id: str, token: str, live_id: str) -> None:
        with contextlib.suppress(LadderError):
            await asyncio.to_thread(
                self.store.queue.playing, match_id, token, self.live_address, live_id
            )

    async def _keep_lease(
        self, claim: Claim, playing: asyncio.Task[FinishedMatch], lost: asyncio.Event
    ) -> None:
        every = self.config.lease_s / 3
        while True:
            await asyncio.sleep(every)
            try:
                await asyncio.to_thread(
                    self.store.queue.renew, claim.match_id, claim.token, self.config.lease_s
                )
            except LeaseLost:
                lost.set()
                playing.cancel()
                return
            except Exception:  # the database is away a moment: the lease has time left
                log.warning("renewing a lease failed", match_id=claim.match_id, exc_info=True)


# -- the worker process ---------------------------------------------------------------------


def die_with_parent(parent: int) -> None:
    """Be killed when ``parent`` (``referee ladder run``) dies, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG): a ladder killed outright leaves no worker playing on."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the call above
        os._exit(1)


async def serve(config: LadderConfig, name: str, slots: int = 0) -> None:
    """A worker process's life: its backend (a referee and jails here, or the Ray
    cluster, ``slots`` matches at once), then the loop until SIGTERM."""
    from referee.ladder.play.backends import LocalTables, ray_backend
    from referee.ladder.play.jails import ladder_support
    from referee.table.referees import state_signer

    signer = state_signer(config.state_dir)
    support = ladder_support(config.folder)  # refuses where no jail can be made
    store = LadderStore.open(config.database, migrate=False)
    stop = asyncio.Event()
    tables: LocalTables | None = None
    backend: MatchBackend
    if config.backend == "ray":
        slots = slots or config.worker_count()
        backend = ray_backend(config, signer, slots=slots)
    else:
        slots = 1
        tables = LocalTables(
            "127.0.0.1:0", config.work_dir / name, signer, support, config.bot_limits
        )
    try:
        if tables is not None:
            await tables.start()
            backend = tables.backend
        else:
            await backend.start()
        # After the backend (which puts back what ray.init replaces): a SIGTERM gives the
        # matches being played back to the queue before the process ends.
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        address = tables.address if tables is not None else ""
        log.info("worker started", worker=name, referee=address, pid=os.getpid(), slots=slots)
        worker = Worker(name, config, store, backend, live_address=address, slots=slots)
        await worker.run(stop)
    finally:
        if tables is not None:
            await tables.stop()
        else:
            await backend.stop()
        store.close()


def main(argv: list[str] | None = None) -> int:
    from referee.backends import RayNotInstalled
    from referee.ladder.config import ConfigError, load_ladder_config
    from referee.service.logging import configure_logging

    parser = argparse.ArgumentParser(description="A ladder's worker (referee ladder run starts it)")
    parser.add_argument("config")
    parser.add_argument("name")
    parser.add_argument("--parent", type=int, default=0)
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--slots", type=int, default=0, help="ray: matches at once")
    args = parser.parse_args(argv)
    if args.parent:
        die_with_parent(args.parent)
    try:
        config = load_ladder_config(Path(args.config))
    except ConfigError as exc:
        print(f"ladder worker: {exc}", file=sys.stderr)
        return 2
    folder = config.work_dir / args.name
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(folder / "worker.log", "a", encoding="utf-8") as out:
        configure_logging("json", args.log_level, out)
        structlog.contextvars.bind_contextvars(worker=args.name, host=socket.gethostname())
        try:
            asyncio.run(serve(config, args.name, args.slots))
        except (LadderError, SandboxUnavailable, RayNotInstalled, RefereeUnavailable) as exc:
            print(f"ladder worker {args.name}: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
