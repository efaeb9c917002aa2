"""What a jailed bot sees: its program and the files it names, its runtime, its own folder
without its author's private files, and nothing else of the machine but the system.

A match's live log holds all four hands from its first event, an earlier log of the same
seed deals the same cards again, and a bot learns its match id from Welcome: so a bot's
view is built from what it needs, and every match, tournament and ladder builds it here:

- its command's own paths (``named_paths``): its working folder, the folder of its
  program and of every file its command names; a home folder or / is never shown whole,
  only the files named in it;
- the runtime (``runtime_paths``): the Python that runs the referee with its packages and
  the Python kit, so that ``{python} bot.py`` works;
- hidden even there (``bot_view``): what the caller names (this run's log and state
  folders, a tournament's folder), the other bots' folders and files, and whatever
  ``referee.sandbox.private_files`` finds private in the bot's own folders (every log,
  state and tournament folder, keys, tokens, ``.pusoyignore``). A folder too big to check
  is not shown whole: only the files the command names.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import referee
from referee.sandbox.bwrap import NOBODY, Level, unreadable
from referee.sandbox.private_files import Hidden, scan_folder

SYSTEM = ("/usr", "/etc", "/opt")


@dataclasses.dataclass(frozen=True, slots=True)
class BotView:
    """One bot's view: what it may read, and what is hidden from it even there."""

    cwd: Path
    visible: tuple[Path, ...]
    hidden: tuple[Path, ...] = ()
    revealed: tuple[Path, ...] = ()
    """Files it sees even inside a hidden folder: the ones its command names."""
    folders: tuple[Path, ...] = ()
    """Its own folders (shown, and checked for what its user cannot read)."""
    files: tuple[Path, ...] = ()
    """The files its command names."""
    private: tuple[Hidden, ...] = ()
    """What of its own folders was found private, and why."""
    notes: tuple[str, ...] = ()
    """What a person should know of this view (a folder too big to check)."""


