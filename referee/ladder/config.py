"""A ladder's TOML configuration, read and checked before anything starts.

Every mistake is a ``ConfigError`` naming the key at fault, read with the tournament's
typed table reader (``referee.tournament.config``): the ``[rules]``, ``[time]``,
``[faults]`` and sandbox limits of a ladder are a tournament's, so an organiser writes
them once. A configuration, in full (every table optional)::

    [ladder]
    name = "club ladder"
    folder = "ladder-data"        # relative to this file: database, versions, logs
    # database = "postgresql+psycopg://ladder@/ladder?host=/run/postgresql"
    anchors = ["random", "greedy"] # the house's built-in bots, always ranked
    # pool = "v1"                 # a benchmark pool (docs/benchmark.md): its anchors are the
    #                             #   house's bots (unless anchors is given), and a new version
    #                             #   gets the quick benchmark's score before it is rated
    # first_score = true          # with a pool: set false to skip the quick benchmark
    public_url = ""               # how entrants reach the web (shown by team create)

    [rules]                       # as a tournament's
    profile = "pusoy-dos"
    hands = 2

    [time]                        # as a tournament's
    turn_time_ms = 1000
    connect_timeout_ms = 10000
    match_timeout_s = 600

    [matchmaking]
    seatings = "rotations"        # rotations (duplicate deals, 4 seatings) | none
    queue = 8                     # ranked matches kept waiting in the queue
    validation_hands = 1          # hands of an upload's validation match

    [workers]
    count = 0                     # worker processes (ray: matches at once); 0: one per core
    lease_s = 30                  # a dead worker's match is played again after this
    backend = "local"             # local (worker processes here) | ray (tasks on a Ray cluster)
    # address = "auto"            # ray: "auto", a cluster's host:port; unset: a Ray of its own

    [lobby]
    address = ""                  # "127.0.0.1:50070": remote bots join here with a key
    wait_s = 30                   # a remote bot offline this long: its queued matches go
    insecure = false              # true: keys from other machines in clear (a TLS tunnel)

    [web]                         # referee ladder serve
    trusted_proxies = []          # ["127.0.0.1", "::1"]: proxies whose Forwarded /
                                  # X-Forwarded-For (and -Proto) name the client
    uploads_at_once = 8           # uploads received at once, all teams
    team_uploads_at_once = 2      # ... and of one team

    [limits]                      # per team (TeamLimits) and per archive (ArchiveLimits)
    uploads_per_hour = 10
    disk_mb = 512
    versions_kept = 5
    archive_mb = 64
    unpacked_mb = 256
    files = 10000

    [sandbox]                     # each spawned bot's limits (a tournament's keys)
    memory_mb = 1024

    [[entry]]                     # bots `referee ladder init` uploads (examples/ladder.toml)
    team = "examples-weak"
    bot = "weak"
    files = ["weak_bot.py"]       # relative to this file, packed into the archive
    command = ["weak_bot.py"]     # runtime python: run by the referee's Python
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.bots import BUILTIN_BOTS
from referee.ladder.storage.db import sqlite_url
from referee.ladder.storage.records import TeamLimits
from referee.ladder.uploads.archive import ArchiveLimits
from referee.ladder.uploads.manifest import RUNTIMES
from referee.llm import is_model_seat, model_seat_name
from referee.match.settings import MatchSettings
from referee.rules import Rules
from referee.sandbox import LIMIT_FIELDS, SandboxLimits
from referee.toml_table import ConfigError, TomlTable, read_config, toml_key
from referee.tournament.toml_reader import parse_limits, parse_match_tables, parse_rules

MIB = 1024 * 1024
SEATINGS = ("rotations", "none")
BACKENDS = ("local", "ray")


class _Subfolder:
    """A folder of the ladder's data, below its ``folder``: each declared by its name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, config: LadderConfig, owner: object = None) -> Path:
        return config.folder / self.name


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    """A bot ``referee ladder init`` packs from files and uploads for a team."""

    team: str
    bot: str
    files: tuple[Path, ...]
    runtime: str
    command: tuple[str, ...]
    description: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class LadderConfig:
    source: Path
    name: str
    folder: Path
    database: str
    anchors: tuple[str, ...]
    public_url: str
    settings: MatchSettings
    """Every match's settings but its seats and seed: ``[rules]``, ``[time]``, ``[faults]``."""
    match_timeout_s: float
    seatings: str
    queue: int
    validation_hands: int
    workers: int
    lease_s: float
    backend: str
    """Where the workers play: ``local`` (a referee in each worker process) or ``ray``."""
    ray_address: str
    """ray: the cluster's address (``auto``, ``host:port``); empty: a Ray of its own."""
    lobby_address: str
    lobby_wait_s: float
    lobby_insecure: bool
    team_limits: TeamLimits
    archive_limits: ArchiveLimits
    bot_limits: SandboxLimits
    entries: tuple[Entry, ...]
    pool: str = ""
    """A benchmark pool (``[ladder] pool``): the default house bots, and with
    ``first_score`` the quick benchmark a new version plays before it is rated."""
    first_score: bool = False
    trusted_proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    """The web's reverse proxies whose forwarding headers name the client
    (``referee.web.forwarded``); none by default."""
    uploads_at_once: int = toml_key(8, low=1, high=1000)
    team_uploads_at_once: int = toml_key(2, low=1, high=1000)

    @property
    def rules(self) -> Rules:
        return self.settings.rules

    # -- the folder ----------------------------------------------------------------------

    versions_dir = _Subfolder("versions")
    """Unpacked archives, one read-only folder per archive (its SHA-256)."""
    archives_dir = _Subfolder("archives")
    """Uploaded archives as they came, kept beside their unpacked folders."""
    logs_dir = _Subfolder("logs")
    stderr_dir = _Subfolder("stderr")
    state_dir = _Subfolder("state")
    """The log signing key and the web's session key (mode 0700; never publish)."""
    work_dir = _Subfolder("work")
    """The workers' referees' live logs and process ledgers."""

    def worker_count(self) -> int:
        if self.workers:
            return self.workers
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            return max(1, os.cpu_count() or 1)

    def match_settings(self, seed: str, names: Sequence[str], *, hands: int = 0) -> MatchSettings:
        """The settings of one match (``hands``: a validation match's, shorter)."""
        rules = self.rules
        if hands:
            rules = rules.with_options({"match_end": f"hands {hands}"})
        return dataclasses.replace(
            self.settings,
            rules=rules,
            seat_names=(names[0], names[1], names[2], names[3]),
            seed=seed,
        )

    def seatings_per_group(self, remote: bool) -> int:
        """Rotations give every version every seat of the same deals; a group with a
        remote bot (not sandboxed: it could remember a deal) is one match."""
        return 1 if remote or self.seatings == "none" else 4


