"""All matches of one server: create, find by id or token, cancel, forget, resume.

This is also the referee's narrow in-process API (``RefereeServer.matches``): what an
embedded referee's users (``referee match``, tournaments) may do with a match, without
reaching into a match's task: create it, wait until it is over, read its public facts,
say that a seat's bot is gone, take its log, cancel it, forget it.
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import contextlib
import dataclasses
import hmac
import os
import re
import secrets
import shutil
import time
from pathlib import Path

import structlog

from referee import __version__
from referee.log.reader import LogFormatError, read_log
from referee.log.recovery import RecoveryError, recover
from referee.log.signing import LogSigner, trailer_line
from referee.log.writer import EventLogWriter, FsyncPolicy, LogWriteError
from referee.match import machine
from referee.match.settings import MatchSettings
from referee.match.state import MachineState
from referee.protocol import PROTOCOL_VERSION, common, match_service
from referee.protocol.convert import standings_pb
from referee.server.host import (
    DEFAULT_MAX_LOG_BYTES,
    Clock,
    Inbound,
    MatchHost,
    cancel_command,
)
from referee.server.metrics import Metrics

log = structlog.get_logger("referee.registry")


class ShuttingDown(Exception):
    """The server accepts no new match."""


class LogUnavailable(Exception):
    """The match's event log cannot be created; without its log a match does not start."""


# A server that runs for months keeps this many finished matches in memory; older ones
# are forgotten (their logs stay on disk and GetMatchLog still serves them).
DEFAULT_KEEP_FINISHED = 1000
MATCH_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{8}")


@dataclasses.dataclass(frozen=True, slots=True)
class Created:
    """A new match: its id, the four seat tokens (only ever returned here), the seed's
    commitment."""

    match_id: str
    tokens: tuple[str, ...]
    commitment: str


@dataclasses.dataclass(frozen=True, slots=True)
class Resumed:
    """What a restart did with one unfinished log."""

    match_id: str
    resumed: bool
    problem: str = ""
    cut: str = ""
    """What the restart cut off the log's end (a torn line, a decision cut short)."""


@dataclasses.dataclass(frozen=True, slots=True)
class LogPolicy:
    """How a server writes its match logs (``referee serve``'s log flags)."""

    fsync: FsyncPolicy = FsyncPolicy.NEVER
    """When a line is forced to disk beyond the OS's cache."""
    max_bytes: int = DEFAULT_MAX_LOG_BYTES
    """A log that grows past this ends its match (cancelled for its size)."""
    publish: bool = False
    """Make each log readable by every local user once its match is over (a live log is
    private: it holds every hand)."""


