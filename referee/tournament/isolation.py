"""How a tournament jails its spawned bots: the level, what each sees, its limits, its core.

One ``Isolation`` per tournament run. Before anything starts, ``check()`` decides how
bots are jailed (``[sandbox] enabled``) and returns the warnings to print:

- ``auto`` (the default): the best jail this machine allows (``referee.sandbox.probe``):
  the full one (root, cgroup v1) or the light one (an unprivileged user namespace,
  rlimits). Where none can be made, the tournament refuses to start
  (``SandboxUnavailable``): every spawned bot could read every hand of the live logs;
- ``true``: the full jail, or the tournament refuses to start, naming what is missing;
- ``false``: bots run bare, knowingly (a warning says what they can do).

Its ``jailer`` (``referee.sandbox.jailer``, the one every match, tournament and ladder
uses) then makes one bot's jail for one match. What a bot sees, and hides, is
``referee.sandbox.view``'s: its own files without its author's private ones, the system,
the referee's Python; hidden even there: the tournament's folder (its live logs are in
``work/``), the configuration file (it holds the remote bots' keys), and the other
spawned bots' folders and files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.sandbox import (
    CoreAllocator,
    Jail,
    Level,
    RefereeSocket,
    SandboxLimits,
    SandboxUnavailable,
    Support,
    probe,
)
from referee.sandbox.jailer import Jailer, enforcement
from referee.sandbox.view import BotView, bot_view, named_paths
from referee.table.jails import passed_env
from referee.tournament.config import (
    BotKind,
    RemoteDeals,
    SandboxMode,
    Seatings,
    TournamentConfig,
)
from referee.tournament.playrelay import PlayRelay

REFEREE_CORES = 1
"""Cores left to the referee when bots get cores of their own."""


class Isolation:
    """The sandboxes of one tournament run."""

    def __init__(self, config: TournamentConfig, folder: Path, concurrency: int) -> None:
        self.config = config
        self.folder = folder.resolve()
        self.concurrency = concurrency
        self.support: Support | None = None
        self.level = Level.NONE
        self.active = False
        self.jailer: Jailer | None = None
        self._relay: PlayRelay | None = None
        self._views: dict[str, BotView] = {}

    @property
    def spawns_bots(self) -> bool:
        return any(b.kind is BotKind.COMMAND for b in self.config.bots)

    def check(self) -> list[str]:
        """Decide whether bots are sandboxed; the warnings to print before starting.
        Raises SandboxUnavailable when the configuration requires what cannot be."""
        sandbox = self.config.sandbox
        warnings: list[str] = []
        if not self.spawns_bots:
            return warnings
        if sandbox.mode is SandboxMode.OFF:
            warnings.append(
                "the sandbox is off ([sandbox] enabled = false): spawned bots run as this "
                "user, can read and write its files, reach the network, remember deals "
                "between matches and take CPU from each other"
            )
            return warnings
        support = self.support = probe()
        if sandbox.mode is SandboxMode.ON and not support.allows(Level.FULL):
            raise SandboxUnavailable(  # enabled = true, or own_cores = true below
                f"the full sandbox cannot work on this machine: {support.why_not(Level.FULL)} "
                '([sandbox] enabled = true; "auto" takes the light jail where it can)'
            )
        if not support.ok:
            raise SandboxUnavailable(
                f"no jail can be made for the spawned bots on this machine "
                f"({support.explain()}): every bot could read every hand from the live "
                "logs, and the tournament's files. Set [sandbox] enabled = false to run "
                "them bare knowingly"
            )
        self.level = support.level
        if self.level is Level.LIGHT:
            if sandbox.own_cores is SandboxMode.ON:
                raise SandboxUnavailable(
                    f"[sandbox] own_cores = true needs the full sandbox: "
                    f"{support.why_not(Level.FULL)}"
                )
            if support.cgroups2 is not None:
                support.cgroups2.reap()
            RefereeSocket.reap_stale()
            self.active = True
            self.jailer = self._jailer(support, None)
            return warnings
        self.active = True
        assert support.cgroups is not None
        support.cgroups.reap()
        RefereeSocket.reap_stale()
        cores = CoreAllocator.available()
        needed = 4 * self.concurrency + REFEREE_CORES
        if sandbox.own_cores is SandboxMode.ON and len(cores) < needed:
            raise SandboxUnavailable(
                f"[sandbox] own_cores = true needs {needed} cores for {self.concurrency} "
                f"match(es) at once (4 bots each, and the referee's); this process may use "
                f"{len(cores)}"
            )
        if sandbox.own_cores is not SandboxMode.OFF and len(cores) >= needed:
            if not support.cgroups.has_cpuset:
                raise SandboxUnavailable("own cores need the cpuset cgroup controller")
            self.jailer = self._jailer(support, CoreAllocator(cores, REFEREE_CORES))
        else:
            self.jailer = self._jailer(support, None)
        return warnings

    def _jailer(self, support: Support, cores: CoreAllocator | None) -> Jailer:
        return Jailer(
            support,
            self._view,
            self._limits,
            passed_env=passed_env(),
            cores=cores,
            cpu_cores=self.config.sandbox.cpu_cores,
        )

    def describe(self, *, limits: bool = False) -> list[str]:
        """The plan's lines: whether and how bots are sandboxed, and (``limits``) what
        holds each limit on this host."""
        if not self.spawns_bots:
            return ["sandbox: no spawned bots"]
        if self.jailer is None:
            return ["sandbox: off"]
        support = self.jailer.support
        cores = self.jailer.cores is not None
        head = f"sandbox: {self.level.describe()}, {support.describe()}; " + (
            "a core per bot" if cores else "shared cores"
        )
        if not limits:
            return [head + " (--dry-run: what holds each limit)"]
        held = enforcement(support, self.level, self.config.sandbox.limits)
        return [head, *(f"  {line}" for line in held)]

    # -- the referee's end -------------------------------------------------------

    def listen_addresses(self) -> list[str]:
        """Extra addresses for a referee in this process: the sandboxes' socket."""
        return self.jailer.listen_addresses() if self.jailer is not None else []

    async def start(self, referee_address: str, *, local: bool) -> None:
        """The referee listens (``local``: on our socket too, with PlayService alone);
        for a referee elsewhere, relay its PlayService from our socket."""
        if self.jailer is None:
            return
        if not local:
            socket = self.jailer.socket = RefereeSocket()
            self._relay = PlayRelay(
                socket.grpc_address, referee_address, self.config.referee.client_tls
            )
            await self._relay.start()
        self.jailer.opened(referee_address)

    @property
    def address(self) -> str:
        """The referee's address as a sandboxed bot sees it."""
        assert self.jailer is not None
        return self.jailer.address

    @property
    def counts_cpu(self) -> bool:
        return self.jailer is not None

    async def close(self) -> None:
        if self._relay is not None:
            await self._relay.stop()
            self._relay = None
        if self.jailer is not None:
            self.jailer.close()
            support = self.jailer.support
            if support.cgroups is not None:
                support.cgroups.reap(all_runners=True)
            if support.cgroups2 is not None:
                support.cgroups2.reap(all_runners=True)

    # -- one bot ------------------------------------------------------------------

    def _view(self, name: str) -> BotView:
        """What the bot may see, and what is hidden from it even there (made once)."""
        if name not in self._views:
            bot = self.config.bot(name)
            others = (
                named_paths(o.argv, o.cwd)
                for o in self.config.bots
                if o.kind is BotKind.COMMAND and o.name != name
            )
            self._views[name] = bot_view(
                named_paths(bot.argv, bot.cwd),
                others,
                cwd=bot.cwd or self.config.source.parent,
                read_only=[*self.config.sandbox.read_only, *bot.read_only],
                hidden=[self.folder, self.config.source.resolve()],
            )
        return self._views[name]

    def _limits(self, name: str) -> SandboxLimits:
        return self.config.limits_for(self.config.bot(name))

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        """A sandbox for the bot ``name`` for one match (``release`` it after)."""
        assert self.jailer is not None
        return self.jailer.jail(name, argv, env)

    def release(self, jail: Jail) -> None:
        if self.jailer is not None:
            self.jailer.release(jail)


def remote_warnings(config: TournamentConfig) -> list[str]:
    """Remote bots run outside any sandbox: what that means for duplicate deals, to
    print before a tournament starts."""
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


__all__ = ["Isolation", "SandboxUnavailable", "remote_warnings"]
