"""Connecting to the ladder's database, and bringing its schema to the newest revision.

Two engines, one schema (``referee.ladder.schema``), one set of migrations (Alembic,
``migrations/``), run at every start: ``upgrade head`` is a no-op on a current database.

- **SQLite**, the embedded default: one file beside the logs, created mode 0600 (it holds
  the teams' key hashes). WAL, so the web's readers never wait for a writer;
  ``synchronous=FULL``, so a committed result survives a power cut and not only a SIGKILL;
  foreign keys on (SQLite's default is off, per connection). A write transaction starts
  with ``BEGIN IMMEDIATE``: it takes the write lock before it reads, so two processes
  claiming a match queue up on the busy timeout instead of one of them failing at its
  first write (a deferred transaction that read an older snapshot cannot be upgraded).
- **PostgreSQL**, for a ladder run by several workers or machines, through psycopg 3
  (the ``postgres`` extra). Writes run at READ COMMITTED with explicit row locks where two
  workers could meet (``SELECT ... FOR UPDATE [SKIP LOCKED]``), see ``store.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from referee.extras import install_hint
from referee.ladder.errors import LadderError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
_WRITE = "ladder_write"


def sqlite_url(path: Path) -> str:
    """The URL of a SQLite file (absolute, so the working folder does not matter)."""
    return f"sqlite:///{Path(path).resolve()}"


def make_engine(url: str) -> Engine:
    """An engine for a ``sqlite:///FILE`` or ``postgresql+psycopg://...`` URL."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy.exc.ArgumentError, ValueError
        raise LadderError(f"not a database URL: {exc}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed.database)
    if backend == "postgresql":
        if parsed.get_driver_name() not in ("psycopg", "psycopg2"):
            parsed = parsed.set(drivername="postgresql+psycopg")
        try:
            return create_engine(parsed, pool_pre_ping=True)
        except ModuleNotFoundError as exc:
            raise LadderError(
                f"{exc.name} is missing: a PostgreSQL ladder needs the postgres extra, "
                f"{install_hint('postgres')}"
            ) from None
    raise LadderError(f"the ladder's database is SQLite or PostgreSQL, not {backend!r}")


def sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///FILE`` URL; None for another database."""
    try:
        parsed = make_url(url)
    except Exception:  # sqlalchemy.exc.ArgumentError, ValueError: make_engine says why
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return Path(parsed.database)


def _sqlite_engine(database: str | None) -> Engine:
    if not database or database == ":memory:":
        raise LadderError("a SQLite ladder is a file (sqlite:///path/ladder.db), not in memory")
    path = Path(database)
    if not path.parent.is_dir():
        raise LadderError(f"no folder {path.parent} for the ladder's database")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    os.close(fd)
    # One connection per checkout: a file database gains nothing from a pool, and the
    # pragmas below are then set on every connection there is.
    engine = create_engine(
        f"sqlite:///{path}",
        poolclass=NullPool,
        connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "isolation_level": None},
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # pysqlite's own BEGIN is off (isolation_level=None): we say which kind.
        kind = "IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "DEFERRED"
        conn.exec_driver_sql(f"BEGIN {kind}")

    return engine


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """One write transaction: committed whole when the block ends, rolled back on error."""
    with engine.connect().execution_options(**{_WRITE: True}) as conn, conn.begin():
        yield conn


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """One read transaction: a consistent snapshot of the database."""
    with engine.connect() as conn, conn.begin():
        yield conn


def alembic_config(connection: Connection | None = None) -> Any:
    """Alembic's configuration for the ladder's migrations (``alembic.config.Config``);
    ``connection`` is the one ``migrations/env.py`` then uses."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database to ``revision`` (the newest by default) in one transaction:
    both engines' DDL is transactional, so a migration cut short leaves the old schema."""
    from alembic import command

    with writing(engine) as conn:
        command.upgrade(alembic_config(conn), revision)


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    with writing(engine) as conn:
        command.downgrade(alembic_config(conn), revision)


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with reading(engine) as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise LadderError(f"no migrations under {MIGRATIONS}: a broken install")
    return head
