"""A tournament's configuration: the frozen, checked value a TOML file is read into
(``referee.tournament.toml_reader``, before anything starts).

Every mistake is a ``ConfigError`` naming the key at fault (``bot[3].command: ...``), so
an organiser learns about a missing program, an unknown profile or too few bots before
the first match, not an hour in. ``identity()`` is the part that decides which matches
are played and how, and its hash names the tournament's folder contents (see
``referee.tournament.results``).

A configuration, in full (only ``[[bot]]`` entries are required)::

    [tournament]
    name = "club night"
    seed = "2026-12-01"          # master seed; each match's seed is derived from it
    format = "round-robin"       # round-robin | gauntlet | fixed
    rounds = 2                   # deal groups per table; or matches = N (at least N)
    hero = "mine"                # gauntlet: the bot that plays every table
    table = ["a", "b", "c", "d"] # fixed: the four bots of the one table
    seatings = "rotations"       # rotations (4) | permutations (24) | none
    deals = "per-table"          # per-table | per-round (every table of a round: one deal)
    remote_deals = "shared"      # shared | unseen (remote bots never see a deal twice)
    concurrency = 2
    output = "club-night"        # relative to this file's folder

    [rules]
    profile = "pusoy-dos"
    hands = 4                    # or threshold = 30
    options = { revolution = true }

    [time]
    turn_time_ms = 2000
    connect_timeout_ms = 10000
    time_bank_ms = 0
    match_timeout_s = 1800

    [faults]
    max_rejections_per_turn = 3
    max_strikes = 0
    max_actions_out_of_turn = 16

    [referee]
    address = "127.0.0.1:0"      # where the in-process referee listens
    # tls_cert = "server.pem"    # its certificate and key (TLS); with tls_client_ca,
    # tls_key = "server.key"     #   bots must show a certificate signed by that CA
    # tls_client_ca = "bots-ca.pem"
    # insecure = false           # true: plaintext on an address other machines reach
    # server = "10.0.0.5:50051"  # or: use this running `referee serve` instead
    # organiser_token_file = "token"   # its organiser token (referee serve prints the path)
    # organiser_address = "10.0.0.5:50052"  # its organiser listener, if it has its own
    # ca_file = "ca.pem"         # clients (this process's, and spawned bots through
    # client_cert = "me.pem"     #   {ca_file} {client_cert} {client_key} and
    # client_key = "me.key"      #   PUSOY_TLS_CA ...): trust this CA, show this cert
    # server_name = "referee.example"  # the name to check in the referee's certificate
    lobby_wait_s = 60
    verify_logs = true

    [execution]                  # where matches are played
    backend = "local"            # local (this process) | ray (tasks on a Ray cluster)
    # address = "auto"           # ray: "auto", a cluster's host:port, or unset for a local Ray
    cpus_per_match = 1           # ray: CPUs a match task asks for
    max_attempts = 3             # ray: plays of a match whose node dies before it is lost

    [sprt]                       # gauntlet only: stop once the hero is shown better or not
    baseline = "old"             # the bot the hero is compared with
    delta0 = 0.0                 # H0: the hero's advantage in score per hand
    delta1 = 0.5                 # H1 (required)
    alpha = 0.05                 # false positive rate
    beta = 0.05                  # false negative rate
    min_groups = 10              # no decision before this many deal groups

    [sandbox]                    # spawned bots (referee.sandbox, referee.tournament.isolation)
    enabled = "auto"             # auto: best jail, none: refuse | true: full jail | false
    memory_mb = 1024
    cpu_s = 0                    # 0: no limit
    processes = 128
    open_files = 1024
    tmp_mb = 64
    stderr_kb = 1024
    read_only = []
    own_cores = "auto"           # auto | true | false
    cpu_cores = 0                # 0: no quota

    [disqualify]                 # referee.tournament.disqualify; all off by default
    crashes = 0
    breaches = 0
    fault_rate = 0.0
    faulty_turns = 3
    min_matches = 4
    replacement = "random"       # random | greedy | forfeit

    [[bot]]
    name = "greedy"
    builtin = "greedy"

    [[bot]]
    name = "mine"
    command = "{python} my_bot.py --depth 3"  # address and token: PUSOY_ADDRESS, PUSOY_TOKEN
    limits = { memory_mb = 2048 }  # over [sandbox]'s
    read_only = ["data"]

    [[bot]]
    name = "plain"
    stdio = "./plain_bot --seat {seat}"  # JSON lines on stdin/stdout, through the bridge

    [[bot]]
    name = "far-away"
    key = "a-secret-bot-key"
    max_matches = 2
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.bots import BUILTIN_BOTS
from referee.client.tls import ClientTls
from referee.match.settings import SETTINGS, MatchSettings
from referee.rules import Rules
from referee.sandbox.limits import SandboxLimits
from referee.table.bots import PLACEHOLDERS, BuiltinBot, CommandBot, RemoteBot
from referee.toml_table import ConfigError, toml_key

if TYPE_CHECKING:
    from referee.table.referees import ServerTls

IDENTITY_VERSION = 1
DEFAULT_MATCH_TIMEOUT_S = 1800.0
DEFAULT_ADDRESS = "127.0.0.1:0"
DEFAULT_LOBBY_WAIT_S = 60.0
DEFAULT_SPRT_MIN_GROUPS = 10
DEFAULT_MAX_ATTEMPTS = 3


class Format(enum.StrEnum):
    """Which tables are played."""

    ROUND_ROBIN = "round-robin"
    """Every set of four bots is a table (one table when there are exactly four)."""
    GAUNTLET = "gauntlet"
    """The hero against every set of three other bots."""
    FIXED = "fixed"
    """One table of four named bots."""


class Seatings(enum.StrEnum):
    """How each deal group seats its four bots (the duplicate format)."""

    ROTATIONS = "rotations"
    """Four matches per seed: every bot in every seat, relative order kept."""
    PERMUTATIONS = "permutations"
    """All 24 orders of the four bots, one match each per seed."""
    NONE = "none"
    """One match per seed (no duplicate); the seating rotates from group to group."""

    @property
    def per_group(self) -> int:
        return {"rotations": 4, "permutations": 24, "none": 1}[self.value]


class Backend(enum.StrEnum):
    """Where a tournament's matches are played (``referee.backends``)."""

    LOCAL = "local"
    """At tables in this process, with the tournament's own referee."""
    RAY = "ray"
    """As Ray tasks on a cluster: each task runs a referee and the match's bots."""


