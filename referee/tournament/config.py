"""A tournament's TOML configuration, parsed and checked before anything starts.

Every mistake is a ``ConfigError`` naming the key at fault (``bot[3].command: ...``), so
an organiser learns about a missing program, an unknown profile or too few bots before
the first match, not an hour in. The parsed value is frozen; ``identity()`` is the part
that decides which matches are played and how, and its hash names the tournament's
folder contents (see ``referee.tournament.results``).

A configuration, in full (only ``[[bot]]`` entries are required)::

    [tournament]
    name = "club night"
    seed = "2026-12-01"          # master seed; each match's seed is derived from it
    format = "round-robin"       # round-robin | gauntlet | fixed
    rounds = 2                   # deal groups per table; or matches = N (at least N)
    hero = "mine"                # gauntlet: the bot that plays every table
    table = ["a", "b", "c", "d"] # fixed: the four bots of the one table
    seatings = "rotations"       # rotations (4) | permutations (24) | none
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
    command = "{python} my_bot.py --address {address} --token {token}"
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
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any, TypeVar

from referee.bots import BUILTIN_BOTS
from referee.match.settings import (
    DEFAULT_MAX_ACTIONS_OUT_OF_TURN,
    DEFAULT_MAX_REJECTIONS,
    MAX_HANDS,
    MAX_TIME_MS,
    TOURNAMENT_CONNECT_TIMEOUT_MS,
    TOURNAMENT_TURN_TIME_MS,
    MatchSettings,
    SettingsError,
    settings_from_request,
)
from referee.rules import OptionsError, Rules
from referee.sandbox.limits import LIMIT_FIELDS, Limits
from referee.server.tls import ClientTls, ServerTls
from referee.stdio import bridge_argv
from referee.table.bots import (
    PLACEHOLDERS,
    BuiltinBot,
    CommandBot,
    RemoteBot,
    check_program,
    unknown_placeholder,
)

IDENTITY_VERSION = 1
DEFAULT_MATCH_TIMEOUT_S = 1800.0
DEFAULT_ADDRESS = "127.0.0.1:0"
DEFAULT_LOBBY_WAIT_S = 60.0
DEFAULT_SPRT_MIN_GROUPS = 10
DEFAULT_MAX_ATTEMPTS = 3
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_E = TypeVar("_E", bound=enum.StrEnum)


class ConfigError(ValueError):
    """A configuration that cannot be run; ``where`` is the key at fault."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.message = message


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
    """Where a tournament's matches are played (``referee.tournament.backends``)."""

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
class TimeConfig:
    turn_time_ms: int = TOURNAMENT_TURN_TIME_MS
    connect_timeout_ms: int = TOURNAMENT_CONNECT_TIMEOUT_MS
    time_bank_ms: int = 0
    match_timeout_s: float = DEFAULT_MATCH_TIMEOUT_S
    """A match still running after this long is cancelled and recorded as failed."""


@dataclasses.dataclass(frozen=True, slots=True)
class FaultConfig:
    max_rejections_per_turn: int = DEFAULT_MAX_REJECTIONS
    max_strikes: int = 0
    max_actions_out_of_turn: int = DEFAULT_MAX_ACTIONS_OUT_OF_TURN


@dataclasses.dataclass(frozen=True, slots=True)
class RefereeConfig:
    address: str = DEFAULT_ADDRESS
    """Where the in-process referee listens; bots connect there."""
    server: str = ""
    """A running ``referee serve`` (host:port) to use instead of a referee in this
    process; bots connect there too."""
    lobby_wait_s: float = DEFAULT_LOBBY_WAIT_S
    """How long a match waits for its remote bots to be connected before it starts
    without them (their seats then get default actions until they connect)."""
    verify_logs: bool = True
    """Re-check each match log (``referee verify``) as the match ends."""
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    """The in-process referee's TLS certificate and key, and the CA of client
    certificates (mutual TLS)."""
    insecure: bool = False
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
        return ServerTls(self.tls_cert, self.tls_key, self.tls_client_ca)


