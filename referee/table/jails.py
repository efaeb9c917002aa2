"""What a spawned bot sees, and the jails of ``referee match``'s spawned bots.

A match's live log holds all four hands from its first event, and a bot learns its match
id from Welcome: a bot that can read the log folder knows every card. So a spawned bot
runs in the best jail the machine allows (``referee.sandbox.probe``), and only where none
at all can be made, and the person running the match has not said ``--sandbox on``, does
it run bare, after one loud warning. Tournaments decide the same way
(``referee.tournament.isolation``) with the functions here.

What a jailed bot sees, read-only: the system (/usr, /etc, /opt), its own files (its
working folder, the folder of its program and of every file its command names; a home
folder or / is never shown whole, only the files named in it), the Python that runs the
referee with the pusoy_client SDK (so ``{python} bot.py`` works). Hidden even inside
those: the log folder, the state folder, a tournament's folder, and the folders and
files of the other spawned bots. Its environment is its ``env``, the PUSOY_ variables,
PATH and the locale; nothing else of the referee's. A bare bot gets the same few
variables (and its HOME), never the referee's whole environment.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import referee
from referee.sandbox import (
    Jail,
    JailSpec,
    Level,
    RefereeSocket,
    SandboxLimits,
    SandboxUnavailable,
    Support,
    probe,
)
from referee.sandbox.bwrap import NOBODY, unreadable
from referee.table.bots import CommandBot, Seat, expand

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "JAVA_HOME", "TERM")
"""Variables of the referee's environment a spawned bot also gets."""
BARE_ENV = (*PASSED_ENV, "HOME", "USER", "LOGNAME", "TMPDIR")
"""... and a bare one (it runs as the referee's user anyway)."""
SANDBOX_CHOICES = ("auto", "on", "off")


