"""Files written whole: private (mode 0600 whatever the umask) and replaced in one step.

Secrets (keys, tokens, seeds) and whatever holds hidden cards while a match runs (live
logs, bots' output, a tournament's files) are made with these, and nothing else. A room
of its own because the log, the server, the table and the tournament all write them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path


def create_private_file(path: Path, data: bytes, *, sync: bool = True) -> bool:
    """Create ``path`` (mode 0600) holding ``data``; False when it already exists.

    Written whole (and fsynced, unless not ``sync``) under a private name, then linked
    into place: processes starting at once in one state folder (two `referee match`
    runs) all end up with the file that was linked first, never with a half-written one.
    Raises OSError.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o600)  # whatever the umask took away
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def replace_private_file(path: Path, data: bytes, *, sync: bool = False) -> None:
    """Put ``data`` at ``path`` (mode 0600), replacing any file there: written whole under
    a private name in the same folder (fsynced when ``sync``), then renamed, so a reader
    never sees half of it (a seat's token handed to its bot). Raises OSError."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o600)
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, text: str, *, sync: bool = True) -> None:
    """Replace a text file's contents in one step (``replace_private_file``, UTF-8).

    ``sync=False`` skips the fsync, for files that are rebuilt on the next start anyway
    (a tournament's standings, results.csv)."""
    replace_private_file(path, text.encode("utf-8"), sync=sync)


__all__ = ["create_private_file", "replace_private_file", "write_atomic"]
