"""One table: four bots seated at a referee for one match, played and reported.

This is the one place where a match's orchestration lives, for ``referee match`` and for
every match of a tournament: create the match, seat its bots (a built-in strategy in this
process, a command spawned in a process group of its own, a remote bot told through the
lobby), wait for the end, give the bots a moment to exit and stop what is left of them,
collect the log, and read from it what the match came to.

Spawned bots run in a sandbox when the table is given one (``sandbox``, a
``referee.sandbox.TableJails``): they are told the address they reach the referee at inside
it, their exit names the limit they broke, and the report has what the sandbox measured
(CPU time, within their turns too, and memory). These are the sandbox's hooks here.

A bot that ends before its match did is noticed at once: a spawned process that exits
(or cannot be started at all), a built-in bot that fails. ``on_exit`` hears of it with
what a person needs to act on it (seat, command, exit status or signal, the last lines
of its output and the file that holds them), and the referee is told that the seat's bot
is gone, so the match does not wait for it: its turns are played by default and the
match goes on to its end, exactly as for a bot that dropped its stream. The seat is
reported as crashed. A bot that is alive but never connects is waited for until the
connect limit, then played by default; the log says it never connected.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shlex
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import structlog

from referee.client.tls import ClientTls
from referee.files import replace_private_file
from referee.log.outputs import Raised, raised_in, read_tail
from referee.log.signing import LogSigner
from referee.log.summary import SeatSummary, summarize_log
from referee.match.settings import MatchSettings
from referee.rules import new_seed
from referee.sandbox import JailReport, TableJails
from referee.sandbox.jailer import Jailer
from referee.table.bots import BuiltinBot, CommandBot, EmptySeat, RemoteBot, Seat, expand
from referee.table.jails import bare_env
from referee.table.models import HouseSeats, bot_seed, house_seats
from referee.table.procs import OUTPUT_DRAIN_S, BotProcess, ProcessLedger
from referee.table.referees import Assignment, LocalReferee, Referee
from referee.table.turns import TurnGate, stop_following

log = structlog.get_logger("referee.table")

BOT_EXIT_GRACE_S = 3.0
"""After a match ends, how long its bots have to exit before their groups are killed."""


@dataclasses.dataclass(frozen=True, slots=True)
class BotExit:
    """A bot that ended before its match did."""

    seat: int
    name: str
    command: str
    """The command as spawned, the seat token left as ``{token}``; or ``built-in NAME``."""
    what: str
    """``exited with status 1``, ``was killed by signal 9 (SIGKILL)``, ``could not be
    started: ...``, ``failed: ...``."""
    returncode: int | None = None
    """The exit status (negative: the signal); None when it never ran or is no process."""
    stderr_path: Path | None = None
    """The file that holds the bot's standard output and error."""
    tail: tuple[str, ...] = ()
    """The last lines of that file, made safe to print."""
    started: bool = True
    """False for a bot that could not be started at all."""
    hint: str = ""
    """What may have made it end, when the table can tell (a file its jail cannot read)."""
    after_leaving: bool = False
    """It left its seat during the match, and its process ended after the last hand."""

    @property
    def headline(self) -> str:
        """``seat 2 (mybot) exited with status 1 before the match ended``."""
        if self.after_leaving:
            return f"seat {self.seat} ({self.name}) left the match, then {self.what}"
        when = " before the match ended" if self.started else ""
        return f"seat {self.seat} ({self.name}) {self.what}{when}"


@dataclasses.dataclass(frozen=True, slots=True)
class SeatReport:
    """One seat of a played match: its bot, what the log says of it, and its process."""

    seat: int
    name: str
    bot: BuiltinBot | CommandBot | RemoteBot | EmptySeat
    summary: SeatSummary
    crashed: bool = False
    """Its bot ended before the match did (see ``exit``)."""
    exit_code: int | None = None
    """A spawned bot's exit status after the match (negative: the signal that ended it,
    -9 when it was killed for not exiting); None for other bots or one never started."""
    stderr_path: Path | None = None
    exit: BotExit | None = None
    sandbox: JailReport | None = None
    """What its sandbox saw: a limit broken, CPU time, peak memory."""
    turns_cpu_ms: tuple[float, float] | None = None
    """A sandboxed bot's CPU time within its own turns: in total, and its longest."""
    raised: tuple[Raised, ...] = ()
    """What its kit said of turns on which the bot's own code raised (docs/kits.md, 5)."""

    @property
    def connected(self) -> bool:
        return self.summary.connected