def runtime_paths() -> list[Path]:
    """The Python running the referee with its import path (its packages, wherever a
    ``.pth`` file put them), and the SDK a ``{python}`` bot imports. Not the folders of
    the referee's PYTHONPATH, nor its working folder: a bot gets no PYTHONPATH, and
    such a folder may be a checkout holding logs."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    given = {Path.cwd().resolve()}
    given |= {Path(p).resolve() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    for entry in sys.path:
        path = Path(entry).resolve() if entry else None
        if path is not None and path not in given and path.is_dir():
            paths.add(path)
    # Found, not imported: the SDK has its own generated modules, which cannot share a
    # process with the referee's.
    sdk = importlib.util.find_spec("pusoy_client")
    if sdk is not None and sdk.origin:
        paths.add(Path(sdk.origin).resolve().parent)
    paths.add(Path(referee.__file__).resolve().parent)  # stdio bots run referee's bridge
    return sorted(p for p in paths if not broad(p))


def broad(folder: Path) -> bool:
    """A folder never shown whole: / and home folders (a bot in one sees its files)."""
    homes = {Path("/"), Path("/home"), Path("/root"), Path.home().resolve()}
    return folder in homes or folder.parent == Path("/home")


def named_paths(argv: Sequence[str], cwd: Path | None) -> tuple[set[Path], set[Path]]:
    """The folders and files a command names: its cwd, its program and every word of
    its command that is an existing path (placeholders other than {python} left out)."""
    cwd = (cwd or Path.cwd()).resolve()
    folders, files = set() if broad(cwd) else {cwd}, set()
    for i, word in enumerate(argv):
        if word == "{python}":
            continue  # the runtime: visible anyway
        word = word.replace("{python}", sys.executable)
        if "{" in word or not word or word.startswith("-"):
            continue
        if i == 0 and os.sep not in word:
            continue  # a program found on PATH: part of the system
        path = (cwd / word).resolve()
        if path.is_file():
            files.add(path)
            if not broad(path.parent):
                folders.add(path.parent)
            folders.update(_environment_of(cwd / word))
        elif path.is_dir() and i > 0 and not broad(path):
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
                return [f for f in found if f.is_dir() and not broad(f)]
    return []


def bot_view(
    own: tuple[set[Path], set[Path]],
    others: Iterable[tuple[set[Path], set[Path]]] = (),
    *,
    cwd: Path,
    read_only: Iterable[Path] = (),
    hidden: Iterable[Path] = (),
) -> BotView:
    """What a bot may see (its ``named_paths``, the runtime, ``read_only``) and what is
    hidden from it even there (``hidden``, the other bots' folders and files, and what
    is private in its own folders)."""
    folders, files = own
    private: list[Hidden] = []
    notes: list[str] = []
    shown: list[Path] = []
    runtime = runtime_paths()
    for folder in sorted(folders):
        if _runtime(folder, runtime):
            shown.append(folder)  # a Python and its packages: no author keeps logs there
            continue
        scan = scan_folder(folder)
        if not scan.complete:
            notes.append(
                f"{folder} holds too many files to check for logs and keys: only the "
                "files its command names are shown from it (a .pusoyignore can leave "
                "out the rest)"
            )
            continue
        private.extend(scan.hidden)
        shown.append(folder)
    visible = [*shown, *sorted(files), *runtime, *read_only]
    masked = [Path(h).resolve() for h in hidden]
    masked += [h.path for h in private if h.path not in files]
    for their_folders, their_files in others:
        for folder in their_folders:
            # A folder that holds something the bot may see stays; the other bot's
            # files in it are hidden one by one below.
            if not any(v == folder or folder in v.parents for v in visible):
                masked.append(folder)
        masked.extend(their_files - files)
    return BotView(
        cwd=cwd.resolve(),
        visible=tuple(dict.fromkeys(visible)),
        hidden=tuple(dict.fromkeys(masked)),
        revealed=tuple(sorted(files)),
        folders=tuple(sorted(folders)),
        files=tuple(sorted(files)),
        private=tuple(private),
        notes=tuple(notes),
    )


def _runtime(folder: Path, runtime: Sequence[Path]) -> bool:
    """A folder of a Python (the referee's, or a virtualenv of the bot's own)."""
    return (
        any(folder == r or r in folder.parents for r in runtime)
        or (folder / "pyvenv.cfg").is_file()
        or (folder / "bin" / "python3").exists()
    )


def folder_view(folder: Path) -> BotView:
    """An uploaded version's view: exactly its own folder (its working folder) and the
    runtime; nothing is read from its command (an archive could name anything there)."""
    folder = folder.resolve()
    return BotView(cwd=folder, visible=(folder, *runtime_paths()), folders=(folder,))


def bot_identity(level: Level) -> tuple[int, int]:
    """The user and group a jailed bot runs as: nobody, or in a light jail made by an
    ordinary user, that user (in a user namespace of its own)."""
    if level is Level.LIGHT and os.geteuid() != 0:
        return os.getuid(), os.getgid()
    return NOBODY, NOBODY


def who(level: Level) -> str:
    uid, _ = bot_identity(level)
    return "nobody (uid 65534)" if uid == NOBODY else f"your own user (uid {uid})"


def cannot_read(view: BotView, level: Level) -> tuple[list[Path], list[Path]]:
    """What the bot could not read of its own files in its jail: the files its command
    names (it cannot run), then the rest of its folders."""
    uid, gid = bot_identity(level)
    found = unreadable([*view.folders, *view.files], view.hidden, uid, gid)
    named = [p for p in found if p in view.files]
    return named, [p for p in found if p not in view.files]


def describe(view: BotView, level: Level) -> list[str]:
    """``--dry-run``'s lines for one bot: what it can read, what is hidden from it, what
    its user cannot read."""
    tops = [p for p in view.visible if not any(q in p.parents for q in view.visible)]
    lines = [f"  reads, read-only: the system ({', '.join(SYSTEM)})"]
    lines += [f"    {p}" for p in tops]
    lines.append(f"  works in {view.cwd} (relative paths of its command point there)")
    inside = [h for h in view.hidden if any(h == v or v in h.parents for v in view.visible)]
    if inside:
        why = {h.path: h.why for h in view.private}
        lines.append("  hidden from it:")
        lines += [
            f"    {h}: {why.get(h, 'the log, state or tournament folder, or another bot')}"
            for h in inside
        ]
    lines += [f"  note: {note}" for note in view.notes]
    named, rest = cannot_read(view, level)
    for what, paths in (("cannot read (it cannot run)", named), ("cannot read", rest)):
        if paths:
            more = f" and {len(paths) - 8} more" if len(paths) > 8 else ""
            listed = ", ".join(str(p) for p in paths[:8])
            lines.append(f"  {what}: {listed}{more} (make them readable by others)")
    return lines


__all__ = [
    "BotView",
    "bot_identity",
    "bot_view",
    "broad",
    "cannot_read",
    "describe",
    "folder_view",
    "named_paths",
    "runtime_paths",
    "who",
]
