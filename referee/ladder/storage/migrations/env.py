"""Alembic's entry point for the ladder's migrations.

The referee runs them itself (``referee.ladder.storage.db.upgrade``, at every start) on a
connection it passes in ``config.attributes``. A developer writing a revision goes through
``referee.ladder.storage.db.alembic_config`` too (docs/ladder.md, "Changing the schema"); without a
connection, ``-x url=DATABASE_URL`` names the database.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from referee.ladder.storage.db import make_engine
from referee.ladder.storage.schema import metadata


def run(config: object) -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        url = context.get_x_argument(as_dictionary=True).get("url")
        if not url:
            raise SystemExit("alembic -x url=DATABASE_URL ...: which database?")
        with make_engine(url).begin() as conn:
            _migrate(conn)
    else:
        _migrate(connection)


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,  # SQLite alters a table by copying it
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


# Alembic runs this file with its context set up; anything else that imports it (pytest's
# doctest collection imports every module) finds no context and does nothing.
if hasattr(context, "config"):
    run(context.config)
