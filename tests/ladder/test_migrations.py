"""The migrations build exactly the schema the code queries, on both engines, from an
empty database and from every earlier revision; the store migrates at start."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import IntegrityError

from referee.ladder.errors import LadderError
from referee.ladder.storage import db
from referee.ladder.storage.schema import metadata
from referee.ladder.storage.store import LadderStore


def schema_differences(engine: Engine) -> list[object]:
    with engine.connect() as conn:
        return list(compare_metadata(MigrationContext.configure(conn), metadata))


def revisions() -> list[str]:
    """Every revision, oldest first."""
    script = ScriptDirectory.from_config(db.alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def test_upgrade_head_from_empty_builds_the_schema_the_code_queries(database_url):
    engine = db.make_engine(database_url)
    assert db.current_revision(engine) is None
    db.upgrade(engine)
    assert db.current_revision(engine) == db.head_revision()
    assert schema_differences(engine) == []
    assert set(inspect(engine).get_table_names()) == set(metadata.tables) | {"alembic_version"}
    engine.dispose()


@pytest.mark.parametrize("start", revisions())
def test_upgrade_head_from_each_revision_keeps_the_data(database_url, start, clock):
    engine = db.make_engine(database_url)
    db.upgrade(engine, start)
    assert db.current_revision(engine) == start
    with db.writing(engine) as conn:  # a team as every revision has it
        conn.execute(
            text("INSERT INTO teams (name, created_at, house) VALUES ('early', 1.0, false)")
        )
    engine.dispose()
    store = LadderStore.open(database_url, clock=clock)  # upgrade head, at start
    assert db.current_revision(store.engine) == db.head_revision()
    assert schema_differences(store.engine) == []
    assert store.team("early").name == "early"
    store.close()


def test_downgrade_to_base_and_back(database_url):
    engine = db.make_engine(database_url)
    db.upgrade(engine)
    db.downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    db.upgrade(engine)
    assert schema_differences(engine) == []
    engine.dispose()


def test_opening_twice_is_a_no_op_and_keeps_everything(migrated_url, clock):
    first = LadderStore.open(migrated_url, clock=clock)
    key = first.create_team("alpha").key
    first.close()
    again = LadderStore.open(migrated_url, clock=clock)
    assert again.team_by_key(key).name == "alpha"
    again.close()


def test_a_store_not_migrated_is_refused_when_migrating_is_off(database_url):
    with pytest.raises(LadderError, match="not at the newest schema"):
        LadderStore.open(database_url, migrate=False)


def test_foreign_keys_are_enforced(store):
    with pytest.raises(IntegrityError), db.writing(store.engine) as conn:
        conn.execute(text("INSERT INTO bots (team_id, name, created_at) VALUES (999, 'x', 1.0)"))


def test_sqlite_is_one_private_file_in_wal_mode(tmp_path):
    path = tmp_path / "ladder.db"
    store = LadderStore.open(db.sqlite_url(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the keys' hashes
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    store.close()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("mysql://db/ladder", "SQLite or PostgreSQL"),
        ("sqlite://", "is a file"),
        ("sqlite:////no/such/folder/ladder.db", "no folder"),
        ("not a url", "not a database URL"),
    ],
)
def test_a_wrong_database_url_is_a_clear_error(url, why):
    with pytest.raises(LadderError, match=why):
        db.make_engine(url)


def test_import_referee_needs_no_database_library():
    blocked = ("sqlalchemy", "alembic", "psycopg")
    code = (
        "import sys\n"
        f"for name in {blocked!r}: sys.modules[name] = None  # importing it now fails\n"
        "import referee, referee.cli, referee.tournament.director, referee.server.app\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