@dataclasses.dataclass(frozen=True, slots=True)
class ExecutionConfig:
    """Where matches are played. Not part of the tournament's identity: a tournament
    started on one backend may be resumed on the other (same seeds, same results)."""

    backend: Backend = Backend.LOCAL
    address: str | None = None
    """Ray: ``auto`` (the cluster this machine belongs to), a cluster's ``host:port``,
    or None for a Ray started by the tournament on this machine alone."""
    cpus_per_match: float = 1.0
    """Ray: the CPUs each match task asks for (its referee and its bots)."""
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
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
    limits: Limits = dataclasses.field(default_factory=Limits)
    """Every spawned bot's limits unless its own ``limits`` say otherwise."""
    read_only: tuple[Path, ...] = ()
    """More paths every sandboxed bot may read."""
    own_cores: SandboxMode = SandboxMode.AUTO
    """A core of its own for each bot: auto (when there are enough), on, off."""
    cpu_cores: float = 0.0
    """A CPU quota per bot, in cores (0: none); CPU shares are always equal."""

    def identity(self) -> dict[str, Any]:
        """The settings that change how bots play, when not the defaults."""
        out: dict[str, Any] = {}
        if self.limits != Limits():
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

    crashes: int = 0
    """At its this-many-th crash (0: never)."""
    breaches: int = 0
    """At its this-many-th sandbox limit breach (0: never)."""
    fault_rate: float = 0.0
    """When more than this share of its matches were faulty (0: never)."""
    faulty_turns: int = 3
    """Turns played by default for it (timeouts, illegal plays) that make a match faulty;
    a crash or a breach always does."""
    min_matches: int = 4
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
    delta0: float = 0.0
    """H0: the hero's advantage is this (no better)."""
    alpha: float = 0.05
    """The chance of accepting H1 when H0 holds."""
    beta: float = 0.05
    """The chance of accepting H0 when H1 holds."""
    min_groups: int = DEFAULT_SPRT_MIN_GROUPS
    """No decision before this many deal groups are in the test."""


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A whole tournament, checked."""

    source: Path
    """The configuration file."""
    name: str
    bots: tuple[BotConfig, ...]
    rules: Rules
    format: Format
    rounds: int
    hero: str
    table: tuple[str, ...]
    seatings: Seatings
    seed: str | None
    """The master seed; None: a fresh one is drawn once and kept in the folder."""
    concurrency: int
    output: Path
    time: TimeConfig
    faults: FaultConfig
    referee: RefereeConfig
    sprt: SprtConfig | None = None
    """The gauntlet's sequential test, if any: the tournament stops when it decides."""
    execution: ExecutionConfig = ExecutionConfig()
    sandbox: SandboxConfig = SandboxConfig()
    disqualify: DisqualifyConfig = DisqualifyConfig()
    remote_deals: RemoteDeals = RemoteDeals.SHARED

    def bot(self, name: str) -> BotConfig:
        return next(b for b in self.bots if b.name == name)

    @property
    def remote_bots(self) -> tuple[BotConfig, ...]:
        return tuple(b for b in self.bots if b.kind is BotKind.REMOTE)

    def limits_for(self, bot: BotConfig) -> Limits:
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
        return MatchSettings(
            rules=self.rules,
            seat_names=(seat_names[0], seat_names[1], seat_names[2], seat_names[3]),
            seed=seed,
            connect_timeout_ms=self.time.connect_timeout_ms,
            turn_time_ms=self.time.turn_time_ms,
            time_bank_ms=self.time.time_bank_ms,
            max_rejections_per_turn=self.faults.max_rejections_per_turn,
            max_strikes=self.faults.max_strikes,
            max_actions_out_of_turn=self.faults.max_actions_out_of_turn,
        )

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
                "turn_time_ms": self.time.turn_time_ms,
                "connect_timeout_ms": self.time.connect_timeout_ms,
                "time_bank_ms": self.time.time_bank_ms,
                "match_timeout_s": self.time.match_timeout_s,
            },
            "faults": dataclasses.asdict(self.faults),
            # Newer sections only when they differ from the defaults, so that a
            # tournament started before they existed keeps its hash and resumes.
            **({"sandbox": sb} if (sb := self.sandbox.identity()) else {}),
            **({"disqualify": dq} if (dq := self.disqualify.identity()) else {}),
            **(
                {"remote_deals": self.remote_deals.value}
                if self.remote_deals is not RemoteDeals.SHARED
                else {}
            ),
        }
        if self.sprt is not None:
            # Only when set, so that the identity of a tournament without one is unchanged.
            identity["sprt"] = dataclasses.asdict(self.sprt)
        return identity

    def identity_hash(self) -> str:
        return identity_hash(self.identity())


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


