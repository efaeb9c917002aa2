"""``referee match``'s jails: the choice (``--sandbox``), the spawned bots' views and
environment, ``--dry-run``'s account, the one warning before bots run bare.

A match's live log holds all four hands from its first event, and a bot learns its match
id from Welcome: a bot that can read the log folder knows every card. So a spawned bot
runs in the best jail the machine allows (``referee.sandbox.probe``), and only where none
at all can be made, and the person running the match has not said ``--sandbox on``, does
it run bare, after one loud warning. What a jailed bot sees is
``referee.sandbox.view``'s (its own files without its author's private ones, the
runtime); hidden from it besides: this run's log and state folders, and the other
spawned bots' folders and files. Its environment is its ``env``, the PUSOY_ variables,
PATH and the locale; nothing else of the referee's. A bare bot gets the same few
variables (and its HOME), never the referee's whole environment. Tournaments decide
their own way (``referee.tournament.isolation``) with the same jailer.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.sandbox import Level, SandboxLimits, Support, probe
from referee.sandbox.jailer import Jailer, views_of
from referee.sandbox.view import BotView, bot_view, named_paths, who
from referee.table.bots import CommandBot, Seat

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "JAVA_HOME", "TERM")
"""Variables of the referee's environment a spawned bot also gets."""
BARE_ENV = (*PASSED_ENV, "HOME", "USER", "LOGNAME", "TMPDIR")
"""... and a bare one (it runs as the referee's user anyway)."""
SANDBOX_CHOICES = ("auto", "on", "off")


def passed_env() -> dict[str, str]:
    """The few variables of the referee's environment a jailed bot gets."""
    return {k: os.environ[k] for k in PASSED_ENV if k in os.environ}


def bare_env(env: Mapping[str, str]) -> dict[str, str]:
    """A bare bot's whole environment: a few of the referee's variables, then its own."""
    return {k: os.environ[k] for k in BARE_ENV if k in os.environ} | dict(env)


def choose_level(mode: str, support: Support | None = None) -> tuple[Level, Support]:
    """``--sandbox``: off, the best jail (auto), or the best jail and never none (on:
    SandboxUnavailable naming what is missing)."""
    if mode not in SANDBOX_CHOICES:
        raise ValueError(f"--sandbox is one of {', '.join(SANDBOX_CHOICES)}, not {mode!r}")
    support = support or probe()
    if mode == "off":
        return Level.NONE, support
    if mode == "on":
        support.require(Level.LIGHT)
    return support.level, support


def bare_warning(support: Support, log_dir: Path, chosen: bool) -> str:
    """The one loud warning before spawned bots run bare."""
    why = (
        "--sandbox off" if chosen else f"no jail can be made on this machine ({support.explain()})"
    )
    return (
        f"WARNING: spawned bots run WITHOUT a jail: {why}. Each runs as you: it can read "
        f"every file you can, among them the live log in {log_dir}, which holds all four "
        "hands from the first event (so it can know every card), and it can reach the "
        "network. Run only bots you trust this way; "
        + (
            "--sandbox auto jails them where the machine allows"
            if chosen
            else "--sandbox off says you know, --sandbox on refuses to run"
        )
    )


@dataclasses.dataclass
class JailPlan:
    """How ``referee match`` runs its spawned bots, decided before anything starts."""

    mode: str
    level: Level
    support: Support | None
    seats: Sequence[Seat]
    jails: Jailer | None
    warnings: list[str]
    """To print before the match (the bare bots' warning: once)."""
    blocking: list[str]
    """Bots that cannot run in their jail (a file their command names is unreadable)."""

    def lines(self) -> list[str]:
        """``--dry-run``: each spawned bot's jail, what it sees and cannot read."""
        out = []
        for seat, spec in enumerate(self.seats):
            if not isinstance(spec.bot, CommandBot):
                continue
            out.append(f"seat {seat} ({spec.name}): {' '.join(spec.bot.own_argv)}")
            if self.jails is not None:
                out += self.jails.describe(spec.name)
            else:
                out.append(f"  jail: {Level.NONE.describe()}")
                kept = ", ".join(k for k in BARE_ENV if k in os.environ)
                out.append(f"  environment: its own, PUSOY_*, and {kept} of yours")
        if not out:
            return ["no spawned bots: nothing to jail"]
        if self.support is not None and self.level is not Level.FULL and self.support.missing:
            out.append(f"not available here: {self.support.explain()}")
        return out


def plan_jails(
    mode: str,
    seats: Sequence[Seat],
    *,
    log_dir: Path,
    state_dir: Path,
    support: Support | None = None,
    limits: SandboxLimits | None = None,
) -> JailPlan:
    """Decide the jails of a match's spawned bots (``--sandbox``: auto, on, off); raises
    SandboxUnavailable for ``on`` where no jail can be made."""
    spawned = [s for s in seats if isinstance(s.bot, CommandBot)]
    if not spawned:
        return JailPlan(mode, Level.NONE, None, seats, None, [], [])
    level, support = choose_level(mode, support)
    if level is Level.NONE:
        warning = bare_warning(support, log_dir.resolve(), chosen=mode == "off")
        return JailPlan(mode, level, support, seats, None, [warning], [])
    jails = match_jailer(support, level, seats, hidden=[log_dir, state_dir], limits=limits)
    blocking = []
    for seat, spec in enumerate(seats):
        if isinstance(spec.bot, CommandBot):
            named, _ = jails.unreadable(spec.name)
            if named:
                blocking.append(
                    f"seat {seat} ({spec.name}) cannot run in its {level.value} jail: it "
                    f"runs there as {who(level)}, who cannot read "
                    + ", ".join(str(p) for p in named)
                    + ". Make them readable by others (chmod o+r, and o+x for their folders)"
                )
    return JailPlan(mode, level, support, seats, jails, [], blocking)


def match_jailer(
    support: Support,
    level: Level,
    seats: Sequence[Seat],
    *,
    hidden: Sequence[Path],
    limits: SandboxLimits | None = None,
) -> Jailer:
    """The jailer of one ``referee match``: each command bot's view (its own paths,
    without ``hidden`` and the other bots' files)."""
    bots = {s.name: s.bot for s in seats if isinstance(s.bot, CommandBot)}
    named = {name: _named(bot) for name, bot in bots.items()}
    views: dict[str, BotView] = {
        name: bot_view(
            paths,
            (p for n, p in named.items() if n != name),
            cwd=bots[name].cwd or Path.cwd(),
            hidden=hidden,
        )
        for name, paths in named.items()
    }
    return Jailer(
        support, views_of(views), limits or SandboxLimits(), level=level, passed_env=passed_env()
    )


def _named(bot: CommandBot) -> tuple[set[Path], set[Path]]:
    """A command bot's own paths; for a stdio bot, its program's too (the bridge is the
    referee's own)."""
    folders, files = named_paths(bot.argv, bot.cwd)
    if bot.program:
        more_folders, more_files = named_paths(bot.program, bot.cwd)
        folders |= more_folders
        files |= more_files
    return folders, files


__all__ = [
    "BARE_ENV",
    "PASSED_ENV",
    "SANDBOX_CHOICES",
    "JailPlan",
    "bare_env",
    "bare_warning",
    "choose_level",
    "match_jailer",
    "passed_env",
    "plan_jails",
]