class BotKind(enum.StrEnum):
    BUILTIN = "builtin"
    COMMAND = "command"
    REMOTE = "remote"


@dataclasses.dataclass(frozen=True, slots=True)
class BotConfig:
    """One entrant: a built-in bot, a command spawned for each match, or a remote bot."""

    name: str
    kind: BotKind
    builtin: str = ""
    argv: tuple[str, ...] = ()
    """The command, split into words, placeholders not yet replaced."""
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None
    key: str = dataclasses.field(default="", repr=False)
    max_matches: int = 0
    """Remote bots: the organiser's limit on matches at once (0: the bot's own)."""
    limits: tuple[tuple[str, float], ...] = ()
    """Command bots: its own sandbox limits, over the ``[sandbox]`` ones."""
    read_only: tuple[Path, ...] = ()
    """Command bots: more paths its sandbox may read, besides its folder."""

    def table_bot(self) -> BuiltinBot | CommandBot | RemoteBot:
        """The bot as a table seats it."""
        if self.kind is BotKind.BUILTIN:
            return BuiltinBot(self.builtin)
        if self.kind is BotKind.REMOTE:
            return RemoteBot(self.name)
        return CommandBot(self.argv, self.env, self.cwd)

    def identity(self) -> dict[str, Any]:
        """What defines the bot for the tournament (a remote bot's key is left out)."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind.value}
        if self.kind is BotKind.BUILTIN:
            out["builtin"] = self.builtin
        elif self.kind is BotKind.COMMAND:
            out["argv"] = list(self.argv)
            out["env"] = dict(self.env)
            out["cwd"] = str(self.cwd) if self.cwd is not None else None
            if self.limits:  # only when given, so older tournaments keep their hash
                out["limits"] = dict(self.limits)
            if self.read_only:
                out["read_only"] = [str(p) for p in self.read_only]
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class RefereeConfig:
    address: str = DEFAULT_ADDRESS
    """Where the in-process referee listens; bots connect there."""
    server: str = ""
    """A running ``referee serve`` (host:port) to use instead of a referee in this
    process; bots connect there too."""
    lobby_wait_s: float = toml_key(DEFAULT_LOBBY_WAIT_S)
    """How long a match waits for its remote bots to be connected before it starts
    without them (their seats then get default actions until they connect)."""
    verify_logs: bool = toml_key(True)
    """Re-check each match log (``referee verify``) as the match ends."""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    """The in-process referee's TLS certificate and key, and the CA of client
    certificates (mutual TLS)."""
    insecure: bool = toml_key(False)
    """Let the in-process referee serve plaintext on an address other machines reach."""
    organiser_token_file: Path | None = None
    """The token of ``server`` (``referee serve`` prints where it is)."""
    organiser_address: str = ""
    """``server``'s organiser listener, when it has one of its own."""
    ca_file: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None
    server_name: str = ""
    """How this process's clients (and spawned bots) check the referee's certificate,
    and the certificate they show for mutual TLS."""

    @property
    def client_tls(self) -> ClientTls | None:
        """TLS for clients of the referee, or None for plaintext."""
        if not (self.ca_file or self.client_cert or self.tls_cert):
            return None
        return ClientTls(self.ca_file, self.client_cert, self.client_key, self.server_name)

    @property
    def server_tls(self) -> ServerTls | None:
        if self.tls_cert is None or self.tls_key is None:
            return None
        from referee.table.referees import ServerTls  # the server: only for the referee's own

        return ServerTls(self.tls_cert, self.tls_key, self.tls_client_ca)


