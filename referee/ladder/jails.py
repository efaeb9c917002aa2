"""The jails of a ladder's spawned bots: every uploaded version runs in one, always.

An uploaded archive comes from someone the ladder does not trust, so there is no
``--sandbox off`` here: where no jail can be made (``referee.sandbox.probe``), the ladder
refuses to play (``SandboxUnavailable``), naming what is missing.

What a version sees, read-only: the system (/usr, /etc, /opt), the Python that runs the
referee with the Python kit, and its own unpacked folder, which is its working folder.
Nothing else of the ladder's folder: not the database, the logs (which hold every hand
from a match's first event), the other versions' folders, the bots' output. Unlike a
tournament's bots, a version's visible paths are not read from its command (an archive
could name anything there, or hold a ``pyvenv.cfg`` pointing elsewhere): they are
exactly its folder and the runtime. A ladder folder inside the runtime's folders would
be visible through them, so that is refused too.

A worker's jails (``LadderJails``, one per referee) serve every match it plays here;
on a Ray node a match's task makes its own (``NodeJails``, from a picklable recipe),
for its referee of one match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.sandbox import (
    Jail,
    JailSpec,
    Level,
    RefereeSocket,
    SandboxLimits,
    SandboxUnavailable,
    Support,
    probe,
)
from referee.table.jails import bot_identity, jail_env, runtime_paths


def ladder_support(folder: Path, support: Support | None = None) -> Support:
    """The machine's best jail for the ladder at ``folder``; SandboxUnavailable when none
    can be made, or when the folder would be visible from inside one."""
    support = support or probe()
    if support.level is Level.NONE:
        raise SandboxUnavailable(
            f"no jail can be made for uploaded bots on this machine ({support.explain()}); "
            "a ladder never runs them bare (docs/ladder.md, Jails)"
        )
    folder = folder.resolve()
    for path in runtime_paths():
        if folder == path or path in folder.parents:
            raise SandboxUnavailable(
                f"the ladder's folder {folder} is inside {path}, which every jailed bot "
                "sees (the referee's Python): put the ladder's folder elsewhere"
            )
    return support


class LadderJails:
    """One referee's jails (a worker's): the referee's socket bridged into each, made
    once; per match, which folder each seat's version runs in (``for_match``)."""

    def __init__(self, support: Support, limits: SandboxLimits) -> None:
        if support.level is Level.NONE:
            raise SandboxUnavailable("no jail: a ladder never runs uploaded bots bare")
        self.support = support
        self.level = support.level
        self.limits = limits
        self.uid, self.gid = bot_identity(self.level)
        self.socket: RefereeSocket | None = None
        self.port = 0
        self._runtime = runtime_paths()

    def listen_addresses(self) -> list[str]:
        """The extra address of the referee: the jails' socket (PlayService only)."""
        self.socket = RefereeSocket()
        return [self.socket.grpc_address]

    def opened(self, referee_address: str) -> None:
        assert self.socket is not None
        self.port = int(referee_address.rpartition(":")[2])
        self.socket.opened()

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None

    def for_match(self, folders: Mapping[str, Path]) -> MatchJails:
        """The jails of one match: seat name -> the folder of the version in it."""
        return MatchJails(self, dict(folders))

    def make(self, folder: Path, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        assert self.socket is not None
        spec = JailSpec(
            argv=argv,
            cwd=folder,
            env=jail_env(env),
            visible=[folder, *self._runtime],
            referee_socket=self.socket.path,
            port=self.port,
            uid=self.uid,
            gid=self.gid,
            limits=self.limits,
            level=self.level,
        )
        cgroups = self.support.cgroups if self.level is Level.FULL else None
        return Jail(spec, cgroups, bwrap=self.support.bwrap or "bwrap")


class MatchJails:
    """A ``referee.sandbox.Jailer`` for one match's table."""

    def __init__(self, jails: LadderJails, folders: dict[str, Path]) -> None:
        self.jails = jails
        self.folders = folders

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.jails.port}"

    @property
    def counts_cpu(self) -> bool:
        return self.jails.level is Level.FULL

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        return self.jails.make(self.folders[name], argv, env)

    def release(self, jail: Jail) -> None:
        pass


class NodeJails:
    """The jails of one match on a Ray node: a ``WorkerSandbox`` of the Ray backend,
    made there (``check`` probes the node) for that node's referee of one match.

    Picklable until ``check``: the task carries the limits and each seat's folder."""

    active = True
    """Never bare: a node that cannot jail fails the match (``check``)."""

    def __init__(self, limits: SandboxLimits, folders: Mapping[str, Path]) -> None:
        self.limits = limits
        self.folders = dict(folders)
        self.jails: LadderJails | None = None
        self.match: MatchJails | None = None

    def check(self) -> list[str]:
        """SandboxUnavailable when this node cannot make a jail."""
        support = probe()
        if support.level is Level.NONE:
            raise SandboxUnavailable(
                f"no jail can be made for uploaded bots on this Ray node ({support.explain()})"
            )
        self.jails = LadderJails(support, self.limits)
        self.match = self.jails.for_match(self.folders)
        return []

    def listen_addresses(self) -> list[str]:
        assert self.jails is not None, "check() first"
        return self.jails.listen_addresses()

    async def start(self, referee_address: str, *, local: bool) -> None:
        assert self.jails is not None, "check() first"
        self.jails.opened(referee_address)

    async def close(self) -> None:
        if self.jails is not None:
            self.jails.close()

    @property
    def address(self) -> str:
        assert self.match is not None, "check() first"
        return self.match.address

    @property
    def counts_cpu(self) -> bool:
        return self.match is not None and self.match.counts_cpu

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        assert self.match is not None, "check() first"
        return self.match.jail(name, argv, env)

    def release(self, jail: Jail) -> None:
        pass


__all__ = ["LadderJails", "MatchJails", "NodeJails", "SandboxUnavailable", "ladder_support"]
