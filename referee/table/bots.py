"""The bots a table seats: built-in strategies, spawned commands, remote bots of the lobby.

A command is kept as words with its placeholders (``{address}``, ``{token}``, ...) not yet
replaced: the table replaces them when it spawns the bot for a match. Seat names default
to the program's name (``random_bot`` for ``python examples/random_bot.py --x``), told
apart when a table has two of the same (``greedy-1``, ``greedy-2``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from referee.bots import BUILTIN_BOTS
from referee.llm import MODEL_PREFIX, is_model_seat, model_seat_name, settings_file
from referee.stdio import PREFIX as STDIO_PREFIX
from referee.stdio import bridge_argv

PLACEHOLDERS = {
    "address": "the referee's address, HOST:PORT (also in PUSOY_ADDRESS)",
    "token": "the seat's token; better left to PUSOY_TOKEN, which every kit reads: on a "
    "command line every user of the machine can read it in the process list (a warning)",
    "python": "the Python running the referee, which has the Python kit (pusoy_client)",
    "seat": "the seat, 0 to 3",
    "match": "the match's id (a tournament's own id for it)",
    "name": "the seat's name",
    "ca_file": "a referee over TLS: the CA to check it with (also PUSOY_TLS_CA); else empty",
    "client_cert": "mutual TLS: the bot's certificate (also PUSOY_TLS_CERT); else empty",
    "client_key": "mutual TLS: its key (also PUSOY_TLS_KEY); else empty",
}
"""What a command may contain in braces, and what each becomes when the bot is spawned."""
_PLACEHOLDER_RE = re.compile(r"\{(\w*)\}")

MAX_SEAT_NAME_CHARS = 40


@dataclasses.dataclass(frozen=True, slots=True)
class BuiltinBot:
    """A strategy of ``referee.bots``, or a language model (``llm:SETTINGS``, an absolute
    path: ``referee.llm``), played in this process over real gRPC."""

    strategy: str


@dataclasses.dataclass(frozen=True, slots=True)
class CommandBot:
    """A program spawned for each match, in a process group of its own."""

    argv: tuple[str, ...]
    """The command in words, placeholders not yet replaced."""
    env: tuple[tuple[str, str], ...] = ()
    """Added to the environment (which also gets PUSOY_ADDRESS and PUSOY_TOKEN)."""
    cwd: Path | None = None
    program: tuple[str, ...] = ()
    """For a stdio bot, whose command is the bridge: the bot's own command (the seat is
    named after it, and it is what must exist)."""

    @property
    def own_argv(self) -> tuple[str, ...]:
        """The bot's own command: ``program`` for a stdio bot, else ``argv``."""
        return self.program or self.argv


@dataclasses.dataclass(frozen=True, slots=True)
class RemoteBot:
    """A bot that joins through the referee's lobby with its key, under this name."""

    name: str


@dataclasses.dataclass(frozen=True, slots=True)
class EmptySeat:
    """Nobody plays the seat (a disqualified bot's forfeit): the referee is told at once
    that its bot is gone, so the seat is played by default from the start."""

    reason: str


Bot = BuiltinBot | CommandBot | RemoteBot | EmptySeat


@dataclasses.dataclass(frozen=True, slots=True)
class Seat:
    """A seat of the table: the bot and the name the match gives it."""

    name: str
    bot: Bot


def parse_bot(text: str) -> Bot:
    """A bot as the command line gives it: a built-in name, ``llm:SETTINGS`` for a
    language model (``referee.llm``; the file is read and checked, relative to the current
    folder), a command (split like a shell would; no shell runs), or ``stdio:COMMAND`` for
    a bot that speaks JSON lines on stdin/stdout (spawned behind the stdio bridge,
    ``referee.stdio``). Raises ValueError for an empty or unsplittable one, or model
    settings that do not read.

    >>> parse_bot("greedy")
    BuiltinBot(strategy='greedy')
    >>> parse_bot("./mybot --seat={seat}").argv
    ('./mybot', '--seat={seat}')
    >>> parse_bot("stdio:./plain --fast").argv[1:]
    ('-m', 'referee.cli', 'stdio-bot', '--name', '{name}', '--', './plain', '--fast')
    """
    text = text.strip()
    if not text:
        raise ValueError("an empty bot: give a built-in name or a command")
    if text in BUILTIN_BOTS:
        return BuiltinBot(text)
    if is_model_seat(text):
        from referee.tournament.config import ConfigError

        try:
            return BuiltinBot(model_seat_name(text, Path.cwd()))
        except ConfigError as exc:
            raise ValueError(f"{text}: {exc}") from None
    stdio = text.startswith(STDIO_PREFIX)
    command = text[len(STDIO_PREFIX) :].strip() if stdio else text
    if not command:
        raise ValueError(f"{text!r}: give the stdio bot's command after {STDIO_PREFIX}")
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise ValueError(f"cannot split the command {command!r}: {exc}") from None
    if (unknown := unknown_placeholder(argv)) is not None:
        raise ValueError(f"{command!r}: {unknown}")
    if stdio:
        bridge = bridge_argv(argv, name="{name}", python="{python}")
        return CommandBot(tuple(bridge), program=argv)
    return CommandBot(argv)


