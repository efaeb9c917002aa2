"""``referee benchmark``: a candidate against a pool, as a tournament.

A benchmark is a gauntlet (``referee.tournament``) whose hero is the candidate and whose
other bots are the pool's anchors (built-in bots): each table seats the candidate with
three anchors (every such set of the pool), every rotation of the seats, and every table
of round ``k`` plays deal ``k`` of the pool's deal set (``deals = "per-round"``). So a
benchmark folder is a tournament folder: the same signed logs, results, standings,
resume after a stop, ``referee verify --tournament`` and ``referee view``; the benchmark
adds ``benchmark.json``, its report (``referee.benchmark.report``), computed from
results.jsonl alone. The cost is linear in the number of deals.

The candidate is any bot a tournament takes: a built-in name, a command, ``stdio:``
COMMAND, a remote bot's key, or a ``[[bot]]`` table of a TOML file (with its env, cwd,
sandbox limits).
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from referee.benchmark.pool import Pool
from referee.bots import BUILTIN_BOTS
from referee.llm import is_model_seat, model_seat_name
from referee.stdio import PREFIX as STDIO_PREFIX
from referee.toml_table import ConfigError, read_toml
from referee.tournament.config import TournamentConfig
from referee.tournament.toml_reader import parse_config

CANDIDATE = "candidate"
"""The candidate's name at the table unless one is given."""
DEFAULT_TURN_TIME_MS = 2000


@dataclasses.dataclass(frozen=True, slots=True)
class Request:
    """What to benchmark, against what, how."""

    pool: Pool
    bot: dict[str, Any]
    """The candidate's ``[[bot]]`` table (its name included)."""
    base: Path
    """Relative paths of the candidate (its cwd, its program) are from here."""
    quick: bool = False
    deals: int | None = None
    """None: the pool's default (or quick) number."""
    concurrency: int = 2
    turn_time_ms: int = DEFAULT_TURN_TIME_MS
    time_bank_ms: int = 0
    address: str = "127.0.0.1:0"
    sandbox: str = "auto"

    @property
    def name(self) -> str:
        return str(self.bot["name"])

    @property
    def anchors(self) -> list[str]:
        return self.pool.names(quick=self.quick)

    @property
    def deal_count(self) -> int:
        if self.deals is not None:
            return self.deals
        return self.pool.quick_deals if self.quick else self.pool.default_deals


def candidate_table(text: str, name: str = CANDIDATE) -> dict[str, Any]:
    """The ``[[bot]]`` table of a bot as the command line gives it: a built-in name, a
    language model (``llm:SETTINGS.toml``, the path made absolute from the working folder,
    its settings checked), a command, or ``stdio:COMMAND``.

    >>> candidate_table("greedy")
    {'name': 'candidate', 'builtin': 'greedy'}
    >>> candidate_table("stdio:./plain --fast", "plain")
    {'name': 'plain', 'stdio': './plain --fast'}
    """
    text = text.strip()
    if not text:
        raise ConfigError("BOT", "an empty bot: give a built-in name or a command")
    if text in BUILTIN_BOTS:
        return {"name": name, "builtin": text}
    if is_model_seat(text):
        return {"name": name, "builtin": model_seat_name(text, Path.cwd())}
    if text.startswith(STDIO_PREFIX):
        return {"name": name, "stdio": text[len(STDIO_PREFIX) :].strip()}
    try:
        shlex.split(text)
    except ValueError as exc:
        raise ConfigError("BOT", f"cannot split the command {text!r}: {exc}") from None
    return {"name": name, "command": text}


def bot_from_file(path: Path, name: str | None = None) -> dict[str, Any]:
    """The one ``[[bot]]`` table of a TOML file (a tournament's form, every key it takes).
    Raises ConfigError."""
    data = read_toml(path)
    bots = data.get("bot")
    if set(data) != {"bot"} or not isinstance(bots, list) or len(bots) != 1:
        raise ConfigError(str(path), "should hold exactly one [[bot]] table and nothing else")
    bot = dict(bots[0])
    if name:
        bot["name"] = name
    bot.setdefault("name", CANDIDATE)
    return bot


def config_data(request: Request, output: Path) -> dict[str, Any]:
    """The tournament's configuration, as a TOML document would hold it."""
    pool = request.pool
    name = request.name
    if name in request.anchors:
        raise ConfigError(
            "BOT", f"the candidate cannot be named {name!r}: an anchor of the pool is (--name)"
        )
    return {
        "tournament": {
            "name": f"benchmark {pool.version}: {name}" + (" (quick)" if request.quick else ""),
            "seed": pool.deal_seed,
            "format": "gauntlet",
            "hero": name,
            "rounds": request.deal_count,
            "seatings": "rotations",
            "deals": "per-round",
            "concurrency": request.concurrency,
            "output": str(output),
        },
        "rules": {"profile": pool.profile, "hands": pool.hands},
        "time": {"turn_time_ms": request.turn_time_ms, "time_bank_ms": request.time_bank_ms},
        "referee": {"address": request.address},
        "sandbox": {"enabled": {"auto": "auto", "on": True, "off": False}[request.sandbox]},
        "bot": [request.bot, *({"name": a, "builtin": a} for a in request.anchors)],
    }


def tournament_config(request: Request, output: Path) -> TournamentConfig:
    """The checked configuration; raises ConfigError naming what is wrong."""
    if request.deal_count < 1:
        raise ConfigError("--deals", "must be at least 1")
    return parse_config(config_data(request, output.resolve()), request.base / "benchmark.toml")
