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
    # server = "10.0.0.5:50051"  # or: use this running `referee serve` instead
    lobby_wait_s = 60
    verify_logs = true

    [sprt]                       # gauntlet only: stop once the hero is shown better or not
    baseline = "old"             # the bot the hero is compared with
    delta0 = 0.0                 # H0: the hero's advantage in score per hand
    delta1 = 0.5                 # H1 (required)
    alpha = 0.05                 # false positive rate
    beta = 0.05                  # false negative rate
    min_groups = 10              # no decision before this many deal groups

    [[bot]]
    name = "greedy"
    builtin = "greedy"

    [[bot]]
    name = "mine"
    command = "{python} my_bot.py --address {address} --token {token}"

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
from referee.stdio import bridge_argv
from referee.table.bots import (
    PLACEHOLDERS,
    BuiltinBot,
    CommandBot,
    RemoteBot,
    check_program,
)

IDENTITY_VERSION = 1
DEFAULT_MATCH_TIMEOUT_S = 1800.0
DEFAULT_ADDRESS = "127.0.0.1:0"
DEFAULT_LOBBY_WAIT_S = 60.0
DEFAULT_SPRT_MIN_GROUPS = 10
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_PLACEHOLDER_RE = re.compile(r"\{(\w*)\}")
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

    def bot(self, name: str) -> BotConfig:
        return next(b for b in self.bots if b.name == name)

    @property
    def remote_bots(self) -> tuple[BotConfig, ...]:
        return tuple(b for b in self.bots if b.kind is BotKind.REMOTE)

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
        wait, log verification and remote bots' keys, which may change between runs.
        """
        identity: dict[str, Any] = {
            "version": IDENTITY_VERSION,
            "bots": [b.identity() for b in self.bots],
            "rules": {"profile": self.rules.profile, **self.rules.options()},
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
    time = TimeConfig(
        turn_time_ms=tm.whole("turn_time_ms", TOURNAMENT_TURN_TIME_MS, low=1, high=MAX_TIME_MS),
        connect_timeout_ms=tm.whole(
            "connect_timeout_ms", TOURNAMENT_CONNECT_TIMEOUT_MS, low=1, high=MAX_TIME_MS
        ),
        time_bank_ms=tm.whole("time_bank_ms", 0, high=MAX_TIME_MS),
        match_timeout_s=tm.number("match_timeout_s", DEFAULT_MATCH_TIMEOUT_S, low=1.0),
    )
    tm.done()
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
    referee = RefereeConfig(
        address=ref.text("address", DEFAULT_ADDRESS) or DEFAULT_ADDRESS,
        server=ref.text("server", "") or "",
        lobby_wait_s=ref.number("lobby_wait_s", DEFAULT_LOBBY_WAIT_S),
        verify_logs=ref.flag("verify_logs", True),
    )
    ref.done()
    if ":" not in referee.address:
        raise ConfigError("referee.address", f"should be host:port, got {referee.address!r}")
    if referee.server and ":" not in referee.server:
        raise ConfigError("referee.server", f"should be host:port, got {referee.server!r}")
    remote = [b.name for b in bots if b.kind is BotKind.REMOTE]
    if referee.server and remote:
        raise ConfigError(
            "referee.server",
            f"remote bots ({', '.join(remote)}) connect to the lobby of the tournament's own "
            "referee: leave out server to use one, or give these bots a command",
        )

    sprt = _parse_sprt(sp, fmt, hero, names) if sp is not None else None

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
    for word in argv:
        for found in _PLACEHOLDER_RE.findall(word):
            if found not in PLACEHOLDERS:
                raise ConfigError(
                    f"{where}.{kind}",
                    f"unknown placeholder {{{found}}} (known: "
                    + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                    + ")",
                )
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
    return BotConfig(name, BotKind.COMMAND, argv=tuple(argv), env=tuple(sorted(env)), cwd=cwd)


def _check_program(argv: Sequence[str], cwd: Path, where: str) -> None:
    """The program must exist; for ``{python} script.py`` (or ``python …``) the script too."""
    problem = check_program(argv, cwd)
    if problem is not None:
        raise ConfigError(where, problem)


__all__ = [
    "BUILTIN_BOTS",
    "PLACEHOLDERS",
    "BotConfig",
    "BotKind",
    "ConfigError",
    "FaultConfig",
    "Format",
    "RefereeConfig",
    "Seatings",
    "SprtConfig",
    "TimeConfig",
    "TournamentConfig",
    "identity_changes",
    "identity_hash",
    "load_config",
    "parse_config",
]
