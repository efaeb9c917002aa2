"""A tournament's TOML file read into a ``TournamentConfig`` (``referee.tournament.config``,
which shows a configuration in full), checked before anything starts.

The reader is a typed table reader: every getter checks its key's type and bounds, and a
table's unknown keys are named once it is read, so every mistake is a ``ConfigError``
naming the key at fault (``bot[3].command: ...``).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from referee.bots import BUILTIN_BOTS
from referee.llm import is_model_seat, model_seat_name
from referee.match.settings import (
    MAX_HANDS,
    SETTINGS,
    TOURNAMENT_CONNECT_TIMEOUT_MS,
    TOURNAMENT_TURN_TIME_MS,
    MatchSettings,
    SettingsError,
    match_rules,
    settings_from_values,
)
from referee.rules import Rules
from referee.sandbox.limits import LIMIT_FIELDS, SandboxLimits
from referee.stdio import bridge_argv
from referee.table.bots import check_program, unknown_placeholder
from referee.toml_table import TomlTable, read_config
from referee.tournament.config import (
    DEFAULT_ADDRESS,
    DEFAULT_MATCH_TIMEOUT_S,
    Backend,
    BotConfig,
    BotKind,
    ConfigError,
    Deals,
    DisqualifyConfig,
    ExecutionConfig,
    Format,
    RefereeConfig,
    RemoteDeals,
    Replacement,
    SandboxConfig,
    SandboxMode,
    Seatings,
    SprtConfig,
    TournamentConfig,
)

TOURNAMENT_DEFAULTS = {
    "turn_time_ms": TOURNAMENT_TURN_TIME_MS,
    "connect_timeout_ms": TOURNAMENT_CONNECT_TIMEOUT_MS,
}
"""Where a tournament's match settings differ from a match's (``MatchSettings``)."""
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_E = TypeVar("_E", bound=enum.StrEnum)


def load_config(path: Path) -> TournamentConfig:
    """Read and check a configuration file; raises ConfigError."""
    return read_config(path, parse_config)


def parse_config(data: Mapping[str, Any], source: Path) -> TournamentConfig:
    """Check a parsed TOML document; relative paths are taken from ``source``'s folder."""
    top, base = TomlTable.top(data, source)
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
    deals = _enum(Deals, t.text("deals", Deals.PER_TABLE.value) or "", "tournament.deals")
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

    rules = parse_rules(r)
    settings, match_timeout_s = parse_match_tables(rules, tm, f)

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
        **ref.keys(RefereeConfig, "lobby_wait_s", "verify_logs"),
        tls_cert=file("tls_cert"),
        tls_key=file("tls_key"),
        tls_client_ca=file("tls_client_ca"),
        **ref.keys(RefereeConfig, "insecure"),
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
        settings=settings,
        format=fmt,
        rounds=rounds,
        hero=hero,
        table=table,
        seatings=seatings,
        seed=seed,
        concurrency=concurrency,
        output=output,
        match_timeout_s=match_timeout_s,
        referee=referee,
        sprt=sprt,
        execution=execution,
        sandbox=sandbox,
        disqualify=disqualify,
        remote_deals=remote_deals,
        deals=deals,
    )
    if has_rounds and has_matches:
        raise ConfigError("tournament.matches", "give either rounds or matches, not both")
    if has_matches:
        config = dataclasses.replace(
            config, rounds=max(1, math.ceil(wanted / config.matches_per_round))
        )
    return config


def _parse_sprt(sp: TomlTable, fmt: Format, hero: str, names: Sequence[str]) -> SprtConfig:
    baseline = sp.text("baseline") or ""
    if not sp.has("delta1"):
        raise ConfigError(
            "sprt.delta1", "required: the advantage per hand the test should detect (H1)"
        )
    delta1 = sp.number("delta1", 0.0, low=-math.inf)
    keys = sp.keys(SprtConfig)
    sp.done()
    delta0, alpha, beta = keys["delta0"], keys["alpha"], keys["beta"]
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
    return SprtConfig(baseline, delta1, **keys)


def _parse_execution(
    ex: TomlTable, referee: RefereeConfig, remote: Sequence[str]
) -> ExecutionConfig:
    backend = _enum(Backend, ex.text("backend", Backend.LOCAL.value) or "", "execution.backend")
    address = ex.text("address")
    keys = ex.keys(ExecutionConfig)
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
    if keys["cpus_per_match"] <= 0:
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
    return ExecutionConfig(Backend.RAY, address, **keys)