def unknown_placeholder(argv: Sequence[str]) -> str | None:
    """Why a command's placeholders cannot all be replaced, or None.

    >>> unknown_placeholder(["bot", "--token={tokn}"])
    'unknown placeholder {tokn} (known: {address}, {token}, {python}, {seat}, {match}, {name}, \
{ca_file}, {client_cert}, {client_key})'
    """
    for word in argv:
        for found in _PLACEHOLDER_RE.findall(word):
            if found not in PLACEHOLDERS:
                known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                return f"unknown placeholder {{{found}}} (known: {known})"
    return None


TOKEN_WARNING = (
    "its command puts the seat token on the command line ({token}), where every user of "
    "this machine can read it (ps): leave {token} out, the bot gets the token in "
    "PUSOY_TOKEN (every kit reads it)"
)
"""Said once per bot whose command has ``{token}``, where a match or a tournament is
configured (``referee match``, ``referee tournament``), also with ``--dry-run``."""


def token_warning(argv: Sequence[str]) -> str | None:
    """``TOKEN_WARNING`` when a command puts the seat token on its command line.

    >>> token_warning(["bot", "--token={token}"]) == TOKEN_WARNING
    True
    >>> token_warning(["bot", "--address", "{address}"]) is None
    True
    """
    return TOKEN_WARNING if any("{token}" in word for word in argv) else None