@dataclasses.dataclass(frozen=True, slots=True)
class ExecutionConfig:
    """Where matches are played. Not part of the tournament's identity: a tournament
    started on one backend may be resumed on the other (same seeds, same results)."""

    backend: Backend = Backend.LOCAL
    address: str | None = None
    """Ray: ``auto`` (the cluster this machine belongs to), a cluster's ``host:port``,
    or None for a Ray started by the tournament on this machine alone."""
    cpus_per_match: float = toml_key(1.0)
    """Ray: the CPUs each match task asks for (its referee and its bots)."""
    max_attempts: int = toml_key(DEFAULT_MAX_ATTEMPTS, low=1, high=100)
    """Ray: how often a match whose node dies is played (from scratch) before the
    tournament stops, the cluster being unusable."""


class SandboxMode(enum.StrEnum):
    AUTO = "auto"
    """Jail spawned bots in the best jail this machine allows, or refuse to start."""
    ON = "on"
    """The full jail (root, cgroups), or refuse to start (own_cores: cores of their own)."""
    OFF = "off"
    """Run them as they are (a warning is printed)."""


@dataclasses.dataclass(frozen=True, slots=True)
class SandboxConfig:
    """``[sandbox]``: how spawned (command) bots are isolated (``referee.sandbox``)."""

    mode: SandboxMode = SandboxMode.AUTO
    limits: SandboxLimits = dataclasses.field(default_factory=SandboxLimits)
    """Every spawned bot's limits unless its own ``limits`` say otherwise."""
    read_only: tuple[Path, ...] = ()
    """More paths every sandboxed bot may read."""
    own_cores: SandboxMode = SandboxMode.AUTO
    """A core of its own for each bot: auto (when there are enough), on, off."""
    cpu_cores: float = toml_key(0.0)
    """A CPU quota per bot, in cores (0: none); CPU shares are always equal."""

    def identity(self) -> dict[str, Any]:
        """The settings that change how bots play, when not the defaults."""
        out: dict[str, Any] = {}
        if self.limits != SandboxLimits():
            out["limits"] = dataclasses.asdict(self.limits)
        if self.cpu_cores:
            out["cpu_cores"] = self.cpu_cores
        if self.own_cores is not SandboxMode.AUTO:
            out["own_cores"] = self.own_cores.value
        return out


