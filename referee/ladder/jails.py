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

A worker's jailer (``ladder_jailer``, the one ``referee.sandbox.jailer`` every match and
tournament uses, one per referee) serves every match it plays here, each seating its
versions (``folder_views``); on a Ray node a match's task makes its own (``NodeJails``,
from a picklable recipe), for its referee of one match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.sandbox import Jail, Level, SandboxLimits, SandboxUnavailable, Support, probe
from referee.sandbox.jailer import Jailer, ViewOf
from referee.sandbox.view import folder_view, runtime_paths
from referee.table.jails import passed_env


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


def folder_views(folders: Mapping[str, Path]) -> ViewOf:
    """Seat name -> the view of the version in it: its own folder and the runtime."""
    views = {name: folder_view(folder) for name, folder in folders.items()}
    return views.__getitem__


def ladder_jailer(support: Support, limits: SandboxLimits) -> Jailer:
    """One referee's jails (a worker's), made once; each match seats its versions with
    ``jailer.seating(folder_views(folders))``."""
    if support.level is Level.NONE:
        raise SandboxUnavailable("no jail: a ladder never runs uploaded bots bare")
    return Jailer(support, folder_views({}), limits, passed_env=passed_env())


class NodeJails:
    """The jails of one match on a Ray node: a ``WorkerSandbox`` of the Ray backend,
    made there (``check`` probes the node) for that node's referee of one match.

    Picklable until ``check``: the task carries the limits and each seat's folder."""

    active = True
    """Never bare: a node that cannot jail fails the match (``check``)."""

    def __init__(self, limits: SandboxLimits, folders: Mapping[str, Path]) -> None:
        self.limits = limits
        self.folders = dict(folders)
        self.jailer: Jailer | None = None

    def check(self) -> list[str]:
        """SandboxUnavailable when this node cannot make a jail."""
        support = probe()
        if support.level is Level.NONE:
            raise SandboxUnavailable(
                f"no jail can be made for uploaded bots on this Ray node ({support.explain()})"
            )
        self.jailer = ladder_jailer(support, self.limits).seating(folder_views(self.folders))
        return []

    def _ready(self) -> Jailer:
        assert self.jailer is not None, "check() first"
        return self.jailer

    def listen_addresses(self) -> list[str]:
        return self._ready().listen_addresses()

    async def start(self, referee_address: str, *, local: bool) -> None:
        self._ready().opened(referee_address)

    async def close(self) -> None:
        if self.jailer is not None:
            self.jailer.close()

    @property
    def address(self) -> str:
        return self._ready().address

    @property
    def counts_cpu(self) -> bool:
        return self.jailer is not None

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        return self._ready().jail(name, argv, env)

    def release(self, jail: Jail) -> None:
        pass


__all__ = ["NodeJails", "SandboxUnavailable", "folder_views", "ladder_jailer", "ladder_support"]