@dataclasses.dataclass(frozen=True, slots=True)
class MatchReport:
    """A match played at a table."""

    match_id: str
    """The referee's id of the match (the ``match_id`` inside its log)."""
    log_path: Path
    status: str
    """``finished`` or ``cancelled``."""
    cancel_reason: str
    seed: str
    hands: int
    seats: tuple[SeatReport, ...]
    settings: MatchSettings
    final_hash: str = ""
    """SHA-256 of the log's last entry line, what its signature covers: publish it."""
    over_time_limit: bool = False
    """The table cancelled the match for running over its time limit."""
    signed_by: str = ""
    """The public key (base64) the log's signature trailer names; empty when unsigned."""
    turn_moves: Mapping[int, tuple[int, int]] = dataclasses.field(default_factory=dict)
    """Turn id to (hand, move): where a seat's ``raised`` turns are in the match."""
    traces: tuple[tuple[int, Path], ...] = ()
    """Model seats' traces (seat, file), private until ``models.release_traces``."""

    @property
    def finished(self) -> bool:
        return self.status == "finished"


class TableError(RuntimeError):
    """The table cannot play: the match was refused, or the referee cannot be used."""


@dataclasses.dataclass
class _Run:
    """What one match has seated, and what became of it."""

    match_id: str
    over: asyncio.Event
    procs: list[tuple[int, BotProcess]] = dataclasses.field(default_factory=list)
    tasks: list[asyncio.Task[Any]] = dataclasses.field(default_factory=list)
    """Built-in bots playing in this process."""
    watchers: list[asyncio.Task[None]] = dataclasses.field(default_factory=list)
    remote: list[str] = dataclasses.field(default_factory=list)
    exits: dict[int, BotExit] = dataclasses.field(default_factory=dict)
    exit_codes: dict[int, int | None] = dataclasses.field(default_factory=dict)
    stderr: dict[int, Path] = dataclasses.field(default_factory=dict)
    commands: dict[int, tuple[str, str]] = dataclasses.field(default_factory=dict)
    """A spawned bot's name and command, by seat."""
    gate: TurnGate = dataclasses.field(default_factory=TurnGate)
    """Its jailed bots, run turn by turn."""
    following: asyncio.Task[None] | None = None
    """The gate's ears when the referee is elsewhere (its public events)."""
    house: HouseSeats = dataclasses.field(default_factory=HouseSeats)


def describe_exit(code: int) -> str:
    """How a bot's process ended, in words.

    >>> describe_exit(1), describe_exit(-9)
    ('exited with status 1', 'was killed by signal 9 (SIGKILL)')
    """
    if code < 0:
        try:
            name = f" ({signal.Signals(-code).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {-code}{name}"
    return f"exited with status {code}"


