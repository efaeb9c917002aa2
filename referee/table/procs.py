"""Bot processes: spawned in a session of their own, stopped with everything they started.

Each spawned bot leads a new process group (``start_new_session``), so killing the
group after its match also stops any helper it forked. Its stdout and stderr are one
pipe that the table reads (``referee.table.output``: one file per seat of the match,
created private (0600: a bot's output may name its cards), each line's arrival timed,
bounded). A bot run bare gets the environment it is given
(``referee.table.jails.bare_env``), never the referee's. A ledger file lists the groups
alive right now, so that a
tournament runner that was killed outright can stop, on its next start, the bots it left
behind (checked against the process start time, so a recycled pid is never hit).

A bot may run in a sandbox (``referee.sandbox.Jail``): then the process spawned is the
sandbox's launcher, the exit status is the bot's (a signal shows as 128 + its number
from inside, turned back into a negative status here), and stopping the bot also kills
everything in its cgroups, even what left its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.files import replace_private_file
from referee.sandbox import Jail, JailReport
from referee.table.output import DEFAULT_LIMIT, BotOutput

OUTPUT_DRAIN_S = 1.0
"""After a bot has exited, how long its last output may take to be read (a process that
left its group may hold the pipe open: then the output is closed without it)."""


def _stat_fields(pid: int | str) -> list[str]:
    """/proc/PID/stat from its third field on (Linux); empty when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return stat.rpartition(")")[2].split()


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), or None if unknown."""
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else None


def _group_alive(pgid: int) -> bool:
    """Whether some process is in group ``pgid``. While one is, the kernel does not hand
    the number out as a new pid, so the group is still the one we started."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(entry.name)
            if len(fields) > 2 and fields[2] == str(pgid):
                return True
    return False


@dataclasses.dataclass
class BotProcess:
    """A spawned bot and what became of it."""

    proc: asyncio.subprocess.Process
    output: BotOutput
    """Its stdout and stderr, as they are read."""
    started: str | None
    ended_early: bool = False
    """The process ended before its match did."""
    jail: Jail | None = None
    """The bot's sandbox, if it runs in one."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def stderr_path(self) -> Path:
        return self.output.path

    @property
    def returncode(self) -> int | None:
        return _status(self.proc.returncode, self.jail is not None)

    @property
    def report(self) -> JailReport | None:
        """What the sandbox saw (limits broken, CPU time), once the bot is stopped."""
        return self.jail.report if self.jail is not None else None

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path | None,
        stderr_path: Path,
        jail: Jail | None = None,
        output_limit: int = DEFAULT_LIMIT,
    ) -> BotProcess:
        """Start the bot (in ``jail`` when given, which then owns ``argv``, ``env`` and
        ``cwd``) with ``env`` as its whole environment, its output read into
        ``stderr_path`` (at most ``output_limit`` bytes, or the jail's own limit); OSError
        when the program or its sandbox cannot be started."""
        fds: tuple[int, ...] = ()
        output: BotOutput | None = None
        write_fd = -1
        try:
            if jail is None:
                command, environ = list(argv), dict(env)
            else:
                command, environ, fds = jail.open()
                cwd = None
            limit = jail.spec.limits.stderr_bytes if jail is not None else output_limit
            output = BotOutput(stderr_path, limit)
            read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
            await output.attach(read_fd)
            proc = await asyncio.create_subprocess_exec(
                *command,
                env=environ,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                pass_fds=fds,
            )
        except BaseException:
            if output is not None:
                output.close()
            if jail is not None:
                await jail.close()
            raise
        finally:
            if write_fd >= 0:
                os.close(write_fd)  # the bot holds the only write end: its end is EOF
        if jail is not None:
            jail.spawned(proc)
        return cls(proc, output, _start_time(proc.pid), jail=jail)

    async def wait(self, within: float) -> int | None:
        """The exit status once the bot exits, or None if it is still running after
        ``within`` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), within)
        return self.returncode

    def kill_group(self) -> None:
        """SIGKILL the bot's whole process group (also after the leader has exited),
        and everything in its sandbox."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.jail is not None:
            self.jail.kill()

    async def stop(self, grace: float) -> int | None:
        """Give the bot ``grace`` seconds to exit, then kill its group; its exit status
        (negative: the signal that ended it)."""
        code = await self.wait(grace)
        self.kill_group()
        if code is None:
            with contextlib.suppress(ProcessLookupError):
                await asyncio.wait_for(self.proc.wait(), 5.0)
                code = self.returncode
        if self.jail is not None:
            await self.jail.close()
        await self.output.closed(OUTPUT_DRAIN_S)
        self.output.close()
        return code


def _status(code: int | None, sandboxed: bool) -> int | None:
    """A sandboxed bot killed by signal N exits (through bubblewrap) with 128 + N.

    >>> _status(137, True), _status(137, False), _status(-9, True), _status(1, True)
    (-9, 137, -9, 1)
    """
    if sandboxed and code is not None and 128 < code < 160:
        return 128 - code
    return code


class ProcessLedger:
    """The process groups of bots alive now, in a small JSON file rewritten on change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.alive: dict[int, str | None] = {}

    def add(self, bot: BotProcess) -> None:
        self.alive[bot.pid] = bot.started
        self._write()

    def remove(self, bot: BotProcess) -> None:
        if self.alive.pop(bot.pid, False) is not False:
            self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = json.dumps([[pid, st] for pid, st in self.alive.items()]).encode()
        replace_private_file(self.path, data)

    def reap_leftovers(self) -> int:
        """Kill the groups a previous run left alive; how many were still there."""
        try:
            entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return 0
        killed = 0
        for pid, started in entries:
            if not isinstance(pid, int) or pid <= 1:
                continue
            now = _start_time(pid)
            if now is None:
                if not _group_alive(pid):
                    continue  # the leader and all it started are gone
            elif started is not None and now != started:
                continue  # the pid now belongs to another process
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
                killed += 1
        self.alive.clear()
        self._write()
        return killed


__all__ = ["BotProcess", "ProcessLedger"]