class MatchRegistry:
    def __init__(
        self,
        log_dir: Path,
        state_dir: Path,
        *,
        keep_finished: int = DEFAULT_KEEP_FINISHED,
        logs: LogPolicy = LogPolicy(),
        clock: Clock | None = None,
        metrics: Metrics | None = None,
        signer: LogSigner | None = None,
    ) -> None:
        self.log_dir = log_dir
        self.logs = logs
        """How its logs are written: when forced to disk, how large, whether published."""
        self.signer = signer
        """Signs each log that closes with the match's end (referee.log.signing)."""
        self.state_dir = state_dir
        self.keep_finished = keep_finished
        self.clock = clock or Clock()
        self.metrics = metrics
        self.hosts: dict[str, MatchHost] = {}
        self.by_token: dict[str, tuple[MatchHost, int]] = {}
        self.resumed: list[MatchHost] = []
        self.unresumable: dict[str, str] = {}
        """Logs found unfinished at start that could not be continued: why."""
        """Resumed matches: their tokens are known by salted hash only."""
        self.accepting = True
        self._created: dict[str, float] = {}
        self._finished: collections.deque[str] = collections.deque()

    # -- paths ----------------------------------------------------------------------

    def log_path(self, match_id: str) -> Path:
        return self.log_dir / f"{match_id}.jsonl"

    def _seed_path(self, match_id: str) -> Path:
        return self.state_dir / "seeds" / f"{match_id}.seed"

    def logged(self, match_id: str) -> Path | None:
        """The log of a match this server played, even if it has forgotten the match."""
        if not MATCH_ID.fullmatch(match_id):
            return None  # never a path built from arbitrary text
        path = self.log_path(match_id)
        return path if path.is_file() else None

    # -- creating -------------------------------------------------------------------

    def create(self, settings: MatchSettings) -> Created:
        if not self.accepting:
            raise ShuttingDown("the server is shutting down")
        match_id = time.strftime("%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(4)
        tokens = tuple(secrets.token_hex(24) for _ in range(len(settings.seat_names)))
        now = self.clock.now()
        first = machine.create(
            match_id,
            settings,
            now,
            tokens,
            software_version=__version__,
            protocol_version=PROTOCOL_VERSION,
        )
        path = self.log_path(match_id)
        try:
            self._keep_seed(match_id, settings.seed)
            writer = EventLogWriter.create(path, match_id, self.logs.fsync)
        except OSError as exc:
            self._seed_path(match_id).unlink(missing_ok=True)
            raise LogUnavailable(f"cannot create the match log: {exc.strerror}") from exc
        try:
            started = time.perf_counter()
            writer.append(first.events, first.now, first.command)
            append_s = time.perf_counter() - started
        except LogWriteError as exc:
            writer.close()
            path.unlink(missing_ok=True)
            self._seed_path(match_id).unlink(missing_ok=True)
            raise LogUnavailable("cannot write the match log (is the disk full?)") from exc
        host = self._host(first.state, writer)
        if host.metrics is not None:
            host.metrics.decided(first, append_s)
        for seat, token in enumerate(tokens):
            self.by_token[token] = (host, seat)
        host.start()
        log.info("match created", match_id=match_id, profile=settings.rules.profile)
        return Created(match_id, tokens, first.state.commitment)

    def _keep_seed(self, match_id: str, seed: str) -> None:
        """The seed, kept (private) until the match's end reveals it, so that a restarted
        referee can deal the rest of the match."""
        path = self._seed_path(match_id)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, seed.encode("utf-8"))
            if self.logs.fsync is not FsyncPolicy.NEVER:  # as durable as the log's lines
                os.fsync(fd)
        finally:
            os.close(fd)

    def _host(
        self,
        state: MachineState,
        writer: EventLogWriter,
        *,
        resumed: bool = False,
    ) -> MatchHost:
        metrics = self.metrics
        handle = metrics.match(state, resumed=resumed) if metrics else None
        host = MatchHost(
            state,
            writer,
            clock=self.clock,
            max_log_bytes=self.logs.max_bytes,
            on_closed=self._on_closed,
            metrics=handle,
        )
        self.hosts[state.match_id] = host
        self._created[state.match_id] = time.time()
        return host

    def _on_closed(self, host: MatchHost) -> None:
        if host.metrics is not None:
            host.metrics.closed(host.state)
        if self.signer is not None and host.state.over and not host.failure:
            writer = host.writer
            trailer = self.signer.trailer(host.match_id, writer.seq, writer.last_hash)
            try:
                writer.write_trailer(trailer_line(trailer))
            except LogWriteError as exc:  # the log stays whole, unsigned (as if cut short)
                log.error("cannot sign the match log", match_id=host.match_id, error=str(exc))
        if not host.failure:  # the log has the seed now; a failed match may yet resume
            self._seed_path(host.match_id).unlink(missing_ok=True)
            if self.logs.publish:
                host.writer.publish()
        self._finished.append(host.match_id)
        while len(self._finished) > self.keep_finished:
            self.forget(self._finished.popleft())

    # -- finding --------------------------------------------------------------------

    def get(self, match_id: str) -> MatchHost | None:
        return self.hosts.get(match_id)

    def seat_for(self, token: str) -> tuple[MatchHost, int] | None:
        found = self.by_token.get(token)
        if found is not None:
            return found
        for host in self.resumed:
            salt = host.state.token_salt
            for seat, hashed in enumerate(host.state.token_hashes):
                if hmac.compare_digest(machine.token_hash(salt, token), hashed):
                    self.by_token[token] = (host, seat)
                    return host, seat
        return None

    def info(self, host: MatchHost) -> match_service.MatchInfo:
        state = host.state
        status = state.status
        if host.failure:
            status = common.MATCH_STATUS_CANCELLED
        closed = state.over and host.done.is_set() and not host.failure
        return match_service.MatchInfo(
            match_id=state.match_id,
            status=status,
            config=state.settings.config_pb(),
            connected=[s is not None and s.seated for s in host.sessions],
            hands_played=state.rules.hand_number,
            totals=list(state.rules.totals),
            standings=standings_pb(state.rules.standings()) if state.over else [],
            seed_commitment=state.commitment,
            failure=host.failure,
            final_hash=host.writer.last_hash if closed else "",
            log_lines=host.writer.seq if closed else 0,
        )

    def list(
        self, status: common.MatchStatus.ValueType = common.MATCH_STATUS_UNSPECIFIED
    ) -> list[match_service.MatchInfo]:
        hosts = sorted(self.hosts.values(), key=lambda h: self._created[h.match_id], reverse=True)
        infos = [self.info(h) for h in hosts]
        infos += [
            match_service.MatchInfo(match_id=m, status=common.MATCH_STATUS_CANCELLED, failure=why)
            for m, why in self.unresumable.items()
        ]
        return [i for i in infos if not status or i.status == status]

    # -- the in-process API -----------------------------------------------------------

    async def wait_over(self, match_id: str) -> MatchHost:
        """Wait until the match is over (finished, cancelled or failed)."""
        host = self._require(match_id)
        await host.done.wait()
        return host

    def cancel(self, match_id: str, reason: str) -> None:
        host = self._require(match_id)
        if not host.is_over():
            host.submit(common.Command(cancel=common.CancelCommand(reason=reason or "cancelled")))

    def seat_gone(self, match_id: str, seat: int, cause: str) -> None:
        """The seat's bot is gone for good (whoever seated it saw its process exit): the
        match stops waiting for it and plays its turns by default at once."""
        host = self._require(match_id)
        if not host.is_over():
            gone = common.DisconnectCommand(seat=seat, cause=cause, gone=True)
            host.submit(common.Command(disconnect=gone))

    def take_log(self, match_id: str, dest: Path) -> None:
        """Move the log of a match that is over to ``dest``."""
        host = self._require(match_id)
        if not host.done.is_set():
            raise RuntimeError(f"match {match_id} is not over")
        shutil.move(str(self.log_path(match_id)), dest)

    def forget(self, match_id: str) -> None:
        """Drop a match that is over from memory (its log stays on disk), so that a server
        that plays thousands of matches does not keep them all; later look-ups miss."""
        host = self.hosts.get(match_id)
        if host is None or not host.done.is_set():
            return
        del self.hosts[match_id]
        self._created.pop(match_id, None)
        if host in self.resumed:
            self.resumed.remove(host)
        for token in [t for t, (h, _) in self.by_token.items() if h is host]:
            del self.by_token[token]

    def _require(self, match_id: str) -> MatchHost:
        host = self.hosts.get(match_id)
        if host is None:
            raise KeyError(f"no match {match_id!r}")
        return host

    async def shutdown(self, reason: str = "server shutting down") -> None:
        """Stop taking matches, cancel the running ones, wait for their logs to close."""
        self.accepting = False
        running = [h for h in self.hosts.values() if not h.done.is_set()]
        for host in running:
            host.submit(common.Command(cancel=common.CancelCommand(reason=reason)))
        if running:
            await asyncio.gather(*(h.done.wait() for h in running))

    async def suspend(self) -> None:
        """Stop every running match without logging an end; the next start on this log
        folder (and state folder) resumes them."""
        self.accepting = False
        running = [h for h in self.hosts.values() if not h.done.is_set()]
        for host in running:
            host.suspend()
        if running:
            await asyncio.gather(*(h.done.wait() for h in running))

    # -- resuming after a crash -------------------------------------------------------

    def resume_all(self) -> builtins.list[Resumed]:
        """Resume every unfinished log in the log folder (called once, at start)."""
        out = []
        for path in sorted(self.log_dir.glob("*.jsonl")):
            if not MATCH_ID.fullmatch(path.stem) or path.stem in self.hosts:
                continue
            outcome = self._resume(path)
            if outcome is not None:
                out.append(outcome)
        return out

    def _resume(self, path: Path) -> Resumed | None:
        match_id = path.stem
        try:
            read = read_log(path)
        except (LogFormatError, OSError) as exc:
            return self._unresumable(path, f"the log cannot be read: {exc}")
        if read.finished or read.trailer is not None:
            return None
        if not read.lines:
            path.unlink(missing_ok=True)  # created and crashed before its first line
            return Resumed(match_id, False, "empty log removed")
        try:
            seed = self._seed_path(match_id).read_text("utf-8")
        except OSError:
            seed = ""
        try:
            recovery = recover(read, seed)
        except RecoveryError as exc:
            return self._unresumable(path, str(exc))
        last = recovery.last
        writer = EventLogWriter.resume(
            path, match_id, last.entry.seq, last.raw, recovery.size, self.logs.fsync
        )
        host = self._host(recovery.state, writer, resumed=True)
        self.resumed.append(host)
        host.submit_inbound(Inbound(recovery.restart(__version__), self.clock.now()))
        cut = recovery.describe()
        if not seed:
            host.submit_inbound(
                Inbound(
                    cancel_command("the referee restarted without this match's seed"),
                    self.clock.now(),
                )
            )
            host.start()
            return Resumed(match_id, False, "seed lost: the match is cancelled", cut)
        host.start()
        log.warning(
            "match resumed after a restart",
            match_id=match_id,
            events=len(recovery.kept),
            torn_bytes=recovery.torn_bytes,
            cut_entries=len(recovery.cut),
            cut=cut,
        )
        return Resumed(match_id, True, cut=cut)

    def _unresumable(self, path: Path, problem: str) -> Resumed:
        """A log that cannot be continued is set aside as it is (renamed, so that later
        starts do not try again) and reported by ListMatches and the server's log."""
        log.error("match cannot be resumed", log=path.name, problem=problem)
        self.unresumable[path.stem] = problem
        with contextlib.suppress(OSError):
            path.rename(path.with_suffix(".jsonl.unresumable"))
        return Resumed(path.stem, False, problem)