_LIMIT_RANGES: dict[str, tuple[int, int]] = {
    "memory_mb": (16, 1 << 20),
    "processes": (1, 100_000),
    "open_files": (16, 1 << 20),
    "tmp_mb": (1, 1 << 20),
    "stderr_kb": (1, 1 << 20),
}


def parse_limits(t: TomlTable, keys: Sequence[str]) -> dict[str, float]:
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


def _paths(t: TomlTable, key: str, base: Path) -> tuple[Path, ...]:
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


def _mode(t: TomlTable, key: str) -> SandboxMode:
    raw = t.raw(key)
    if raw is None or raw == "auto":
        return SandboxMode.AUTO
    if isinstance(raw, bool):
        return SandboxMode.ON if raw else SandboxMode.OFF
    raise ConfigError(t._at(key), f'should be true, false or "auto", got {raw!r}')


def _parse_sandbox(t: TomlTable, base: Path) -> SandboxConfig:
    limits = SandboxLimits().merged(parse_limits(t, LIMIT_FIELDS))
    config = SandboxConfig(
        mode=_mode(t, "enabled"),
        limits=limits,
        read_only=_paths(t, "read_only", base),
        own_cores=_mode(t, "own_cores"),
        **t.keys(SandboxConfig),
    )
    if config.cpu_cores and config.cpu_cores < 0.01:
        raise ConfigError("sandbox.cpu_cores", "should be 0 (no quota) or at least 0.01")
    t.done()
    return config


def _parse_disqualify(t: TomlTable) -> DisqualifyConfig:
    replacement = _enum(
        Replacement, t.text("replacement", "random") or "", "disqualify.replacement"
    )
    keys = t.keys(DisqualifyConfig)
    if keys["fault_rate"] >= 1:
        raise ConfigError("disqualify.fault_rate", f"should be below 1, got {keys['fault_rate']}")
    config = DisqualifyConfig(**keys, replacement=replacement)
    t.done()
    return config


def _enum(kind: type[_E], text: str, where: str) -> _E:
    try:
        return kind(text)
    except ValueError:
        allowed = ", ".join(v.value for v in kind)
        raise ConfigError(where, f"{text!r} is not one of {allowed}") from None


def parse_match_tables(rules: Rules, tm: TomlTable, f: TomlTable) -> tuple[MatchSettings, float]:
    """``[time]`` and ``[faults]`` (a tournament's or a ladder's): every match's settings
    but its seats and seed, and ``match_timeout_s``."""
    time = _settings_keys(tm)
    match_timeout_s = tm.number("match_timeout_s", DEFAULT_MATCH_TIMEOUT_S, low=1.0)
    tm.done()
    faults = _settings_keys(f)
    f.done()
    return _match_settings(rules, {**time, **faults}), match_timeout_s


def _settings_keys(table: TomlTable) -> dict[str, int]:
    """The keys of ``SETTINGS`` that ``table`` holds, with the tournament's defaults and
    ``MatchSettings``' bounds."""
    return {
        s.name: table.whole(s.name, TOURNAMENT_DEFAULTS.get(s.name, s.default), s.low, s.high)
        for s in SETTINGS
        if s.table == table.where
    }


def _match_settings(rules: Rules, values: Mapping[str, int]) -> MatchSettings:
    """Every match's settings; ConfigError for what the rules ask for that no match may
    (hands over the cap)."""
    try:
        return settings_from_values(rules, values)
    except SettingsError as exc:
        table = next((s.table for s in SETTINGS if s.name == exc.field), "")
        raise ConfigError(f"{table}.{exc.field}" if table else "rules", str(exc)) from None


def parse_rules(r: TomlTable) -> Rules:
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
    try:
        rules = match_rules(profile, options, hands, threshold)
    except SettingsError as exc:
        where = {"profile": "rules.profile", "options": "rules.options"}.get(exc.field, "rules")
        raise ConfigError(where, str(exc)) from None
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
        b = TomlTable(item, where)
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
            if is_model_seat(builtin):  # a language model: llm:SETTINGS, beside this file
                try:
                    builtin = model_seat_name(builtin, base)
                except ConfigError as exc:
                    raise ConfigError(f"{where}.builtin", str(exc)) from None
            elif builtin not in BUILTIN_BOTS:
                raise ConfigError(
                    f"{where}.builtin",
                    f"{builtin!r} is not one of {', '.join(BUILTIN_BOTS)} "
                    "(or llm:SETTINGS.toml for a language model)",
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
    b: TomlTable, name: str, where: str, base: Path, kind: str = "command"
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
    limits = parse_limits(limits_table, LIMIT_FIELDS)
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


__all__ = ["load_config", "parse_config"]
