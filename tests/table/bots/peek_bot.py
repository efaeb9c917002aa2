#!/usr/bin/env python3
"""A hostile bot that looks for the hands at its first prompt, then plays greedily.

It knows its match id from Welcome, and the live log is named after it. So it searches
for files named after the match id (its working folder and the folders above it, /tmp,
/, its home, and the folders of PUSOY_PEEK_ROOTS), reads every file of PUSOY_PEEK_PATHS
(the log folder, the state folder, another bot's files, given by the test), and looks
for the referee's environment (PUSOY_PEEK_SECRET, set in the referee's) in its own and
in every /proc/PID/environ it can read. It prints one line to standard error:

    PEEK {"match_id": ..., "found": {path: bytes read or error}, "read": {...},
          "env": [...], "uid": ...}
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pusoy_client import Choice, main
from pusoy_client.protocol import play_service
from pusoy_client.samples import GreedyBot

SKIP = {"/proc", "/sys", "/dev", "/usr", "/etc", "/opt", "/lib", "/lib64", "/bin", "/sbin"}
SKIP_NAMES = {".git", "node_modules", "__pycache__", "site-packages", ".venv", "target"}
MAX_ENTRIES = 60_000


def read(path: Path) -> object:
    try:
        return len(path.read_bytes())
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror}"


def search(match_id: str, roots: list[Path]) -> dict[str, object]:
    """Files whose name holds the match id, under ``roots`` (a bounded walk)."""
    found: dict[str, object] = {}
    seen = 0
    done: set[str] = set()
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if folder in done:
                dirs[:] = []
                continue
            done.add(folder)
            dirs[:] = [
                d for d in dirs if d not in SKIP_NAMES and os.path.join(folder, d) not in SKIP
            ]
            seen += len(dirs) + len(files)
            for name in files:
                if match_id in name:
                    path = Path(folder) / name
                    found[str(path)] = read(path)
            if seen > MAX_ENTRIES:
                return found
    return found


def read_all(paths: list[str]) -> dict[str, object]:
    """Each path given; a folder's files one by one."""
    out: dict[str, object] = {}
    for given in paths:
        path = Path(given)
        try:
            entries = sorted(path.iterdir()) if path.is_dir() else [path]
        except OSError as exc:
            out[given] = f"{type(exc).__name__}: {exc.strerror}"
            continue
        if not entries:
            out[given] = "empty"
        for entry in entries:
            out[str(entry)] = read(entry) if not entry.is_dir() else "folder"
    return out


def referee_env(secret_name: str) -> list[str]:
    """Where the referee's secret variable shows: its own environment, /proc/*/environ."""
    where = ["own environment"] if secret_name in os.environ else []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                data = (entry / "environ").read_bytes()
            except OSError:
                continue
            if secret_name.encode() + b"=" in data:
                where.append(str(entry / "environ"))
    return where


def peek(match_id: str) -> None:
    env = os.environ
    cwd = Path.cwd()
    roots = [cwd, cwd.parent, cwd.parent.parent, Path("/tmp")]
    roots += [Path(p) for p in env.get("PUSOY_PEEK_ROOTS", "").split(os.pathsep) if p]
    roots += [Path.home(), Path("/")]
    report = {
        "match_id": match_id,
        "found": search(match_id, roots),
        "read": read_all([p for p in env.get("PUSOY_PEEK_PATHS", "").split(os.pathsep) if p]),
        "env": referee_env("PUSOY_PEEK_SECRET"),
        "uid": os.getuid(),
    }
    print("PEEK " + json.dumps(report), file=sys.stderr, flush=True)


class PeekBot(GreedyBot):
    name = "peek"

    def __init__(self) -> None:
        super().__init__()
        self.match_id = ""
        self.done = False

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        self.match_id = welcome.match_id
        super().on_welcome(welcome)

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        if not self.done:
            self.done = True
            peek(self.match_id)
        return super().choose(prompt)


if __name__ == "__main__":
    sys.exit(main(PeekBot()))
