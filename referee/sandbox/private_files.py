"""The author's own files: what no jailed bot is shown and no ladder submission carries.

A bot's folder is also where its author works: ``referee match`` and tournaments leave
logs there (every hand of every match, and the same seed deals the same cards again),
the state folder keeps the signing key, ``organiser create --tokens-dir`` the seats'
tokens. One rule says what of such a folder is private, for the jail
(``referee.sandbox.view``) and for ``referee ladder submit`` alike:

- by name: private keys (``*.pem``, ``*.key``), token files (``*.token``,
  ``organiser-token``), a running server's ``serving.json``, bots' output files
  (``*.stderr``, ``*.stderr.times``), a tournament's files (``tournament.json``,
  ``results.jsonl``, ``results.csv``, ``standings.json``), the state folder ``.referee``;
- by content: a match log (a ``.json*`` or ``.log`` file that starts as a log's first
  line does, whatever the rest of its name);
- folders: one that directly holds a match log, a bot's output, a tournament's file, a
  key or a token is a log, tournament, state or tokens folder, and is left out whole;
  so is a version control folder (``.git``: its history may hold anything once
  committed); a Python environment (a folder with ``pyvenv.cfg``) is not walked;
- what a ``.pusoyignore`` file lists (in the folder or any folder below it, for the
  entries under it): one pattern a line, as in a ``.gitignore``: ``#`` comments, ``!``
  takes a pattern back, a trailing ``/`` matches folders only, a ``/`` elsewhere anchors
  the pattern to the ignore file's folder, ``*`` and ``?`` never cross a ``/``, ``**``
  does.

The walk is bounded (``MAX_ENTRIES``); a folder too big to check is not complete
(``FolderScan.complete``), and its callers then show or pack none of it but what is
named one by one.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from referee.log.reader import starts_as_log

IGNORE_FILE = ".pusoyignore"
MAX_ENTRIES = 100_000
"""Entries a scan walks at most (a Rust kit's ``target/`` holds some thousands)."""
MAX_IGNORE_BYTES = 64 * 1024
"""A longer ignore file is read this far (a pattern cut in two is dropped)."""
LOG_SUFFIXES = (".json", ".log")
"""Names holding one of these are read to see whether they are match logs."""

KEYS = ("*.pem", "*.key")
TOKENS = ("*.token", "organiser-token", "serving.json")
OUTPUTS = ("*.stderr", "*.stderr.times")
TOURNAMENT = ("tournament.json", "results.jsonl", "results.csv", "standings.json")
STATE_FOLDERS = (".referee",)
VERSION_CONTROL = (".git", ".hg", ".svn")
"""Left out whole: their history may hold anything once committed (a log, a key)."""

_FILE_KINDS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (KEYS, "a private key", "a state folder"),
    (TOKENS, "a token file", "a tokens folder"),
    (OUTPUTS, "a bot's output", "a log folder"),
    (TOURNAMENT, "a tournament's file", "a tournament folder"),
)


@dataclasses.dataclass(frozen=True, slots=True)
class Hidden:
    """Something left out, and why (``"a match log"``, ``"listed in .pusoyignore"``...)."""

    path: Path
    why: str


def _by_name(name: str) -> tuple[str, str] | None:
    """(why the file is private, what a folder holding it is), by its name alone."""
    for patterns, why, folder in _FILE_KINDS:
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return why, folder
    return None


def _file_reason(path: Path, name: str) -> tuple[str, str] | None:
    found = _by_name(name)
    if found is not None:
        return found
    if any(s in name for s in LOG_SUFFIXES) and starts_as_log(path):
        return "a match log", "a log folder"
    return None


def private_reason(path: Path) -> str | None:
    """Why ``path`` (a file or a folder) is its author's own, never shown to a bot nor
    carried by a submission; None when it may be. A folder is looked at one level deep."""
    path = Path(path)
    name = path.name
    if path.is_symlink() or not path.is_dir():
        found = _file_reason(path, name)
        return found[0] if found is not None else None
    if name in STATE_FOLDERS:
        return "a state folder"
    if name in VERSION_CONTROL:
        return "a version control folder"
    try:
        with os.scandir(path) as it:
            return _holds_private(list(it))
    except OSError:
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    negated: bool
    folders_only: bool


