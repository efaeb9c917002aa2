"""The Ray backend: each match a Ray task on a cluster, its log checked and signed here.

Each match becomes a Ray task (``play_here``) that does on a worker node exactly what the
local backend does here: it starts a referee in the worker's process, seats the match's
four bots at a table there (built-in bots in the worker, commands spawned on the
worker's machine, sandboxed as the recipe the caller's ``sandbox(job)`` gives says) and
plays the match. The task returns the log's bytes and the table's report; the driver (this
process) checks them, signs the log again with the caller's key (the worker's referee
signs with a key of its own, published nowhere) and writes it, and the bots' output,
where the job says, byte for byte (``place_files``); ``MatchBackend`` then verifies it as
it verifies a local match's.

Bot commands run on the workers as written, so their programs and folders (``cwd``),
and the Python that runs the workers (``{python}``, with pusoy-referee installed), must
be at the same paths on every node: a shared file system, or the same checkout
everywhere (on one machine they are shared anyway).

A node that dies takes the matches it was playing with it; each is played again from
scratch (same seed, same seats) on the nodes that are left, and the finished match says
so (``FinishedMatch.retries``). Only after ``max_attempts`` losses of one match does the
run stop (``ClusterUnavailable``). Ray is an optional dependency (``pip install
'pusoy-referee[ray]'``), imported only when the backend starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import logging
import os
import secrets
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from referee.extras import install_hint
from referee.files import replace_private_file
from referee.llm.trace import pending_path
from referee.log.reader import read_bounded
from referee.log.signing import LogSigner, resign
from referee.sandbox import TableJails
from referee.table.output import tail_bytes
from referee.table.referees import LocalReferee, RefereeUnavailable
from referee.table.table import BOT_EXIT_GRACE_S, MatchReport, Table
from referee.tournament.backends.base import (
    MatchBackend,
    MatchJob,
    OnBotExit,
    OnRetry,
    Playing,
    output_name,
)

RAY_INSTALL_HINT = install_hint("ray")
MAX_OUTPUT_BYTES = 1 << 20
"""Of each spawned bot's output, the last this many bytes come back from a worker."""


class RayNotInstalled(Exception):
    """``backend = "ray"`` on a machine without Ray."""


class ClusterUnavailable(RefereeUnavailable):
    """The Ray cluster cannot be reached, or keeps losing a match: the tournament stops
    (the matches recorded so far are kept, and the same command resumes it)."""


class WorkerMismatch(Exception):
    """What came back from a worker is not the match that was asked for."""


RAY_AUTH_SETTINGS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
"""Ray's own settings of token authentication (docs/tournaments.md, "Across machines")."""


def token_for_a_ray_of_its_own() -> dict[str, str | None]:
    """Give the Ray a tournament starts for itself a token of its own, in this process's
    environment (Ray's ``RAY_AUTH_TOKEN``, which the Ray processes it starts inherit).

    Without one, that Ray writes a token to ``~/.ray/auth_token`` and leaves it there;
    from then on ``ray start --head`` on this machine turns authentication on by itself,
    while ``ray start --address`` and drivers given an address do not, and they fail with
    InvalidAuthToken. Settings the user gave (any of RAY_AUTH_SETTINGS) are left as they
    are. Returns the settings as they were, for ``restore_settings``.
    """
    saved = {name: os.environ.get(name) for name in RAY_AUTH_SETTINGS}
    if not any(value is not None for value in saved.values()):
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    return saved


def restore_settings(saved: dict[str, str | None]) -> None:
    """Put back what ``token_for_a_ray_of_its_own`` (and Ray, which sets RAY_AUTH_MODE
    for the Ray it starts) changed."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def put_back_sigterm(handler: Any) -> None:
    """Undo what ``ray.init`` does to SIGTERM: it installs a handler that exits the
    process at once, in place of the process's own (``referee tournament`` stops in
    order: "Stopped after N of M matches", exit 130, resumable)."""
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def require_ray(setting: str = '[execution] backend = "ray"') -> ModuleType:
    """The ``ray`` module; RayNotInstalled (naming the ``setting`` that asks for Ray and
    how to install it) when it is missing."""
    try:
        ray = importlib.import_module("ray")
    except ImportError as exc:
        raise RayNotInstalled(
            f"{setting} needs Ray, which is not installed here ({exc}): {RAY_INSTALL_HINT}"
        ) from None
    return ray


class WorkerSandbox(TableJails, Protocol):
    """The sandboxes of one match on a worker (a tournament's ``Isolation`` for one match
    at a time, a ladder's jails for the folders of the match's versions): decided there,
    with a socket of the worker's own referee."""

    @property
    def active(self) -> bool: ...

    def check(self) -> list[str]:
        """Decide how bots are jailed on this node; SandboxUnavailable when the recipe
        requires what cannot be here."""
        ...

    def listen_addresses(self) -> list[str]: ...

    async def start(self, referee_address: str, *, local: bool) -> None: ...

    async def close(self) -> None: ...