def load_ladder_config(path: Path) -> LadderConfig:
    """Read and check a ladder's configuration file; raises ConfigError."""
    return read_config(path, parse_ladder_config)


def parse_ladder_config(data: Mapping[str, Any], source: Path) -> LadderConfig:
    top, base = TomlTable.top(data, source)
    la = top.table("ladder")
    name = la.text("name", "ladder") or "ladder"
    folder = (base / (la.text("folder", "ladder-data") or "ladder-data")).resolve()
    database = la.text("database", "") or sqlite_url(folder / "ladder.db")
    pool = la.text("pool", "") or ""
    pool_anchors = ["random", "greedy"]
    if pool:
        from referee.benchmark.pool import PoolError, load_pool

        try:
            pool_anchors = load_pool(pool).names()
        except PoolError as exc:
            raise ConfigError("ladder.pool", str(exc)) from None
    first_score = la.flag("first_score", bool(pool))
    if first_score and not pool:
        raise ConfigError("ladder.first_score", "a first score needs a benchmark pool (pool)")
    anchors = _names(la, "anchors", pool_anchors)
    for i, anchor in enumerate(anchors):
        if is_model_seat(anchor):  # a language model of the house: llm:SETTINGS
            anchors[i] = model_seat_name(anchor, base)
        elif anchor not in BUILTIN_BOTS:
            raise ConfigError("ladder.anchors", f"{anchor!r} is not a built-in bot")
    public_url = la.text("public_url", "") or ""
    la.done()

    rules = parse_rules(top.table("rules"))
    settings, match_timeout_s = parse_match_tables(rules, top.table("time"), top.table("faults"))

    mm = top.table("matchmaking")
    seatings = mm.text("seatings", "rotations") or ""
    if seatings not in SEATINGS:
        raise ConfigError("matchmaking.seatings", f"{seatings!r} is not one of {SEATINGS}")
    queue = mm.whole("queue", 8, low=1, high=1000)
    validation_hands = mm.whole("validation_hands", 1, low=1, high=100)
    mm.done()

    wk = top.table("workers")
    workers = wk.whole("count", 0, high=256)
    lease_s = wk.number("lease_s", 30.0, low=2.0)
    backend = wk.text("backend", "local") or ""
    if backend not in BACKENDS:
        raise ConfigError("workers.backend", f"{backend!r} is not one of {BACKENDS}")
    ray_address = wk.text("address", "") or ""
    if ray_address and backend != "ray":
        raise ConfigError("workers.address", 'is the Ray cluster\'s: only with backend = "ray"')
    wk.done()

    lb = top.table("lobby")
    lobby_address = lb.text("address", "") or ""
    lobby_wait_s = lb.number("wait_s", 30.0, low=1.0)
    lobby_insecure = lb.flag("insecure", False)
    lb.done()

    wb = top.table("web")
    proxies = []
    for i, text in enumerate(_names(wb, "trusted_proxies", [])):
        try:
            proxies.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ConfigError(
                f"web.trusted_proxies[{i}]", f"{text!r} is not an IP address or network"
            ) from None
    uploads = wb.keys(LadderConfig)
    wb.done()

    li = top.table("limits")
    team_limits = TeamLimits(
        uploads_per_hour=li.whole("uploads_per_hour", 10, low=1, high=100_000),
        disk_bytes=li.whole("disk_mb", 512, low=1, high=1 << 30) * MIB,
        versions_kept=li.whole("versions_kept", 5, high=100_000),
    )
    archive_limits = ArchiveLimits(
        max_archive_bytes=li.whole("archive_mb", 64, low=1, high=4096) * MIB,
        max_unpacked_bytes=li.whole("unpacked_mb", 256, low=1, high=1 << 20) * MIB,
        max_files=li.whole("files", 10_000, low=2, high=10_000_000),
    )
    li.done()

    sb = top.table("sandbox")
    bot_limits = SandboxLimits().merged(parse_limits(sb, LIMIT_FIELDS))
    sb.done()

    entries = _parse_entries(top.raw("entry"), base)
    top.done()
    return LadderConfig(
        source=Path(source).resolve(),
        name=name,
        folder=folder,
        database=database,
        anchors=tuple(anchors),
        pool=pool,
        first_score=first_score,
        public_url=public_url,
        settings=settings,
        match_timeout_s=match_timeout_s,
        seatings=seatings,
        queue=queue,
        validation_hands=validation_hands,
        workers=workers,
        lease_s=lease_s,
        backend=backend,
        ray_address=ray_address,
        lobby_address=lobby_address,
        lobby_wait_s=lobby_wait_s,
        lobby_insecure=lobby_insecure,
        team_limits=team_limits,
        archive_limits=archive_limits,
        bot_limits=bot_limits,
        entries=entries,
        trusted_proxies=tuple(proxies),
        uploads_at_once=uploads["uploads_at_once"],
        team_uploads_at_once=min(uploads["team_uploads_at_once"], uploads["uploads_at_once"]),
    )