def expand(argv: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """Replace ``{name}`` placeholders in every word.

    >>> expand(["bot", "--seat={seat}"], {"seat": "2"})
    ['bot', '--seat=2']
    """
    out = []
    for word in argv:
        for key, value in values.items():
            word = word.replace("{" + key + "}", value)
        out.append(word)
    return out


_INTERPRETERS: tuple[str, ...] = (
    *("python", "pypy", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua"),
    *("bash", "sh", "zsh", "java", "dotnet", "Rscript", "julia", "stdbuf"),
)
_WITH_VALUE = ("-cp", "-classpath", "--class-path", "-X", "-W", "-r", "--require", "-o")
"""Interpreter options whose next word is their value, not the program."""
_NAMING = ("-m", "-jar")
"""Interpreter options whose next word names the program (a module, a jar)."""
_INLINE = ("-c", "-e", "--eval")
"""Interpreter options that give the program inline: the interpreter names it."""
_GENERIC = ("bot", "main", "index", "run", "start", "app", "__main__", "client")
_EXTENSIONS = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".jar", ".lua", ".php")


def bot_name(bot: Bot) -> str:
    """A short name for a seat: the strategy, the lobby name, or the program's name
    (for an interpreter, its script's), without folders or extension; a generic file
    name keeps its folder.

    >>> bot_name(CommandBot(("python3", "examples/random_bot.py", "--seat={seat}")))
    'random_bot'
    >>> bot_name(CommandBot(("clients/go/bot", "--address", "{address}")))
    'go-bot'
    >>> bot_name(CommandBot(("java", "-jar", "target/mybot.jar")))
    'mybot'
    >>> bot_name(CommandBot(("/usr/bin/python3", "-c", "import sys; sys.exit(1)")))
    'python3'
    """
    if isinstance(bot, BuiltinBot):
        return model_seat_label(bot.strategy) if is_model_seat(bot.strategy) else bot.strategy
    if isinstance(bot, RemoteBot):
        return bot.name
    if isinstance(bot, EmptySeat):
        return "empty"
    words = list(bot.own_argv)
    while words and "=" in words[0] and not words[0].startswith(("/", ".", "{")):
        words.pop(0)  # FOO=bar before the program (as env(1) takes them)
    if words and Path(words[0]).name == "env":
        words.pop(0)
        while words and ("=" in words[0] or words[0].startswith("-")):
            words.pop(0)
    if not words:
        return "bot"
    program = words[0]
    stem = Path(program.replace("{python}", "python")).name
    if stem.startswith(_INTERPRETERS) or stem == "{python}":
        rest = words[1:]
        i = 0
        while i < len(rest):
            word = rest[i]
            if word in _INLINE:
                break
            if word in _NAMING and i + 1 < len(rest):
                program = rest[i + 1].rsplit(".", 1)[-1] if word == "-m" else rest[i + 1]
                break
            if word in _WITH_VALUE:
                i += 2
                continue
            if not word.startswith("-"):
                program = word
                break
            i += 1
    return _short(program)


def model_seat_label(name: str) -> str:
    """A model seat's default seat name: its settings' ``name`` (the file's stem when
    they cannot be read here)."""
    from referee.llm.settings import load_model_settings
    from referee.tournament.config import ConfigError

    try:
        return load_model_settings(settings_file(name)).name[:MAX_SEAT_NAME_CHARS]
    except ConfigError:
        return _short(settings_file(name).stem or MODEL_PREFIX.rstrip(":"))


def _short(program: str) -> str:
    path = Path(program.rstrip("/"))
    name = path.name
    for ext in _EXTENSIONS:
        if name.endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
            break
    if name in _GENERIC and path.parent.name not in ("", "."):
        name = f"{path.parent.name}-{name}"
    name = "".join(c if c.isprintable() and not c.isspace() else "_" for c in name)
    return name[:MAX_SEAT_NAME_CHARS] or "bot"


def distinct_names(names: Sequence[str], reserved: Sequence[str] = ()) -> list[str]:
    """Seat names with repeats told apart, so four copies of a bot are four names;
    ``reserved`` names (given by a person for other seats) are not used either.

    >>> distinct_names(["greedy", "random", "greedy", "greedy"])
    ['greedy-1', 'random', 'greedy-2', 'greedy-3']
    >>> distinct_names(["greedy", "random"], reserved=["random"])
    ['greedy', 'random-1']
    """
    unique = {n for n in names if names.count(n) == 1 and n not in reserved}
    taken = unique | set(reserved)
    out = []
    for n in names:
        if n not in unique:
            k = 1
            while f"{n}-{k}" in taken:
                k += 1
            n = f"{n}-{k}"
            taken.add(n)
        out.append(n)
    return out


def check_name(name: str) -> str | None:
    """Why a seat name given by a person cannot be used, or None."""
    if not name.strip():
        return "a seat name cannot be empty"
    if len(name) > MAX_SEAT_NAME_CHARS:
        return f"a seat name has at most {MAX_SEAT_NAME_CHARS} characters: {name!r}"
    if not name.isprintable():
        return f"a seat name has only printable characters: {name!r}"
    return None


def check_program(argv: Sequence[str], cwd: Path) -> str | None:
    """Why the command cannot be run, or None: the program must exist (on PATH, or as a
    path from ``cwd``), and for ``{python} script.py`` or ``python script.py`` the script
    too. A program built from a placeholder cannot be checked before it is spawned."""
    program = argv[0].replace("{python}", sys.executable)
    if "{" in program:
        return None
    if os.sep in program or (os.altsep and os.altsep in program):
        path = cwd / program
        if not path.is_file():
            return f"program {program!r} not found (looked in {cwd})"
        if not os.access(path, os.X_OK):
            return f"program {program!r} is not executable"
    elif shutil.which(program) is None:
        return f"program {program!r} not found on PATH"
    if Path(program).name.startswith("python") and len(argv) > 1:
        script = argv[1]
        if not script.startswith("-") and "{" not in script and not (cwd / script).is_file():
            return f"script {script!r} not found (looked in {cwd})"
    return None


__all__ = [
    "PLACEHOLDERS",
    "Bot",
    "BuiltinBot",
    "CommandBot",
    "EmptySeat",
    "RemoteBot",
    "Seat",
    "bot_name",
    "check_name",
    "check_program",
    "command_warnings",
    "distinct_names",
    "expand",
    "parse_bot",
    "seat_warnings",
    "token_warning",
    "unknown_placeholder",
]


def command_warnings(bots: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """What to tell the organiser of a tournament's bots, by (name, command): one line per
    bot that puts its seat token on its command line."""
    return [f"bot {name}: {said}" for name, argv in bots if (said := token_warning(argv))]


def seat_warnings(seats: Sequence[Seat]) -> list[str]:
    """What to tell the person who configured a match of its seats' commands: one line
    per bot that puts its seat token on its command line."""
    out = []
    for i, seat in enumerate(seats):
        if isinstance(seat.bot, CommandBot) and (said := token_warning(seat.bot.own_argv)):
            out.append(f"warning: seat {i} ({seat.name}): {said}")
    return out


def match_seats(given: Sequence[tuple[str, str | None]]) -> list[Seat]:
    """The four seats of a match from its bots' texts (``parse_bot``), each with the name
    given for it or None (then its program's, made distinct); ValueError with a message
    for a person (``referee match``'s ``--bot`` and ``--name``)."""
    if len(given) != 4:
        raise ValueError(f"give 4 bots (--bot 4 times), got {len(given)}")
    bots = []
    for text, _ in given:
        bot = parse_bot(text)
        if isinstance(bot, CommandBot):
            problem = check_program(bot.own_argv, Path.cwd())
            if problem is not None:
                raise ValueError(f"cannot start bot {text!r}: {problem}")
        bots.append(bot)
    chosen = [name for _, name in given if name is not None]
    for name in chosen:
        problem = check_name(name)
        if problem is not None:
            raise ValueError(f"--name: {problem}")
        if chosen.count(name) > 1:
            raise ValueError(f"--name: two seats are named {name!r}")
    defaults = iter(
        distinct_names(
            [bot_name(b) for b, (_, name) in zip(bots, given, strict=True) if name is None],
            reserved=chosen,
        )
    )
    return [
        Seat(name if name is not None else next(defaults), bot)
        for bot, (_, name) in zip(bots, given, strict=True)
    ]