# -- parsing ---------------------------------------------------------------------


class _Table:
    """A TOML table being read: typed getters, and unknown keys reported at the end."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise ConfigError(where, "should be a table")
        self.data: dict[str, Any] = data
        self.where = where
        self.seen: set[str] = set()

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        self.seen.add(key)
        return self.data.get(key)

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ConfigError(self._at(key), f"should be a string, got {value!r}")
        return value

    def whole(self, key: str, default: int, low: int = 0, high: int | None = None) -> int:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(self._at(key), f"should be a whole number, got {value!r}")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ConfigError(self._at(key), f"should be {bound}, got {value}")
        return value

    def number(self, key: str, default: float, low: float = 0.0) -> float:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(self._at(key), f"should be a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(self._at(key), f"should be a finite number, got {value}")
        if value < low:
            raise ConfigError(self._at(key), f"should be at least {low}, got {value}")
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self._at(key), f"should be true or false, got {value!r}")
        return value

    def table(self, key: str) -> _Table:
        value = self.raw(key)
        return _Table({} if value is None else value, self._at(key))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.seen)
        if unknown:
            known = ", ".join(sorted(self.seen))
            raise ConfigError(self._at(unknown[0]), f"unknown key (known here: {known or 'none'})")


def load_config(path: Path) -> TournamentConfig:
    """Read and check a configuration file; raises ConfigError."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError("", f"{path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("", f"{path} is not valid TOML: {exc}") from None
    return parse_config(data, path)


def parse_config(data: Mapping[str, Any], source: Path) -> TournamentConfig:
    """Check a parsed TOML document; relative paths are taken from ``source``'s folder."""
    base = Path(source).resolve().parent
    top = _Table(dict(data), "")
    t = top.table("tournament")
    r = top.table("rules")
    tm = top.table("time")
    f = top.table("faults")
    ref = top.table("referee")
    sp = top.table("sprt") if top.has("sprt") else None
    ex = top.table("execution")
    sb = top.table("sandbox")
    dq = top.table("disqualify")
    raw_bots = top.raw("bot")
    top.done()

    bots = _parse_bots(raw_bots, base)
    names = [b.name for b in bots]

    name = t.text("name") or Path(source).stem
    fmt_text = t.text("format", Format.ROUND_ROBIN.value) or ""
    fmt = _enum(Format, fmt_text, "tournament.format")
    seat_text = t.text("seatings", Seatings.ROTATIONS.value) or ""
    seatings = _enum(Seatings, seat_text, "tournament.seatings")
    seed = t.text("seed")
    if seed is not None and not seed:
        raise ConfigError("tournament.seed", "should not be empty (leave it out for a random one)")
    hero = t.text("hero", "") or ""
    table_raw = t.raw("table")
    table: tuple[str, ...] = ()
    if table_raw is not None:
        if not isinstance(table_raw, list) or not all(isinstance(x, str) for x in table_raw):
            raise ConfigError("tournament.table", "should be a list of four bot names")
        table = tuple(table_raw)
    concurrency = t.whole("concurrency", 1, low=1, high=256)
    output_text = t.text("output")
    output = base / output_text if output_text else base / f"{Path(source).stem}-results"
    has_rounds, has_matches = t.has("rounds"), t.has("matches")
    rounds = t.whole("rounds", 1, low=1)
    wanted = t.whole("matches", 0, low=1)
    remote_deals = _enum(
        RemoteDeals, t.text("remote_deals", "shared") or "", "tournament.remote_deals"
    )
    t.done()

    if len(bots) < 4:
        raise ConfigError("bot", f"a table needs four bots; the configuration has {len(bots)}")
    if fmt is Format.GAUNTLET:
        if not hero:
            raise ConfigError("tournament.hero", "a gauntlet needs the name of its hero bot")
        if hero not in names:
            raise ConfigError("tournament.hero", f"no bot is named {hero!r}")
    elif hero:
        raise ConfigError("tournament.hero", "only a gauntlet has a hero")
    if fmt is Format.FIXED:
        if not table and len(bots) != 4:
            raise ConfigError(
                "tournament.table", f"name the four bots of the table ({len(bots)} bots given)"
            )
        if table:
            if len(table) != 4 or len(set(table)) != 4:
                raise ConfigError("tournament.table", "should name four different bots")
            for n in table:
                if n not in names:
                    raise ConfigError("tournament.table", f"no bot is named {n!r}")
    elif table:
        raise ConfigError("tournament.table", "only a fixed tournament names its table")

    rules = _parse_rules(r)
    time = parse_time(tm)
    faults = parse_faults(f)

    def file(key: str) -> Path | None:
        text = ref.text(key)
        if text is None:
            return None
        path = base / text
        if not path.is_file():
            raise ConfigError(f"referee.{key}", f"no such file: {path}")
        return path

    referee = RefereeConfig(
        address=ref.text("address", DEFAULT_ADDRESS) or DEFAULT_ADDRESS,
        server=ref.text("server", "") or "",
        lobby_wait_s=ref.number("lobby_wait_s", DEFAULT_LOBBY_WAIT_S),
        verify_logs=ref.flag("verify_logs", True),
        tls_cert=file("tls_cert"),
        tls_key=file("tls_key"),
        tls_client_ca=file("tls_client_ca"),
        insecure=ref.flag("insecure", False),
        organiser_token_file=file("organiser_token_file"),
        organiser_address=ref.text("organiser_address", "") or "",
        ca_file=file("ca_file"),
        client_cert=file("client_cert"),
        client_key=file("client_key"),
        server_name=ref.text("server_name", "") or "",
    )
    ref.done()
    if (referee.tls_cert is None) != (referee.tls_key is None):
        raise ConfigError("referee.tls_cert", "tls_cert and tls_key go together")
    if referee.tls_client_ca and not referee.tls_cert:
        raise ConfigError("referee.tls_client_ca", "mutual TLS needs tls_cert and tls_key")
    if (referee.client_cert is None) != (referee.client_key is None):
        raise ConfigError("referee.client_cert", "client_cert and client_key go together")
    if referee.tls_cert and not referee.ca_file:
        raise ConfigError(
            "referee.ca_file",
            "with tls_cert, name the CA that signed it: the tournament's own clients "
            "(built-in bots, the organiser) check the referee's certificate against it",
        )
    if referee.tls_client_ca and not referee.client_cert:
        raise ConfigError(
            "referee.client_cert",
            "with tls_client_ca, give the certificate the tournament's own clients show",
        )
    if referee.server and referee.tls_cert:
        raise ConfigError(
            "referee.tls_cert", "is for the tournament's own referee, not for a server"
        )
    if referee.server and not referee.organiser_token_file:
        raise ConfigError(
            "referee.organiser_token_file",
            "a running referee server needs its organiser token (the file `referee "
            "serve` names when it starts)",
        )
    if ":" not in referee.address:
        raise ConfigError("referee.address", f"should be host:port, got {referee.address!r}")
    if referee.server and ":" not in referee.server:
        raise ConfigError("referee.server", f"should be host:port, got {referee.server!r}")
    sandbox = _parse_sandbox(sb, base)
    disqualify = _parse_disqualify(dq)
    remote = [b.name for b in bots if b.kind is BotKind.REMOTE]
    if referee.server and remote:
        raise ConfigError(
            "referee.server",
            f"remote bots ({', '.join(remote)}) connect to the lobby of the tournament's own "
            "referee: leave out server to use one, or give these bots a command",
        )

    sprt = _parse_sprt(sp, fmt, hero, names) if sp is not None else None
    execution = _parse_execution(ex, referee, remote)

    config = TournamentConfig(
        source=Path(source),
        name=name,
        bots=tuple(bots),
        rules=rules,
        format=fmt,
        rounds=rounds,
        hero=hero,
        table=table,
        seatings=seatings,
        seed=seed,
        concurrency=concurrency,
        output=output,
        time=time,
        faults=faults,
        referee=referee,
        sprt=sprt,
        execution=execution,
        sandbox=sandbox,
        disqualify=disqualify,
        remote_deals=remote_deals,
    )
    if has_rounds and has_matches:
        raise ConfigError("tournament.matches", "give either rounds or matches, not both")
    if has_matches:
        config = dataclasses.replace(
            config, rounds=max(1, math.ceil(wanted / config.matches_per_round))
        )
    # The same check the referee makes when the match is created.
    try:
        settings_from_request(config.match_settings("check", names[:4]).request_pb())
    except SettingsError as exc:
        raise ConfigError("rules", str(exc)) from None
    return config


def _parse_sprt(sp: _Table, fmt: Format, hero: str, names: Sequence[str]) -> SprtConfig:
    baseline = sp.text("baseline") or ""
    if not sp.has("delta1"):
        raise ConfigError(
            "sprt.delta1", "required: the advantage per hand the test should detect (H1)"
        )
    delta1 = sp.number("delta1", 0.0, low=-math.inf)
    delta0 = sp.number("delta0", 0.0, low=-math.inf)
    alpha = sp.number("alpha", 0.05, low=0.0)
    beta = sp.number("beta", 0.05, low=0.0)
    min_groups = sp.whole("min_groups", DEFAULT_SPRT_MIN_GROUPS, low=2, high=1_000_000)
    sp.done()
    if fmt is not Format.GAUNTLET:
        raise ConfigError("sprt", 'a sequential test needs format = "gauntlet" (hero vs baseline)')
    if not baseline:
        raise ConfigError("sprt.baseline", "name the bot the hero is tested against")
    if baseline not in names:
        raise ConfigError("sprt.baseline", f"no bot is named {baseline!r}")
    if baseline == hero:
        raise ConfigError("sprt.baseline", "should be another bot than the hero")
    if delta1 <= delta0:
        raise ConfigError(
            "sprt.delta1", f"should be greater than delta0 ({delta0:g}): H1 is 'the hero is better'"
        )
    for key, value in (("alpha", alpha), ("beta", beta)):
        if not 0 < value < 0.5:
            raise ConfigError(f"sprt.{key}", f"should be between 0 and 0.5, got {value:g}")
    return SprtConfig(baseline, delta1, delta0, alpha, beta, min_groups)


def _parse_execution(ex: _Table, referee: RefereeConfig, remote: Sequence[str]) -> ExecutionConfig:
    backend = _enum(Backend, ex.text("backend", Backend.LOCAL.value) or "", "execution.backend")
    address = ex.text("address")
    cpus = ex.number("cpus_per_match", 1.0)
    attempts = ex.whole("max_attempts", DEFAULT_MAX_ATTEMPTS, low=1, high=100)
    ex.done()
    if backend is Backend.LOCAL:
        for key in ("address", "cpus_per_match", "max_attempts"):
            if ex.has(key):
                raise ConfigError(f"execution.{key}", 'only for backend = "ray"')
        return ExecutionConfig()
    if (
        address is not None
        and address != "auto"
        and not re.fullmatch(r"[\w.\-\[\]:]+:\d+", address)
    ):
        raise ConfigError(
            "execution.address",
            f'should be "auto" or a Ray cluster\'s host:port, got {address!r} (leave it out '
            "for a Ray started by the tournament)",
        )
    if cpus <= 0:
        raise ConfigError("execution.cpus_per_match", "should be more than 0")
    if remote:
        raise ConfigError(
            "execution.backend",
            f"remote bots ({', '.join(remote)}) join the lobby of the tournament's own referee, "
            'which only the local backend has: use backend = "local", or give them a command',
        )
    if referee.server:
        raise ConfigError(
            "execution.backend",
            "with Ray each match task runs its own referee: leave out referee.server",
        )
    if not referee.verify_logs:
        raise ConfigError(
            "referee.verify_logs",
            "logs played on Ray workers are always verified when they arrive: leave it out",
        )
    return ExecutionConfig(Backend.RAY, address, cpus, attempts)


_LIMIT_RANGES: dict[str, tuple[int, int]] = {
    "memory_mb": (16, 1 << 20),
    "processes": (1, 100_000),
    "open_files": (16, 1 << 20),
    "tmp_mb": (1, 1 << 20),
    "stderr_kb": (1, 1 << 20),
}


def _parse_limits(t: _Table, keys: Sequence[str]) -> dict[str, float]:
    """The limits among ``keys`` that the table sets."""
    out: dict[str, float] = {}
    for key in keys:
        if not t.has(key):
            continue
        if key == "cpu_s":
            out[key] = t.number(key, 0.0)
        else:
            low, high = _LIMIT_RANGES[key]
            out[key] = t.whole(key, 0, low=low, high=high)
    return out


def _paths(t: _Table, key: str, base: Path) -> tuple[Path, ...]:
    raw = t.raw(key)
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise ConfigError(t._at(key), "should be a list of paths")
    out = []
    for text in raw:
        path = (base / text).resolve()
        if not path.exists():
            raise ConfigError(t._at(key), f"{path} does not exist")
        out.append(path)
    return tuple(out)


def _mode(t: _Table, key: str) -> SandboxMode:
    raw = t.raw(key)
    if raw is None or raw == "auto":
        return SandboxMode.AUTO
    if isinstance(raw, bool):
        return SandboxMode.ON if raw else SandboxMode.OFF
    raise ConfigError(t._at(key), f'should be true, false or "auto", got {raw!r}')


def _parse_sandbox(t: _Table, base: Path) -> SandboxConfig:
    limits = Limits().merged(_parse_limits(t, LIMIT_FIELDS))
    config = SandboxConfig(
        mode=_mode(t, "enabled"),
        limits=limits,
        read_only=_paths(t, "read_only", base),
        own_cores=_mode(t, "own_cores"),
        cpu_cores=t.number("cpu_cores", 0.0),
    )
    if config.cpu_cores and config.cpu_cores < 0.01:
        raise ConfigError("sandbox.cpu_cores", "should be 0 (no quota) or at least 0.01")
    t.done()
    return config


def _parse_disqualify(t: _Table) -> DisqualifyConfig:
    replacement = _enum(
        Replacement, t.text("replacement", "random") or "", "disqualify.replacement"
    )
    rate = t.number("fault_rate", 0.0)
    if rate >= 1:
        raise ConfigError("disqualify.fault_rate", f"should be below 1, got {rate}")
    config = DisqualifyConfig(
        crashes=t.whole("crashes", 0, high=1_000_000),
        breaches=t.whole("breaches", 0, high=1_000_000),
        fault_rate=rate,
        faulty_turns=t.whole("faulty_turns", 3, low=1, high=1_000_000),
        min_matches=t.whole("min_matches", 4, low=1, high=1_000_000),
        replacement=replacement,
    )
    t.done()
    return config


def parse_time(tm: _Table) -> TimeConfig:
    """A ``[time]`` table (a ladder's too)."""
    time = TimeConfig(
        turn_time_ms=tm.whole("turn_time_ms", TOURNAMENT_TURN_TIME_MS, low=1, high=MAX_TIME_MS),
        connect_timeout_ms=tm.whole(
            "connect_timeout_ms", TOURNAMENT_CONNECT_TIMEOUT_MS, low=1, high=MAX_TIME_MS
        ),
        time_bank_ms=tm.whole("time_bank_ms", 0, high=MAX_TIME_MS),
        match_timeout_s=tm.number("match_timeout_s", DEFAULT_MATCH_TIMEOUT_S, low=1.0),
    )
    tm.done()
    return time


def parse_faults(f: _Table) -> FaultConfig:
    """A ``[faults]`` table (a ladder's too)."""
    faults = FaultConfig(
        max_rejections_per_turn=f.whole(
            "max_rejections_per_turn", DEFAULT_MAX_REJECTIONS, low=1, high=1000
        ),
        max_strikes=f.whole("max_strikes", 0, high=1_000_000),
        max_actions_out_of_turn=f.whole(
            "max_actions_out_of_turn", DEFAULT_MAX_ACTIONS_OUT_OF_TURN, low=1, high=1_000_000
        ),
    )
    f.done()
    return faults


def _enum(kind: type[_E], text: str, where: str) -> _E:
    try:
        return kind(text)
    except ValueError:
        allowed = ", ".join(v.value for v in kind)
        raise ConfigError(where, f"{text!r} is not one of {allowed}") from None


def _parse_rules(r: _Table) -> Rules:
    profile = r.text("profile", "pusoy-dos") or ""
    hands = r.whole("hands", 0, low=1, high=MAX_HANDS)
    threshold = r.whole("threshold", 0, low=1)
    opts = r.table("options")
    options: dict[str, str] = {}
    for key in opts.data:
        value = opts.raw(key)
        if isinstance(value, bool):
            options[key] = "true" if value else "false"
        elif isinstance(value, int | str):
            options[key] = str(value)
        else:
            raise ConfigError(
                f"rules.options.{key}", f"should be text, a number or a bool, got {value!r}"
            )
    r.done()
    if hands and threshold:
        raise ConfigError("rules", "give either hands or threshold, not both")
    try:
        rules = Rules.for_profile(profile, options)
    except OptionsError as exc:
        where = "rules.profile" if "profile" in str(exc) else "rules.options"
        raise ConfigError(where, str(exc)) from None
    if hands:
        rules = rules.with_options({"match_end": f"hands {hands}"})
    if threshold:
        rules = rules.with_options({"match_end": f"threshold {threshold}"})
    if rules.teams:
        raise ConfigError(
            "rules.options.teams",
            "team play is not supported in tournaments (bots are rated alone)",
        )
    return rules


def _parse_bots(raw: Any, base: Path) -> list[BotConfig]:
    if raw is None:
        raise ConfigError(
            "bot", "no bots: add [[bot]] entries (a name and a command, builtin or key)"
        )
    if not isinstance(raw, list):
        raise ConfigError("bot", "write each bot as a [[bot]] table")
    bots: list[BotConfig] = []
    seen_names: set[str] = set()
    seen_keys: set[str] = set()
    for i, item in enumerate(raw):
        where = f"bot[{i + 1}]"
        b = _Table(item, where)
        name = b.text("name") or ""
        if not NAME_RE.match(name):
            raise ConfigError(
                f"{where}.name",
                f"{name!r} is not a bot name: 1 to 40 letters, digits, '.', '_' or '-'",
            )
        if name in seen_names:
            raise ConfigError(f"{where}.name", f"two bots are named {name!r}")
        seen_names.add(name)
        where = b.where = f"bot {name!r}"
        kinds = [k for k in ("builtin", "command", "stdio", "key") if b.has(k)]
        if len(kinds) != 1:
            raise ConfigError(where, "give exactly one of builtin, command, stdio or key")
        if kinds[0] not in ("command", "stdio"):
            for key in ("limits", "read_only"):
                if b.has(key):
                    raise ConfigError(
                        f"{where}.{key}", "only spawned (command, stdio) bots run in a sandbox"
                    )
        if kinds[0] == "builtin":
            builtin = b.text("builtin") or ""
            if builtin not in BUILTIN_BOTS:
                raise ConfigError(
                    f"{where}.builtin", f"{builtin!r} is not one of {', '.join(BUILTIN_BOTS)}"
                )
            bot = BotConfig(name, BotKind.BUILTIN, builtin=builtin)
        elif kinds[0] == "key":
            key = b.text("key") or ""
            if len(key) < 8:
                raise ConfigError(f"{where}.key", "a bot key needs at least 8 characters")
            if key in seen_keys:
                raise ConfigError(f"{where}.key", "two bots have the same key")
            seen_keys.add(key)
            bot = BotConfig(
                name, BotKind.REMOTE, key=key, max_matches=b.whole("max_matches", 0, high=64)
            )
        else:
            bot = _parse_command(b, name, where, base, kinds[0])
        b.done()
        bots.append(bot)
    return bots


def _parse_command(
    b: _Table, name: str, where: str, base: Path, kind: str = "command"
) -> BotConfig:
    """A ``command`` bot, or a ``stdio`` one: its command run behind the stdio bridge."""
    raw = b.raw(kind)
    if isinstance(raw, str):
        try:
            argv = shlex.split(raw)
        except ValueError as exc:
            raise ConfigError(f"{where}.{kind}", f"cannot split the command: {exc}") from None
    elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        argv = list(raw)
    else:
        raise ConfigError(f"{where}.{kind}", "should be a string or a list of strings")
    if not argv:
        raise ConfigError(f"{where}.{kind}", "is empty")
    if (unknown := unknown_placeholder(argv)) is not None:
        raise ConfigError(f"{where}.{kind}", unknown)
    cwd_text = b.text("cwd")
    cwd = (base / cwd_text).resolve() if cwd_text else base
    if not cwd.is_dir():
        raise ConfigError(f"{where}.cwd", f"{cwd} is not a folder")
    env_table = b.table("env")
    env: list[tuple[str, str]] = []
    for key in env_table.data:
        value = env_table.raw(key)
        if not isinstance(value, str | int | float | bool):
            raise ConfigError(f"{where}.env.{key}", "should be a plain value")
        env.append((key, str(value).lower() if isinstance(value, bool) else str(value)))
    _check_program(argv, cwd, f"{where}.{kind}")
    if kind == "stdio":
        argv = bridge_argv(argv, name="{name}", python="{python}")
    limits_table = b.table("limits")
    limits = _parse_limits(limits_table, LIMIT_FIELDS)
    limits_table.done()
    return BotConfig(
        name,
        BotKind.COMMAND,
        argv=tuple(argv),
        env=tuple(sorted(env)),
        cwd=cwd,
        limits=tuple(sorted(limits.items())),
        read_only=_paths(b, "read_only", base),
    )


def _check_program(argv: Sequence[str], cwd: Path, where: str) -> None:
    """The program must exist; for ``{python} script.py`` (or ``python …``) the script too."""
    problem = check_program(argv, cwd)
    if problem is not None:
        raise ConfigError(where, problem)


__all__ = [
    "BUILTIN_BOTS",
    "PLACEHOLDERS",
    "Backend",
    "BotConfig",
    "BotKind",
    "ConfigError",
    "DisqualifyConfig",
    "ExecutionConfig",
    "FaultConfig",
    "Format",
    "RefereeConfig",
    "RemoteDeals",
    "Replacement",
    "SandboxConfig",
    "SandboxMode",
    "Seatings",
    "SprtConfig",
    "TimeConfig",
    "TournamentConfig",
    "identity_changes",
    "identity_hash",
    "load_config",
    "parse_config",
]
