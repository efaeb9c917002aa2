"""A bot version's manifest: ``bot.toml`` at its archive's root, saying how to run it.

::

    runtime = "python"                      # one of RUNTIMES
    command = ["bot.py", "--depth", "2"]    # the arguments after the runtime's program
    description = "greedy, with a memory"   # optional, shown on the bot's page

The command is an argument list, never a shell string: no shell ever reads it, so no
quoting, globbing or expansion can happen to it. There is no install step: an archive
brings what it needs (a Python bot its pure-Python packages in its own folder, a Java
bot one jar...). The runtimes a ladder offers are these, each run in the version's own
unpacked folder as its working folder:

- ``python``: the referee's own Python, which has the Python kit (``pusoy_client``);
  ``command`` starts with the script (``["bot.py"]``) or ``-m`` and a module.
- ``node``: Node.js (``node`` on the ladder's PATH); ``command`` starts with the script.
- ``java``: a Java runtime (``java`` on the ladder's PATH); ``["-jar", "bot.jar"]``.
- ``native``: a program in the archive, built for the ladder's machine (Linux x86-64
  unless its organiser says otherwise); ``command`` starts with its path in the archive,
  which must be a regular file with its executable bit set.

Two more runtimes exist for versions that no archive brings, never in a manifest:
``builtin`` (the referee's built-in strategies, the house's bots) and ``remote`` (a bot
that joins through the lobby with its team's key while it is online).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from referee.ladder.errors import ManifestError
from referee.text import printable

FILE_NAME = "bot.toml"
MAX_MANIFEST_BYTES = 16 * 1024
MAX_ARGS = 64
MAX_ARG_CHARS = 1024
MAX_DESCRIPTION_CHARS = 500


@dataclasses.dataclass(frozen=True, slots=True)
class Runtime:
    name: str
    summary: str
    program: str
    """The program that runs the command: "" for native (the command names its own)."""
    script_first: bool
    """The command's first argument, unless it is an option, is a file of the archive."""

    def launcher(self) -> list[str]:
        """The program's path on this machine; ManifestError when it is missing."""
        if self.name == "python":
            return [sys.executable]
        if not self.program:
            return []
        found = shutil.which(self.program)
        if found is None:
            raise ManifestError(f"the {self.name} runtime needs {self.program!r} on PATH")
        return [found]


RUNTIMES: dict[str, Runtime] = {
    r.name: r
    for r in (
        Runtime("python", "the referee's Python, with the Python kit", "python", True),
        Runtime("node", "Node.js", "node", True),
        Runtime("java", "a Java runtime", "java", False),
        Runtime("native", "a program of the archive's own", "", True),
    )
}


@dataclasses.dataclass(frozen=True, slots=True)
class Manifest:
    runtime: str
    command: tuple[str, ...]
    description: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {
                "runtime": self.runtime,
                "command": list(self.command),
                "description": self.description,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data = json.loads(text)
        return cls(data["runtime"], tuple(data["command"]), data.get("description", ""))

    def argv(self, folder: Path) -> list[str]:
        """The version's command line, run in ``folder`` (its unpacked archive)."""
        runtime = RUNTIMES.get(self.runtime)
        if runtime is None:  # builtin and remote versions are not run from a folder
            raise ManifestError(f"a {self.runtime} version has no command line")
        if runtime.name == "native":
            return [str(folder / self.command[0]), *self.command[1:]]
        return [*runtime.launcher(), *self.command]


def parse_manifest(data: bytes) -> Manifest:
    """A manifest from its file's bytes; ManifestError naming the key that is wrong."""
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{FILE_NAME} is over {MAX_MANIFEST_BYTES} bytes")
    try:
        table: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{FILE_NAME} is not TOML: {printable(str(exc))}") from None
    except RecursionError:  # arrays or tables nested past the parser's stack
        raise ManifestError(f"{FILE_NAME} is nested too deeply") from None
    unknown = sorted(set(table) - {"runtime", "command", "description"})
    if unknown:
        names = ", ".join(printable(k) for k in unknown)
        raise ManifestError(f"{FILE_NAME}: unknown key(s) {names} (runtime, command, description)")
    runtime = table.get("runtime")
    if runtime not in RUNTIMES:
        raise ManifestError(
            f"{FILE_NAME}: runtime must be one of {', '.join(RUNTIMES)}, "
            f"not {printable(repr(runtime))}"
        )
    command = table.get("command")
    if isinstance(command, str):
        raise ManifestError(
            f'{FILE_NAME}: command is an argument list (command = ["bot.py", "--flag"]), '
            "never a shell string"
        )
    if not isinstance(command, list) or not 1 <= len(command) <= MAX_ARGS:
        raise ManifestError(f"{FILE_NAME}: command must be a list of 1 to {MAX_ARGS} strings")
    for i, arg in enumerate(command):
        if not isinstance(arg, str) or not arg or len(arg) > MAX_ARG_CHARS or "\x00" in arg:
            raise ManifestError(
                f"{FILE_NAME}: command[{i}] must be a string of 1 to {MAX_ARG_CHARS} "
                "characters without NUL"
            )
    description = table.get("description", "")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS:
        raise ManifestError(
            f"{FILE_NAME}: description must be a string of at most {MAX_DESCRIPTION_CHARS} "
            "characters"
        )
    return Manifest(runtime, tuple(command), description)


def check_files(manifest: Manifest, folder: Path) -> None:
    """The files the command names are in the unpacked archive: the script, or for a
    native program a regular file with its executable bit."""
    runtime = RUNTIMES[manifest.runtime]
    first = manifest.command[0]
    if not runtime.script_first or (first.startswith("-") and runtime.name != "native"):
        return
    rel = PurePosixPath(first)
    if rel.is_absolute() or ".." in rel.parts:
        raise ManifestError(
            f"{FILE_NAME}: command[0] {printable(first)!r} must be a path inside the archive"
        )
    path = folder / rel
    if path.is_symlink() or not path.is_file():
        raise ManifestError(
            f"{FILE_NAME}: command[0] {printable(first)!r} is not a file of the archive"
        )
    if runtime.name == "native" and not path.stat().st_mode & 0o100:
        raise ManifestError(
            f"{FILE_NAME}: the native program {printable(first)!r} has no executable bit "
            "(chmod +x it before making the archive)"
        )