@dataclasses.dataclass(eq=False)
class Table:
    """Seats four bots at ``referee`` and plays one match: ``await table.play(...)``.

    ``on_exit`` hears at once of a bot that ends before its match; ``on_created`` hears
    the referee's id of the match as soon as it exists (before any bot is seated: a
    caller that shows live matches can point at it); ``ledger`` keeps the
    process groups alive now (a tournament's, so that a killed run's bots can be stopped).
    ``tls``: how the seated bots reach a referee that serves TLS (built-in bots use it,
    spawned bots get it as ``PUSOY_TLS_*`` and the ``{ca_file}``, ``{client_cert}``,
    ``{client_key}`` placeholders).
    """

    referee: Referee
    _: dataclasses.KW_ONLY
    on_exit: Callable[[BotExit], None] | None = None
    on_created: Callable[[str], None] | None = None
    ledger: ProcessLedger | None = None
    exit_grace_s: float = BOT_EXIT_GRACE_S
    tls: ClientTls | None = None
    sandbox: TableJails | None = None
    match_id: str = dataclasses.field(default="", init=False)
    """The referee's id of the match, once it is created."""

    async def play(
        self,
        settings: MatchSettings,
        seats: Sequence[Seat],
        *,
        log_path: Callable[[str], Path],
        stderr_path: Callable[[str, int, str], Path],
        label: str = "",
        time_limit_s: float | None = None,
    ) -> MatchReport:
        """Play one match of ``settings`` (seat names and, if empty, the seed are filled
        in here) with these four seats, to its end.

        ``log_path(match_id)``: where the log is kept; ``stderr_path(match_id, seat,
        name)``: where a spawned bot's output goes; ``label``: the ``{match}`` of bot
        commands (default: the referee's match id). A match still running after
        ``time_limit_s`` is cancelled. Raises what the referee raises when it refuses the
        match or cannot be reached; whatever happens, every bot is stopped on return.
        """
        if self.match_id:
            raise RuntimeError("a table plays one match")
        if len(seats) != 4:
            raise ValueError(f"a table has four seats, got {len(seats)}")
        names = (seats[0].name, seats[1].name, seats[2].name, seats[3].name)
        settings = dataclasses.replace(settings, seat_names=names, seed=settings.seed or new_seed())
        house, settings = house_seats(seats, settings)  # hook: model seats (ModelSeatError)
        created = await self.referee.create(settings)
        self.match_id = created.match_id
        run = _Run(created.match_id, self.referee.over(created.match_id), house=house)
        house.log_path = log_path(created.match_id)
        try:
            if self.on_created is not None:
                self.on_created(created.match_id)
            if self.sandbox is not None and not self.referee.follow_turns(run.match_id, run.gate):
                run.following = asyncio.create_task(
                    run.gate.follow(self.referee.address, run.match_id)
                )
            for seat, (spec, token) in enumerate(zip(seats, created.tokens, strict=True)):
                await self._seat(run, settings, seat, spec, token, label, stderr_path)
            over_time_limit = False
            try:
                await asyncio.wait_for(run.over.wait(), time_limit_s)
            except TimeoutError:
                why = f"the match ran over its time limit ({time_limit_s:g} s)"
                await self.referee.cancel(run.match_id, why)
                await run.over.wait()
                over_time_limit = True
            run.gate(None, True)
            await stop_following(run.following)
            await self._unseat(run)
            dest = log_path(run.match_id)
            dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            await self.referee.collect_log(run.match_id, dest)
            summary = await asyncio.to_thread(summarize_log, dest)
            outputs = dict(run.stderr)
            raised = await asyncio.to_thread(lambda: {s: raised_in(p) for s, p in outputs.items()})
            for seat, proc in run.procs:
                await self._left_then_ended(run, seat, proc, summary.seats[seat])
            return MatchReport(
                match_id=run.match_id,
                log_path=dest,
                status=summary.status,
                cancel_reason=summary.cancel_reason,
                seed=summary.seed,
                hands=summary.hands,
                settings=settings,
                final_hash=summary.final_hash,
                over_time_limit=over_time_limit,
                signed_by=summary.signed_by,
                turn_moves=summary.turn_moves,
                traces=tuple(sorted(house.traces.items())),
                seats=tuple(
                    SeatReport(
                        seat=s,
                        name=names[s],
                        bot=seats[s].bot,
                        summary=summary.seats[s],
                        crashed=s in run.exits,
                        exit_code=run.exit_codes.get(s),
                        stderr_path=run.stderr.get(s),
                        exit=run.exits.get(s),
                        sandbox=next((p.report for q, p in run.procs if q == s), None),
                        turns_cpu_ms=run.gate.turns_ms(s),
                        raised=raised.get(s, ()),
                    )
                    for s in range(4)
                ),
            )
        finally:
            self._abandon(run)
            lobby = self.referee.lobby
            if lobby is not None:
                for name in run.remote:
                    lobby.release(name, run.match_id)
            await self.referee.discard(run.match_id)

    # -- seating ----------------------------------------------------------------------

    async def _seat(
        self,
        run: _Run,
        settings: MatchSettings,
        seat: int,
        spec: Seat,
        token: str,
        label: str,
        stderr_path: Callable[[str, int, str], Path],
    ) -> None:
        bot = spec.bot
        address = self.referee.address
        if isinstance(bot, EmptySeat):
            await self.referee.seat_gone(run.match_id, seat, bot.reason)
            return
        if isinstance(bot, RemoteBot):
            lobby = self.referee.lobby
            if lobby is None:
                raise TableError("remote bots need a referee with a lobby (one in this process)")
            lobby.assign(bot.name, Assignment(run.match_id, seat, token, settings.config_pb()))
            run.remote.append(bot.name)
            return
        if isinstance(bot, BuiltinBot):
            play = run.house.play(bot.strategy, seat, settings.seed, address, token, self.tls)
            task = asyncio.create_task(play)
            run.tasks.append(task)
            run.watchers.append(asyncio.create_task(self._watch_task(run, seat, spec, task)))
            return
        # A sandboxed bot reaches the referee through the sandbox's own local socket, in
        # plaintext: no TLS settings (nor their files) go into the sandbox.
        tls = self.tls if self.sandbox is None else None
        if self.sandbox is not None:
            address = self.sandbox.address  # the referee as seen from inside the sandbox
        files = self._tls_files(tls)
        values = {
            "address": address,
            "python": sys.executable,
            "seat": str(seat),
            "match": label or run.match_id,
            "name": spec.name,
            **{key: str(path or "") for key, (_, path) in files.items()},
        }
        command = shlex.join(expand(bot.argv, values))  # the token left as its placeholder
        argv = expand(bot.argv, {**values, "token": token})
        env = {**dict(bot.env), "PUSOY_ADDRESS": address, "PUSOY_TOKEN": token}
        env.update({var: str(path) for var, path in files.values() if path})
        if tls is not None:
            env["PUSOY_TLS"] = "1"
        if tls is not None and tls.server_name:
            env["PUSOY_TLS_SERVER_NAME"] = tls.server_name
        path = stderr_path(run.match_id, seat, spec.name)
        run.stderr[seat] = path
        jail = self.sandbox.jail(spec.name, argv, env) if self.sandbox is not None else None
        env = bare_env(env) if jail is None else env
        try:
            proc = await BotProcess.spawn(argv, env=env, cwd=bot.cwd, stderr_path=path, jail=jail)
        except OSError as exc:
            if jail is not None and self.sandbox is not None:
                self.sandbox.release(jail)
            why = f"could not be started: {exc.strerror or exc}"
            with contextlib.suppress(OSError):
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                replace_private_file(
                    path, f"the referee could not start this bot: {exc}\n".encode()
                )
            ended = BotExit(seat, spec.name, command, why, None, path, started=False)
            await self._gone(run, ended)
            return
        if self.ledger is not None:
            self.ledger.add(proc)
        run.procs.append((seat, proc))
        if jail is not None:
            run.gate.add(seat, jail)
        run.commands[seat] = (spec.name, command)
        watcher = self._watch_process(run, seat, spec.name, command, proc)
        run.watchers.append(asyncio.create_task(watcher))

    @staticmethod
    def _tls_files(tls: ClientTls | None) -> dict[str, tuple[str, Path | None]]:
        """Placeholder -> (the kits' variable, file) of the seated bots' TLS."""
        tls = tls or ClientTls()
        return {
            "ca_file": ("PUSOY_TLS_CA", tls.ca),
            "client_cert": ("PUSOY_TLS_CERT", tls.cert),
            "client_key": ("PUSOY_TLS_KEY", tls.key),
        }

    # -- noticing a bot that ends early -------------------------------------------------

    async def _ended_early(self, run: _Run) -> bool:
        """Whether a bot that just ended did so before its match. A referee over the
        network tells the table of the end a little after the bots (``end_skew_s``)."""
        if run.over.is_set():
            return False
        skew = self.referee.end_skew_s
        if skew > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.over.wait(), skew)
        return not run.over.is_set()

    async def _watch_process(
        self, run: _Run, seat: int, name: str, command: str, proc: BotProcess
    ) -> None:
        await proc.proc.wait()
        code = proc.returncode
        assert code is not None
        breach = proc.jail.check_breach() if proc.jail is not None else None
        if not await self._ended_early(run):
            return
        await proc.output.closed(OUTPUT_DRAIN_S)  # its last words, a traceback
        tail = await asyncio.to_thread(read_tail, proc.stderr_path)
        what = describe_exit(code)
        if breach and proc.jail is not None:
            what = f"was stopped by its jail for breaking its {breach} ({proc.jail.cause})"
        hint = proc.jail.hint(tail) if proc.jail is not None and not breach else ""
        ended = BotExit(seat, name, command, what, code, proc.stderr_path, tail, hint=hint)
        await self._gone(run, ended)

    async def _left_then_ended(
        self, run: _Run, seat: int, proc: BotProcess, seen: SeatSummary
    ) -> None:
        """A bot that left its seat during the match and then exited with a failure
        crashed, also when its process ended after the last hand: the match may finish
        without it before a slow exit (a bridge stopping its bot). Killed for not
        exiting (SIGKILL, at the end) is the table's doing, not the bot's."""
        code = run.exit_codes.get(seat)
        if seat in run.exits or not seen.left or code in (None, 0, -signal.SIGKILL):
            return
        tail = await asyncio.to_thread(read_tail, proc.stderr_path)
        name, command = run.commands[seat]
        what = describe_exit(code)
        ended = BotExit(seat, name, command, what, code, proc.stderr_path, tail, after_leaving=True)
        await self._gone(run, ended)

    async def _watch_task(self, run: _Run, seat: int, spec: Seat, task: asyncio.Task[Any]) -> None:
        await asyncio.wait([task])
        if task.cancelled():
            return
        error = task.exception()
        if error is None and task.result().ended is not None:
            return  # it saw the end of the match
        if not await self._ended_early(run):
            return
        what = "stopped before the match ended"
        if error is not None:
            what = f"failed: {type(error).__name__}: {error}"
        assert isinstance(spec.bot, BuiltinBot)
        await self._gone(run, BotExit(seat, spec.name, f"built-in {spec.bot.strategy}", what))

    async def _gone(self, run: _Run, ended: BotExit) -> None:
        """Report a bot that ended early, and tell the referee not to wait for it."""
        run.exits[ended.seat] = ended
        log.info(
            "bot ended before its match",
            match_id=run.match_id,
            seat=ended.seat,
            bot=ended.name,
            what=ended.what,
        )
        if self.on_exit is not None:
            try:
                self.on_exit(ended)
            except Exception:
                log.exception("reporting a bot's exit failed")
        if run.over.is_set():
            return
        with contextlib.suppress(KeyError):
            await self.referee.seat_gone(run.match_id, ended.seat, f"its bot {ended.what}")

    # -- the end ------------------------------------------------------------------------

    async def _unseat(self, run: _Run) -> None:
        """The match is over: let the bots exit, then stop what is left of them."""
        codes = await asyncio.gather(*(p.stop(self.exit_grace_s) for _, p in run.procs))
        for (seat, proc), code in zip(run.procs, codes, strict=True):
            run.exit_codes[seat] = code
            if self.ledger is not None:
                self.ledger.remove(proc)
            if proc.jail is not None and self.sandbox is not None:
                self.sandbox.release(proc.jail)
        local = [t for t in run.tasks if not t.done()]
        if local:
            await asyncio.wait(local, timeout=self.exit_grace_s)

    def _abandon(self, run: _Run) -> None:
        """Stop everything of the match at once (also when the table is cancelled)."""
        for task in (*run.tasks, *run.watchers):
            task.cancel()
        if run.following is not None:
            run.following.cancel()
        run.gate(None, True)  # a stopped bot hears no signal but SIGKILL
        for _, proc in run.procs:
            proc.kill_group()
            proc.output.close()
            if self.ledger is not None:
                self.ledger.remove(proc)
            if proc.jail is not None and self.sandbox is not None:
                self.sandbox.release(proc.jail)