SandboxRecipe = Callable[[], WorkerSandbox]
"""Makes the sandboxes of one match on a worker; picklable (its task gets it), such as
``functools.partial(Isolation, config, folder, 1)``."""
SandboxFor = Callable[[MatchJob], SandboxRecipe | None]
"""The backend's hook, on the driver: the recipe of a job's sandboxes (None: bare), as
``LocalBackend``'s ``sandbox(job)`` gives a job's started jails."""


@dataclasses.dataclass(frozen=True, slots=True)
class PlayedMatch:
    """What a worker sends back: the table's report and the files the match made."""

    report: MatchReport
    """As the worker's table made it (its paths are the worker's)."""
    log: bytes
    log_sha256: str
    """Of ``log``, taken on the worker, so that the driver knows it got every byte."""
    outputs: tuple[tuple[int, bytes], ...]
    """Each spawned bot's output (its last MAX_OUTPUT_BYTES), by seat."""
    node: str
    """Which machine played it: host name and pid of the worker."""
    traces: tuple[tuple[int, bytes], ...] = ()
    """Each model seat's trace, whole (a part would no longer match the log's hashes)."""


# -- on the worker ------------------------------------------------------------------------


def play_here(job: MatchJob, sandbox: SandboxRecipe | None = None) -> PlayedMatch:
    """Play one match in this process, as the local backend does: the Ray task's body."""
    return asyncio.run(_play_here(job, sandbox))


async def _play_here(job: MatchJob, recipe: SandboxRecipe | None) -> PlayedMatch:
    with tempfile.TemporaryDirectory(prefix="pusoy-match-") as scratch:
        root = Path(scratch)
        # The worker sandboxes spawned bots as a local run does, for one match at a
        # time, with this worker's own referee socket.
        isolation = recipe() if recipe is not None else None
        if isolation is not None:
            isolation.check()  # SandboxUnavailable when the recipe requires what cannot be
        listen = isolation.listen_addresses() if isolation is not None else []
        referee = LocalReferee("127.0.0.1:0", root / "referee", bot_listen=listen)
        await referee.start()
        try:
            if isolation is not None:
                await isolation.start(referee.address, local=True)
            sandbox = isolation if isolation is not None and isolation.active else None
            report = await Table(referee, exit_grace_s=BOT_EXIT_GRACE_S, sandbox=sandbox).play(
                job.settings,
                job.seats,
                label=job.label,
                log_path=lambda _: root / "match.jsonl",
                stderr_path=lambda _, seat, name: root / "output" / output_name(seat, name),
                time_limit_s=job.time_limit_s,
            )
        finally:
            await referee.stop()
            if isolation is not None:
                await isolation.close()
        data = read_bounded(report.log_path)
        outputs = tuple(
            (s.seat, tail_bytes(s.stderr_path, MAX_OUTPUT_BYTES))
            for s in report.seats
            if s.stderr_path is not None
        )
        traces = tuple(
            (seat, read_bounded(path)) for seat, path in report.traces if path.exists()
        )
        return PlayedMatch(
            report=report,
            log=data,
            log_sha256=hashlib.sha256(data).hexdigest(),
            outputs=outputs,
            traces=traces,
            node=f"{socket.gethostname()} pid {os.getpid()}",
        )


# -- on the driver ------------------------------------------------------------------------


def place_files(played: PlayedMatch, job: MatchJob, signer: LogSigner | None = None) -> MatchReport:
    """Write a worker's log (fsynced) and its bots' output where the job says; the
    report is returned with those paths. The log's entries are kept byte for byte; with
    ``signer``, the worker's trailer is replaced by one signed with the driver's own key.
    Raises WorkerMismatch when the bytes or the deal are not what was asked for."""
    if hashlib.sha256(played.log).hexdigest() != played.log_sha256:
        raise WorkerMismatch("the log arrived damaged (its SHA-256 differs from the worker's)")
    report = played.report
    if report.seed != job.settings.seed:
        raise WorkerMismatch(
            f"the worker played another deal (seed {report.seed!r}, not {job.settings.seed!r})"
        )
    data = played.log
    if signer is not None:
        try:
            data, final_hash = resign(data, report.match_id, signer)
        except (ValueError, UnicodeDecodeError) as exc:
            raise WorkerMismatch(f"the log cannot be signed: {exc}") from None
        report = dataclasses.replace(
            report, final_hash=final_hash, signed_by=signer.public_key_text
        )
    job.log_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    replace_private_file(job.log_path, data, sync=True)
    outputs = dict(played.outputs)
    seats = []
    for seat in report.seats:
        path = None
        if seat.seat in outputs:
            path = job.output_path(seat.seat, seat.name)
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            replace_private_file(path, outputs[seat.seat])
        ended = seat.exit
        if ended is not None:
            ended = dataclasses.replace(ended, stderr_path=path)
        seats.append(dataclasses.replace(seat, stderr_path=path, exit=ended))
    traces = []
    for seat_number, trace in played.traces:  # private until the deal group is over
        pending = pending_path(job.log_path, seat_number)
        pending.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_private_file(pending, trace)
        traces.append((seat_number, pending))
    return dataclasses.replace(
        report, log_path=job.log_path, seats=tuple(seats), traces=tuple(traces)
    )