class Replacement(enum.StrEnum):
    """Who plays a disqualified bot's seats."""

    RANDOM = "random"
    GREEDY = "greedy"
    FORFEIT = "forfeit"
    """Nobody: the referee plays the seat by default (pass, or the lowest lead)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DisqualifyConfig:
    """``[disqualify]``: when a bot is out of the tournament (all off by default)."""

    crashes: int = toml_key(0, high=1_000_000)
    """At its this-many-th crash (0: never)."""
    breaches: int = toml_key(0, high=1_000_000)
    """At its this-many-th sandbox limit breach (0: never)."""
    fault_rate: float = toml_key(0.0)
    """When more than this share of its matches were faulty (0: never)."""
    faulty_turns: int = toml_key(3, low=1, high=1_000_000)
    """Turns played by default for it (timeouts, illegal plays) that make a match faulty;
    a crash or a breach always does."""
    min_matches: int = toml_key(4, low=1, high=1_000_000)
    """Its fault rate is judged once it has this many matches."""
    replacement: Replacement = Replacement.RANDOM

    @property
    def active(self) -> bool:
        return bool(self.crashes or self.breaches or self.fault_rate)

    def identity(self) -> dict[str, Any]:
        if not self.active:
            return {}
        out = dataclasses.asdict(self)
        out["replacement"] = self.replacement.value
        return out


class Deals(enum.StrEnum):
    """Which deal each table of a round plays."""

    PER_TABLE = "per-table"
    """A deal of its own: group ``g`` has the seed ``SHA-256(master:g)``."""
    PER_ROUND = "per-round"
    """The same deal at every table of a round: round ``r`` has ``SHA-256(master:r)``,
    whatever the number of tables (the benchmark: a candidate and every set of anchors
    on the same published deals)."""


class RemoteDeals(enum.StrEnum):
    """Which deals a remote (unsandboxed) bot is dealt in a duplicate tournament."""

    SHARED = "shared"
    """Those of its group, like everyone: it sees each deal once per seating."""
    UNSEEN = "unseen"
    """Never one it has seen: its seatings of a group take other tables' deals."""


