"""How a tournament jails its spawned bots: the level, what each sees, its limits, its core.

One ``Isolation`` per tournament run. Before anything starts, ``check()`` decides how
bots are jailed (``[sandbox] enabled``) and returns the warnings to print:

- ``auto`` (the default): the best jail this machine allows (``referee.sandbox.probe``):
  the full one (root, cgroup v1) or the light one (an unprivileged user namespace,
  rlimits). Where none can be made, the tournament refuses to start
  (``SandboxUnavailable``): every spawned bot could read every hand of the live logs;
- ``true``: the full jail, or the tournament refuses to start, naming what is missing;
- ``false``: bots run bare, knowingly (a warning says what they can do).

``jail()`` then makes one bot's jail for one match. What a bot sees, and hides, is
``referee.table.jails``'s (the same for ``referee match``): its own files, the system,
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
    JailSpec,
    Level,
    RefereeSocket,
    SandboxUnavailable,
    Support,
    probe,
)
from referee.table.jails import bot_identity, bot_view, jail_env, named_paths
from referee.tournament.config import (
    BotConfig,
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
        self.cores: CoreAllocator | None = None
        self.socket: RefereeSocket | None = None
        self.port = 0
        self._relay: PlayRelay | None = None
        self._specs: dict[str, tuple[list[Path], list[Path]]] = {}

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
            warnings.append(
                f"bots run in the light jail: the full one is missing "
                f"({support.why_not(Level.FULL)}). Their limits are rlimits, per process "
                "(CPU seconds, address space, processes, file size); no CPU time or memory "
                "is measured, and cpu_cores and own cores are not applied"
            )
            self.active = True
            RefereeSocket.reap_stale()
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
            self.cores = CoreAllocator(cores, REFEREE_CORES)
        return warnings

    def describe(self) -> str:
        """One line for the plan: whether and how bots are sandboxed."""
        if not self.spawns_bots:
            return "sandbox: no spawned bots"
        if not self.active:
            return "sandbox: off"
        assert self.support is not None
        limits = self.config.sandbox.limits
        if self.level is Level.LIGHT:
            return (
                f"sandbox: light jail ({self.support.version}, a user namespace); per bot "
                f"and process {limits.memory_mb} MB address space, {limits.processes} "
                f"processes, {limits.open_files} open files, {limits.tmp_mb} MB /tmp"
                + (f", {limits.cpu_s:g} s CPU" if limits.cpu_s else "")
            )
        cpu = f"{limits.cpu_s:g} s CPU" if limits.cpu_s else "no CPU-time limit"
        cores = "a core each" if self.cores is not None else "shared cores, equal shares"
        return (
            f"sandbox: {self.support.version}; per bot {limits.memory_mb} MB, {cpu}, "
            f"{limits.processes} processes, {limits.open_files} open files, "
            f"{limits.tmp_mb} MB /tmp; {cores}"
        )

    # -- the referee's end -------------------------------------------------------

    def listen_addresses(self) -> list[str]:
        """Extra addresses for a referee in this process: the sandboxes' socket."""
        if not self.active:
            return []
        self.socket = RefereeSocket()
        return [self.socket.grpc_address]

    async def start(self, referee_address: str, *, local: bool) -> None:
        """The referee listens (``local``: on our socket too, with PlayService alone);
        for a referee elsewhere, relay its PlayService from our socket."""
        if not self.active:
            return
        self.port = int(referee_address.rpartition(":")[2])
        if not local:
            self.socket = RefereeSocket()
            self._relay = PlayRelay(
                self.socket.grpc_address, referee_address, self.config.referee.client_tls
            )
            await self._relay.start()
        assert self.socket is not None
        self.socket.opened()

    @property
    def address(self) -> str:
        """The referee's address as a sandboxed bot sees it."""
        return f"127.0.0.1:{self.port}"

    @property
    def counts_cpu(self) -> bool:
        return self.level is Level.FULL

    async def close(self) -> None:
        if self._relay is not None:
            await self._relay.stop()
            self._relay = None
        if self.socket is not None:
            self.socket.close()
            self.socket = None
        if self.active and self.support is not None and self.support.cgroups is not None:
            self.support.cgroups.reap(all_runners=True)

    # -- one bot ------------------------------------------------------------------

    def _paths(self, bot: BotConfig) -> tuple[list[Path], list[Path]]:
        """What the bot may see, and what is hidden from it even there."""
        if bot.name not in self._specs:
            others = (
                named_paths(o.argv, o.cwd)
                for o in self.config.bots
                if o.kind is BotKind.COMMAND and o.name != bot.name
            )
            self._specs[bot.name] = bot_view(
                named_paths(bot.argv, bot.cwd),
                others,
                read_only=[*self.config.sandbox.read_only, *bot.read_only],
                hidden=[self.folder, self.config.source.resolve()],
            )
        return self._specs[bot.name]

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        """A sandbox for the bot ``name`` for one match (``release`` it after)."""
        assert self.active and self.socket is not None and self.support is not None
        bot = self.config.bot(name)
        visible, hidden = self._paths(bot)
        uid, gid = bot_identity(self.level)
        spec = JailSpec(
            argv=argv,
            cwd=(bot.cwd or self.config.source.parent).resolve(),
            env=jail_env(env),
            visible=visible,
            hidden=hidden,
            revealed=sorted(named_paths(bot.argv, bot.cwd)[1]),
            referee_socket=self.socket.path,
            port=self.port,
            uid=uid,
            gid=gid,
            limits=self.config.limits_for(bot),
            level=self.level,
        )
        if self.level is Level.LIGHT:
            return Jail(spec, None, bwrap=self.support.bwrap)
        assert self.support.cgroups is not None
        core = self.cores.take() if self.cores is not None else None
        return Jail(
            spec,
            self.support.cgroups,
            cpus=core or "",
            cpu_cores=self.config.sandbox.cpu_cores,
            bwrap=self.support.bwrap,
        )

    def release(self, jail: Jail) -> None:
        """Give back the bot's core, if it had one (once)."""
        if self.cores is not None and jail.cpus and jail.cpus not in self.cores.free:
            self.cores.give(jail.cpus)


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