def jail_env(env: Mapping[str, str]) -> dict[str, str]:
    """A jailed bot's whole environment."""
    out = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    return out | {"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "bot", **env}


def bare_env(env: Mapping[str, str]) -> dict[str, str]:
    """A bare bot's whole environment: a few of the referee's variables, then its own."""
    return {k: os.environ[k] for k in BARE_ENV if k in os.environ} | dict(env)


def runtime_paths() -> list[Path]:
    """The Python running the referee with its import path (its packages, wherever a
    ``.pth`` file put them), and the SDK a ``{python}`` bot imports."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    here = Path.cwd().resolve()
    for entry in sys.path:
        path = Path(entry).resolve() if entry else here
        if path != here and path.is_dir() and not _broad(path):
            paths.add(path)
    # Found, not imported: the SDK has its own generated modules, which cannot share a
    # process with the referee's.
    sdk = importlib.util.find_spec("pusoy_client")
    if sdk is not None and sdk.origin:
        paths.add(Path(sdk.origin).resolve().parent)
    paths.add(Path(referee.__file__).resolve().parent)  # stdio bots run referee's bridge
    return sorted(paths)


def _broad(folder: Path) -> bool:
    """A folder never shown whole: / and home folders (a bot in one sees its files)."""
    homes = {Path("/"), Path("/home"), Path("/root"), Path.home().resolve()}
    return folder in homes or folder.parent == Path("/home")


def named_paths(argv: Sequence[str], cwd: Path | None) -> tuple[set[Path], set[Path]]:
    """The folders and files a command names: its cwd, its program and every word of
    its command that is an existing path (placeholders other than {python} left out)."""
    cwd = (cwd or Path.cwd()).resolve()
    folders, files = set() if _broad(cwd) else {cwd}, set()
    for i, word in enumerate(argv):
        if word == "{python}":
            continue  # the runtime: visible anyway
        word = expand([word], {"python": sys.executable})[0]
        if "{" in word or not word or word.startswith("-"):
            continue
        if i == 0 and os.sep not in word:
            continue  # a program found on PATH: part of the system
        path = (cwd / word).resolve()
        if path.is_file():
            files.add(path)
            if not _broad(path.parent):
                folders.add(path.parent)
            folders.update(_environment_of(cwd / word))
        elif path.is_dir() and i > 0 and not _broad(path):
            folders.add(path)
    return folders, files


def _environment_of(program: Path) -> list[Path]:
    """The Python virtualenv a program belongs to (a console script in its ``bin``, or a
    script whose ``#!`` names one's python), with the Python it was made from: a bot
    installed in a virtualenv of its own runs in the jail as it does outside.

    >>> _environment_of(Path("/nonexistent/bin/bot"))
    []
    """
    candidates = [program.absolute()]
    try:
        with open(program, "rb") as f:
            first = f.readline(512)
        if first.startswith(b"#!"):
            words = first[2:].decode(errors="replace").split()
            if words and words[0].startswith("/"):
                candidates.append(Path(words[0]))
    except OSError:
        pass
    for candidate in candidates:
        for folder in list(candidate.parents)[:3]:
            config = folder / "pyvenv.cfg"
            if config.is_file():
                found = [folder.resolve()]
                for line in config.read_text(errors="replace").splitlines():
                    key, _, value = line.partition("=")
                    if key.strip() == "home" and value.strip().startswith("/"):
                        home = Path(value.strip()).resolve()
                        found.append(home.parent if home.name == "bin" else home)
                return [f for f in found if f.is_dir() and not _broad(f)]
    return []


def bot_view(
    own: tuple[set[Path], set[Path]],
    others: Iterable[tuple[set[Path], set[Path]]],
    *,
    read_only: Iterable[Path] = (),
    hidden: Iterable[Path] = (),
) -> tuple[list[Path], list[Path]]:
    """What a bot may see (its ``named_paths``, the runtime, ``read_only``) and what is
    hidden from it even there (``hidden``, and the other bots' folders and files)."""
    folders, files = own
    visible = [*sorted(folders), *sorted(files), *runtime_paths(), *read_only]
    masked = [Path(h).resolve() for h in hidden]
    for their_folders, their_files in others:
        for folder in their_folders:
            # A folder that holds something the bot may see stays; the other bot's
            # files in it are hidden one by one below.
            if not any(v == folder or folder in v.parents for v in visible):
                masked.append(folder)
        masked.extend(their_files - files)
    return visible, masked


def bot_identity(level: Level) -> tuple[int, int]:
    """The user and group a jailed bot runs as: nobody, or in a light jail made by an
    ordinary user, that user (in a user namespace of its own)."""
    if level is Level.LIGHT and os.geteuid() != 0:
        return os.getuid(), os.getgid()
    return NOBODY, NOBODY


def who(level: Level) -> str:
    uid, _ = bot_identity(level)
    return "nobody (uid 65534)" if uid == NOBODY else f"your own user (uid {uid})"


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


class MatchJails:
    """The jails of one ``referee match`` (a ``referee.sandbox.Jailer``): the referee's
    socket bridged into each, what each bot sees, its limits."""

    def __init__(
        self,
        support: Support,
        level: Level,
        seats: Sequence[Seat],
        *,
        hidden: Sequence[Path],
        limits: SandboxLimits | None = None,
    ) -> None:
        if level is Level.NONE:
            raise ValueError("MatchJails makes jails; a bare bot needs none")
        if level is Level.FULL and support.cgroups is None:
            raise SandboxUnavailable(f"no full jail here: {support.why_not(Level.FULL)}")
        self.support = support
        self.level = level
        self.limits = limits or SandboxLimits()
        self.socket: RefereeSocket | None = None
        self.port = 0
        self.uid, self.gid = bot_identity(level)
        bots = {s.name: s.bot for s in seats if isinstance(s.bot, CommandBot)}
        named = {name: _named(bot) for name, bot in bots.items()}
        self.views = {
            name: bot_view(paths, (p for n, p in named.items() if n != name), hidden=hidden)
            for name, paths in named.items()
        }
        self.cwds = {name: (bot.cwd or Path.cwd()).resolve() for name, bot in bots.items()}
        self.named = named

    @property
    def counts_cpu(self) -> bool:
        return self.level is Level.FULL

    def unreadable(self, name: str) -> tuple[list[Path], list[Path]]:
        """What the bot ``name`` could not read of its own files in its jail: the files
        its command names (it cannot run), then the rest of its folders."""
        folders, files = self.named[name]
        _, hidden = self.views[name]
        found = unreadable([*folders, *files], hidden, self.uid, self.gid)
        named = [p for p in found if p in files]
        return named, [p for p in found if p not in files]

    def describe(self, name: str) -> list[str]:
        """``--dry-run``'s lines for one bot: its jail, what it sees, what it cannot read."""
        visible, hidden = self.views[name]
        lines = [f"  jail: {self.level.describe()}, as {who(self.level)}"]
        tops = [p for p in visible if not any(q in p.parents for q in visible)]
        listed = ", ".join(str(p) for p in dict.fromkeys(tops))
        lines.append(f"  sees, read-only: the system (/usr, /etc, /opt), {listed}")
        shown = [str(h) for h in hidden if any(h == v or v in h.parents for v in visible)]
        if shown:
            lines.append("  hidden from it: " + ", ".join(shown))
        named, rest = self.unreadable(name)
        for what, paths in (("cannot read (it cannot run)", named), ("cannot read", rest)):
            if paths:
                more = f" and {len(paths) - 8} more" if len(paths) > 8 else ""
                listed = ", ".join(str(p) for p in paths[:8])
                lines.append(f"  {what}: {listed}{more} (make them readable by others)")
        return lines

    # -- the Jailer --------------------------------------------------------------------

    def listen_addresses(self) -> list[str]:
        """The socket a referee in this process also listens on, for the jails."""
        self.socket = RefereeSocket()
        return [self.socket.grpc_address]

    def opened(self, referee_address: str) -> None:
        """The referee listens: the bots' user may connect."""
        assert self.socket is not None
        self.port = int(referee_address.rpartition(":")[2])
        self.socket.opened()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def jail(self, name: str, argv: Sequence[str], env: Mapping[str, str]) -> Jail:
        assert self.socket is not None
        visible, hidden = self.views[name]
        spec = JailSpec(
            argv=argv,
            cwd=self.cwds[name],
            env=jail_env(env),
            visible=visible,
            hidden=hidden,
            revealed=sorted(self.named[name][1]),
            referee_socket=self.socket.path,
            port=self.port,
            uid=self.uid,
            gid=self.gid,
            limits=self.limits,
            level=self.level,
        )
        cgroups = self.support.cgroups if self.level is Level.FULL else None
        jail = Jail(spec, cgroups, bwrap=self.support.bwrap or "bwrap")
        jail.unreadable = tuple(self.unreadable(name)[0])
        return jail

    def release(self, jail: Jail) -> None:
        pass

    def close(self) -> None:
        if self.socket is not None:
            self.socket.close()
            self.socket = None


@dataclasses.dataclass
class JailPlan:
    """How ``referee match`` runs its spawned bots, decided before anything starts."""

    mode: str
    level: Level
    support: Support | None
    seats: Sequence[Seat]
    jails: MatchJails | None
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
    jails = MatchJails(support, level, seats, hidden=[log_dir, state_dir])
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
    "MatchJails",
    "bare_env",
    "bare_warning",
    "bot_identity",
    "bot_view",
    "choose_level",
    "jail_env",
    "named_paths",
    "plan_jails",
    "runtime_paths",
    "who",
]