@dataclasses.dataclass(frozen=True, slots=True)
class SprtConfig:
    """A gauntlet's sequential test of its hero against one baseline bot
    (``referee.tournament.sprt``); differences are in score per hand, positive when
    the hero does better."""

    baseline: str
    delta1: float
    """H1: the hero's advantage is this (the smallest that matters)."""
    delta0: float = toml_key(0.0, low=-math.inf)
    """H0: the hero's advantage is this (no better)."""
    alpha: float = toml_key(0.05)
    """The chance of accepting H1 when H0 holds."""
    beta: float = toml_key(0.05)
    """The chance of accepting H0 when H1 holds."""
    min_groups: int = toml_key(DEFAULT_SPRT_MIN_GROUPS, low=2, high=1_000_000)
    """No decision before this many deal groups are in the test."""


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A whole tournament, checked."""

    source: Path
    """The configuration file."""
    name: str
    bots: tuple[BotConfig, ...]
    settings: MatchSettings
    """Every match's settings but its seats and seed: ``[rules]``, and the ``[time]`` and
    ``[faults]`` keys of ``SETTINGS``."""
    format: Format
    rounds: int
    hero: str
    table: tuple[str, ...]
    seatings: Seatings
    seed: str | None
    """The master seed; None: a fresh one is drawn once and kept in the folder."""
    concurrency: int
    output: Path
    match_timeout_s: float
    """A match still running after this long is cancelled and recorded as failed."""
    referee: RefereeConfig
    sprt: SprtConfig | None = None
    """The gauntlet's sequential test, if any: the tournament stops when it decides."""
    execution: ExecutionConfig = ExecutionConfig()
    sandbox: SandboxConfig = SandboxConfig()
    disqualify: DisqualifyConfig = DisqualifyConfig()
    remote_deals: RemoteDeals = RemoteDeals.SHARED
    deals: Deals = Deals.PER_TABLE

    @property
    def rules(self) -> Rules:
        return self.settings.rules

    def bot(self, name: str) -> BotConfig:
        return next(b for b in self.bots if b.name == name)

    @property
    def remote_bots(self) -> tuple[BotConfig, ...]:
        return tuple(b for b in self.bots if b.kind is BotKind.REMOTE)

    def limits_for(self, bot: BotConfig) -> SandboxLimits:
        """A spawned bot's sandbox limits: its own over the ``[sandbox]`` ones."""
        return self.sandbox.limits.merged(dict(bot.limits))

    def tables(self) -> list[tuple[str, str, str, str]]:
        """The tables, each four bot names in configuration order."""
        names = [b.name for b in self.bots]
        if self.format is Format.FIXED:
            chosen = self.table or tuple(names)
            return [(chosen[0], chosen[1], chosen[2], chosen[3])]
        if self.format is Format.GAUNTLET:
            others = [n for n in names if n != self.hero]
            return [(self.hero, a, b, c) for a, b, c in combinations(others, 3)]
        return [(a, b, c, d) for a, b, c, d in combinations(names, 4)]

    @property
    def matches_per_round(self) -> int:
        return len(self.tables()) * self.seatings.per_group

    @property
    def total_matches(self) -> int:
        return self.rounds * self.matches_per_round

    def match_settings(self, seed: str, seat_names: Sequence[str]) -> MatchSettings:
        """The settings of one match."""
        names = (seat_names[0], seat_names[1], seat_names[2], seat_names[3])
        return dataclasses.replace(self.settings, seed=seed, seat_names=names)

    def identity(self) -> dict[str, Any]:
        """Everything that decides which matches are played and how, as plain JSON.

        Left out on purpose: the name, concurrency, output folder, listen address, lobby
        wait, log verification, the execution backend and remote bots' keys, which may
        change between runs.
        """
        rules = {"profile": self.rules.profile, **self.rules.options()}
        if not rules["max_hands"]:
            # Unset (the referee's cap applies): left out, so that folders started before
            # the option existed still resume.
            del rules["max_hands"]
        identity: dict[str, Any] = {
            "version": IDENTITY_VERSION,
            "bots": [b.identity() for b in self.bots],
            "rules": rules,
            "format": self.format.value,
            "rounds": self.rounds,
            "hero": self.hero,
            "tables": [list(t) for t in self.tables()],
            "seatings": self.seatings.value,
            "seed": self.seed,
            "time": {
                **_settings_in(self.settings, "time"),
                "match_timeout_s": self.match_timeout_s,
            },
            "faults": _settings_in(self.settings, "faults"),
            # Newer sections only when they differ from the defaults, so that a
            # tournament started before they existed keeps its hash and resumes.
            **({"sandbox": sb} if (sb := self.sandbox.identity()) else {}),
            **({"disqualify": dq} if (dq := self.disqualify.identity()) else {}),
            **(
                {"remote_deals": self.remote_deals.value}
                if self.remote_deals is not RemoteDeals.SHARED
                else {}
            ),
            **({"deals": self.deals.value} if self.deals is not Deals.PER_TABLE else {}),
        }
        if self.sprt is not None:
            # Only when set, so that the identity of a tournament without one is unchanged.
            identity["sprt"] = dataclasses.asdict(self.sprt)
        return identity

    def identity_hash(self) -> str:
        return identity_hash(self.identity())


def _settings_in(settings: MatchSettings, table: str) -> dict[str, int]:
    """The match settings a TOML table holds, by key."""
    return {s.name: getattr(settings, s.name) for s in SETTINGS if s.table == table}


def identity_hash(identity: Mapping[str, Any]) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity_changes(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The keys whose values differ between two identities, dotted (``rules.hands``)."""
    changed: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        where = f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            changed += identity_changes(a, b, where + ".")
        elif a != b:
            changed.append(where)
    return changed


__all__ = [
    "BUILTIN_BOTS",
    "PLACEHOLDERS",
    "Backend",
    "BotConfig",
    "BotKind",
    "ConfigError",
    "Deals",
    "DisqualifyConfig",
    "ExecutionConfig",
    "Format",
    "RefereeConfig",
    "RemoteDeals",
    "Replacement",
    "SandboxConfig",
    "SandboxMode",
    "Seatings",
    "SprtConfig",
    "TournamentConfig",
    "identity_changes",
    "identity_hash",
]