def _translate(glob: str) -> str:
    """A ``.pusoyignore`` glob as a regular expression over a '/'-separated path."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_ignore(text: str) -> list[_Rule]:
    """The rules of one ignore file, in order (the last that matches decides).

    >>> [r.pattern.pattern for r in parse_ignore("# notes\\nlogs/\\n!keep.jsonl\\n/a/*.txt")]
    ['(?:.*/)?logs', '(?:.*/)?keep\\\\.jsonl', 'a/[^/]*\\\\.txt']
    """
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        folders_only = line.endswith("/")
        line = line.strip("/") if folders_only else line
        anchored = "/" in line.lstrip("/") or line.startswith("/")
        line = line.lstrip("/")
        if not line:
            continue
        body = _translate(line)
        regex = body if anchored else f"(?:.*/)?{body}"
        rules.append(_Rule(re.compile(regex), negated, folders_only))
    return rules


def _read_ignore(folder: Path) -> list[_Rule]:
    try:
        with open(folder / IGNORE_FILE, "rb") as f:
            data = f.read(MAX_IGNORE_BYTES)
    except OSError:
        return []
    if len(data) == MAX_IGNORE_BYTES:
        data = data.rpartition(b"\n")[0]
    return parse_ignore(data.decode("utf-8", "replace"))


def _ignored(layers: Sequence[tuple[str, list[_Rule]]], path: str, is_dir: bool) -> bool:
    """Whether the ignore files' rules leave ``path`` out (the last that matches decides);
    ``layers``: each ignore file's folder (ending in /) and its rules."""
    verdict = False
    for base, rules in layers:
        rel = path[len(base) :]
        for rule in rules:
            if rule.folders_only and not is_dir:
                continue
            if rule.pattern.fullmatch(rel):
                verdict = not rule.negated
    return verdict


@dataclasses.dataclass(frozen=True, slots=True)
class FolderScan:
    """What of a folder is private (``hidden``, top-most first) and whether all of it was
    looked at (``complete``)."""

    root: Path
    hidden: tuple[Hidden, ...]
    complete: bool
    entries: int
    """Entries walked."""

    def hides(self, path: Path) -> bool:
        return any(h.path == path or h.path in path.parents for h in self.hidden)

    def files(self) -> list[Path]:
        """Every regular file under ``root`` that may be shown or packed, sorted (none
        when the scan was not complete). Symbolic links are not followed."""
        if not self.complete:
            return []
        out = []
        for folder, dirs, names in os.walk(self.root):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if not self.hides(here / d))
            for name in names:
                path = here / name
                if not self.hides(path) and path.is_file() and not path.is_symlink():
                    out.append(path)
        return sorted(out)


def scan_folder(root: Path, *, limit: int = MAX_ENTRIES) -> FolderScan:
    """Walk ``root`` (never following symbolic links) for what is private in it, reading
    each folder once. ``root`` itself is never hidden whole: its private entries are, one
    by one; a folder below that holds a private file is left out whole."""
    root = Path(root)
    hidden: list[Hidden] = []
    seen = 0
    Layers = list[tuple[str, list[_Rule]]]
    stack: list[tuple[str, Layers]] = [(str(root), [])]
    while stack:
        folder, outer = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        if seen > limit:
            return FolderScan(root, tuple(sorted(hidden, key=lambda h: h.path)), False, seen)
        if folder != str(root):
            why = _holds_private(entries)
            if why is not None:
                hidden.append(Hidden(Path(folder), why))
                continue
        rules = _read_ignore(Path(folder)) if any(e.name == IGNORE_FILE for e in entries) else []
        layers = [*outer, (folder + "/", rules)] if rules else outer
        below = []
        for entry in entries:
            is_dir = entry.is_dir(follow_symlinks=False)
            if layers and _ignored(layers, entry.path, is_dir):
                hidden.append(Hidden(Path(entry.path), f"listed in {IGNORE_FILE}"))
            elif is_dir and entry.name in STATE_FOLDERS:
                hidden.append(Hidden(Path(entry.path), "a state folder"))
            elif is_dir and entry.name in VERSION_CONTROL:
                hidden.append(Hidden(Path(entry.path), "a version control folder"))
            elif is_dir and os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
                continue  # a Python environment: shown as it is, not walked
            elif is_dir:
                below.append((entry.path, layers))
            elif folder == str(root):
                why = _file_why(Path(entry.path), entry.name)
                if why is not None:
                    hidden.append(Hidden(Path(entry.path), why))
        stack.extend(reversed(below))
    return FolderScan(root, tuple(sorted(hidden, key=lambda h: h.path)), True, seen)


def _holds_private(entries: Sequence[os.DirEntry[str]]) -> str | None:
    """What a folder is, when one of its files is private: ``a log folder (it holds
    X.jsonl)``; None when none is."""
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            found = _file_reason(Path(entry.path), entry.name)
            if found is not None:
                return f"{found[1]} (it holds {entry.name})"
    return None


def _file_why(path: Path, name: str) -> str | None:
    found = _file_reason(path, name)
    return found[0] if found is not None else None


def private_files(paths: Sequence[Path]) -> Iterator[Hidden]:
    """The private ones among single files (an archive's members once unpacked)."""
    for path in paths:
        why = private_reason(path)
        if why is not None:
            yield Hidden(Path(path), why)


__all__ = [
    "IGNORE_FILE",
    "MAX_ENTRIES",
    "FolderScan",
    "Hidden",
    "parse_ignore",
    "private_files",
    "private_reason",
    "scan_folder",
]
