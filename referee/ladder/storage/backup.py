"""``referee ladder backup``: one consistent copy of the database, taken while the ladder
runs (docs/ladder.md, "Backing up and restoring", which says how to restore it).

- SQLite: its online backup API (Python's ``sqlite3``), page by page, without stopping
  the writers; the copy is checked (``PRAGMA integrity_check``) and made mode 0600 (it
  holds the keys' hashes).
- PostgreSQL: ``pg_dump --format=custom``, which reads one snapshot; the client of the
  server's major version must be on PATH.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from sqlalchemy.engine import make_url

from referee.ladder.errors import LadderError


def backup(url: str, out: Path) -> None:
    """Write a backup of the database at ``url`` to ``out`` (which must not exist)."""
    if out.exists():
        raise LadderError(f"{out} exists: give a new file")
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        _sqlite(Path(parsed.database or ""), out)
    else:
        _postgres(parsed.set(drivername="postgresql").render_as_string(hide_password=False), out)


def _sqlite(source: Path, out: Path) -> None:
    if not source.is_file():
        raise LadderError(f"no database at {source}")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
        dst = sqlite3.connect(out)
        try:
            src.backup(dst)
            ok = dst.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            dst.close()
            src.close()
        if ok != "ok":
            raise LadderError(f"the backup does not check out: {ok}")
    except BaseException:
        out.unlink(missing_ok=True)
        raise


def _postgres(uri: str, out: Path) -> None:
    if shutil.which("pg_dump") is None:
        raise LadderError("pg_dump is not on PATH (Debian: apt-get install postgresql-client)")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    done = subprocess.run(
        ["pg_dump", "--format=custom", f"--file={out}", "--dbname", uri],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if done.returncode:
        out.unlink(missing_ok=True)
        raise LadderError(f"pg_dump failed: {done.stderr.strip()[:500]}")


__all__ = ["backup"]