class RayBackend(MatchBackend):
    """Plays matches as Ray tasks, ``concurrency`` in flight (Ray queues what the
    cluster cannot run yet), and checks, signs and verifies each log here as it arrives.

    ``address``: the cluster's (``auto``, ``host:port``), or empty: a Ray started on
    this machine alone; ``signer``: the key every log is signed with on arrival;
    ``sandbox(job)``: how the workers jail the job's spawned bots (None: bare)."""

    def __init__(
        self,
        *,
        signer: LogSigner,
        address: str = "",
        cpus_per_match: float = 1.0,
        max_attempts: int = 3,
        concurrency: int,
        sandbox: SandboxFor | None = None,
        on_retry: OnRetry | None = None,
        on_bot_exit: OnBotExit | None = None,
    ) -> None:
        super().__init__(concurrency=concurrency, verify=True, on_bot_exit=on_bot_exit)
        # A cluster's logs arrive faster than one process verifies them (about 0.1 s a
        # one-hand log); with no referee or bots here, each core can verify one.
        self.verifiers = max(1, os.cpu_count() or 1)
        self.signer = signer
        self.address = address
        self.cpus_per_match = cpus_per_match
        self.max_attempts = max_attempts
        self.sandbox = sandbox
        self.on_retry = on_retry
        self._ray: Any = None
        self._task: Any = None
        self._settings: dict[str, str | None] | None = None

    @property
    def public_key(self) -> str:
        return self.signer.public_key_text

    async def start(self) -> None:
        """Connect to the cluster (or start a Ray on this machine alone). Raises
        RayNotInstalled, or ClusterUnavailable when the cluster does not answer."""
        ray = require_ray()
        address = self.address or "local"
        options: dict[str, Any] = {
            "address": address,
            "log_to_driver": False,  # the bots' output comes back with each match
            "logging_level": logging.WARNING,
        }
        if address == "local":
            options["include_dashboard"] = False
            self._settings = token_for_a_ray_of_its_own()
        own_handler = signal.getsignal(signal.SIGTERM)
        try:
            ray.init(**options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            self._restore()
            hint = ""
            if address != "local" and os.environ.get("RAY_AUTH_MODE") != "token":
                hint = (
                    " (a cluster with token authentication needs RAY_AUTH_MODE=token and its "
                    "token here too: docs/tournaments.md, Across machines with Ray)"
                )
            raise ClusterUnavailable(
                f"cannot reach the Ray cluster at {address}: {exc}{hint}"
            ) from None
        finally:
            put_back_sigterm(own_handler)
        self._ray = ray
        self._task = ray.remote(num_cpus=self.cpus_per_match, max_retries=0)(play_here)
        await super().start()

    async def stop(self) -> None:
        await super().stop()
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None
        self._restore()

    def _restore(self) -> None:
        if self._settings is not None:
            restore_settings(self._settings)
            self._settings = None

    async def _attempt(self, playing: Playing) -> MatchReport:
        """Play the match on the cluster until one attempt comes back whole. An attempt
        whose worker or node dies is played again from scratch; an error the match itself
        raised on the worker is raised here, as a local table would raise it."""
        ray = self._ray
        if ray is None:
            raise RuntimeError("RayBackend.start() first")
        job = playing.job
        recipe = self.sandbox(job) if self.sandbox is not None else None
        retries: list[str] = []
        for attempt in range(1, self.max_attempts + 1):
            ref = self._task.remote(job, recipe)
            try:
                played: PlayedMatch = await ref
                report = await asyncio.to_thread(place_files, played, job, self.signer)
            except asyncio.CancelledError:
                ray.cancel(ref, force=True)
                raise
            except ray.exceptions.RayTaskError as exc:
                # The match's own failure, not the cluster's: as a local table would raise.
                raise exc.as_instanceof_cause() from None
            except (ray.exceptions.RayError, WorkerMismatch) as exc:
                why = f"attempt {attempt} was lost: {_first_line(exc)}"
                retries.append(why)
                if attempt < self.max_attempts and self.on_retry is not None:
                    self.on_retry(job, why, attempt + 1)
                continue
            playing.retries = tuple(retries)
            if self.on_bot_exit is not None:
                for seat in report.seats:
                    if seat.exit is not None:  # told on arrival: the worker cannot tell at once
                        self.on_bot_exit(job, seat.exit)
            return report
        raise ClusterUnavailable(
            f"match {job.label} was lost {len(retries)} times on the Ray cluster ({retries[-1]})"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


__all__ = [
    "RAY_INSTALL_HINT",
    "ClusterUnavailable",
    "PlayedMatch",
    "RayBackend",
    "RayNotInstalled",
    "SandboxFor",
    "SandboxRecipe",
    "WorkerMismatch",
    "WorkerSandbox",
    "place_files",
    "play_here",
    "require_ray",
]