async def play_match(
    settings: MatchSettings,
    seats: Sequence[Seat],
    *,
    log_dir: Path,
    address: str = "127.0.0.1:0",
    on_exit: Callable[[BotExit], None] | None = None,
    signer: LogSigner | None = None,
    jails: Jailer | None = None,
    publish_logs: bool = False,
) -> MatchReport:
    """``referee match``: a referee in this process (its log in ``log_dir``, each spawned
    bot's output beside it as ``<match>.seat<N>.stderr``), one table, one match; the log
    signed by ``signer`` (an ephemeral key when None). Spawned bots run in ``jails``
    (None: bare); ``publish_logs``: the log is made readable by every local user once
    the match is over (it is private, 0600, while it runs).

    Raises RefereeUnavailable when the referee cannot start (address, log folder), and
    SettingsError when it refuses the settings."""
    bot_listen = jails.listen_addresses() if jails is not None else []
    referee = LocalReferee(
        address,
        log_dir,
        keep_logs=True,
        signer=signer,
        bot_listen=bot_listen,
        publish_logs=publish_logs,
    )
    try:
        await referee.start()
        if jails is not None:
            jails.opened(referee.address)
        try:
            return await Table(referee, on_exit=on_exit, sandbox=jails).play(
                settings,
                seats,
                log_path=referee.log_path,
                stderr_path=lambda match_id, seat, _: log_dir / f"{match_id}.seat{seat}.stderr",
            )
        finally:
            await referee.stop()
    finally:
        if jails is not None:
            jails.close()


__all__ = [
    "BOT_EXIT_GRACE_S",
    "BotExit",
    "MatchReport",
    "SeatReport",
    "Table",
    "TableError",
    "bot_seed",
    "describe_exit",
    "play_match",
]