def _names(t: TomlTable, key: str, default: list[str]) -> list[str]:
    raw = t.raw(key)
    if raw is None:
        return default
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise ConfigError(t._at(key), "should be a list of names")
    return list(dict.fromkeys(raw))


def _parse_entries(raw: Any, base: Path) -> tuple[Entry, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError("entry", "should be an array of tables ([[entry]])")
    from referee.ladder.errors import LadderError
    from referee.ladder.storage.store import check_name  # the store's rule for names

    out = []
    for i, item in enumerate(raw):
        t = TomlTable(item, f"entry[{i}]")
        team = t.text("team") or ""
        bot = t.text("bot") or ""
        for key, value in (("team", team), ("bot", bot)):
            try:
                check_name(key, value)
            except LadderError as exc:
                raise ConfigError(f"entry[{i}].{key}", str(exc)) from None
        files = []
        for text in _names(t, "files", []):
            path = (base / text).resolve()
            if not path.is_file():
                raise ConfigError(f"entry[{i}].files", f"{path} is not a file")
            files.append(path)
        if not files:
            raise ConfigError(f"entry[{i}].files", "name the files to pack (at least one)")
        runtime = t.text("runtime", "python") or ""
        if runtime not in RUNTIMES:
            raise ConfigError(f"entry[{i}].runtime", f"{runtime!r} is not one of {list(RUNTIMES)}")
        command = _names(t, "command", [])
        if not command:
            raise ConfigError(f"entry[{i}].command", "give the command as a list of words")
        description = t.text("description", "") or ""
        t.done()
        out.append(Entry(team, bot, tuple(files), runtime, tuple(command), description))
    return tuple(out)


__all__ = ["ConfigError", "Entry", "LadderConfig", "load_ladder_config", "parse_ladder_config"]
