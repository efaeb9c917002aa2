"""docs/ladder.md's backup and restore commands, run as written while a worker keeps
recording matches: the restored store is consistent and is the ladder as it was at one
moment of the backup."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

from sqlalchemy import func, select

from referee.ladder.storage import queries
from referee.ladder.storage.db import sqlite_url
from referee.ladder.storage.records import LadderMatchState
from referee.ladder.storage.schema import matches
from referee.ladder.storage.store import LadderStore

from .conftest import PostgresCluster
from .helpers import active_version, finished

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "ladder.md").read_text().split("## Backing up and restoring")[1]
SECTION = SECTION.split("\n## ")[0]
BLOCKS = re.findall(r"```sh\n(.*?)```", SECTION, re.S)


def block(*words: str) -> str:
    """The one shell block of the section that has all these words."""
    found = [b for b in BLOCKS if all(w in b for w in words)]
    assert len(found) == 1, (words, BLOCKS)
    return found[0]


def run(script: str, cwd: Path, **env: str) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


class Writer(threading.Thread):
    """A worker that schedules, claims and records matches until told to stop."""

    def __init__(self, url: str, versions: list[int]) -> None:
        super().__init__(daemon=True)
        self.store = LadderStore.open(url)
        self.versions = versions
        self.recorded = 0
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                claim = self.store.queue.claim("writer", 30)
                if claim is None:
                    self.store.queue.schedule(self.versions, [(0, 1, 2, 3), (1, 2, 3, 0)])
                    continue
                self.store.queue.record(
                    claim.match_id, claim.token, finished(match_id=claim.match_id)
                )
                self.recorded += 1
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.store.close()

    def until(self, count: int) -> None:
        deadline = time.monotonic() + 120
        while self.recorded < count:
            assert self.error is None and time.monotonic() < deadline, self.error
            time.sleep(0.01)

    def finish(self) -> int:
        self.stop.set()
        self.join(60)
        assert self.error is None, self.error
        return self.recorded


def seeded(url: str) -> list[int]:
    store = LadderStore.open(url)
    for team in "abcd":
        store.create_team(team)
    versions = [active_version(store, team, "bot").id for team in "abcd"]
    store.close()
    return versions


def finished_matches(url: str) -> tuple[int, list[str]]:
    store = LadderStore.open(url)
    with store.reading() as conn:
        count = conn.execute(
            select(func.count())
            .select_from(matches)
            .where(matches.c.state == LadderMatchState.FINISHED)
        ).scalar_one()
    problems = queries.check(store)
    store.close()
    return count, problems


def test_sqlite_online_backup_while_recording_restores_a_consistent_store(
    tmp_path, sqlite_template
):
    (tmp_path / "ladder").mkdir()
    shutil.copyfile(sqlite_template, tmp_path / "ladder" / "ladder.db")
    url = sqlite_url(tmp_path / "ladder" / "ladder.db")
    writer = Writer(url, seeded(url))
    writer.start()
    writer.until(3)
    out = run(block("src.backup(dst)"), tmp_path)
    assert out.strip() == "ok"  # the integrity check the page prints
    at_backup = writer.recorded
    writer.until(at_backup + 3)  # writes went on during and after the backup
    final = writer.finish()

    run(block("install -m 600"), tmp_path)  # the restore, with the ladder stopped
    restored, problems = finished_matches(url)
    assert problems == []
    assert 3 <= restored <= at_backup < final
    assert oct((tmp_path / "ladder" / "ladder.db").stat().st_mode & 0o777) == "0o600"


def test_pg_dump_while_recording_restores_a_consistent_store(
    tmp_path, postgres: PostgresCluster, postgres_template: str
):
    url = postgres.new_database(template=postgres_template)
    writer = Writer(url, seeded(url))
    writer.start()
    writer.until(3)
    libpq = url.replace("postgresql+psycopg://", "postgresql://")
    path = f"{postgres.bin}:{os.environ['PATH']}"
    run(block("pg_dump"), tmp_path, LADDER_DB=libpq, PATH=path)
    at_backup = writer.recorded
    writer.until(at_backup + 3)
    final = writer.finish()

    target = postgres.new_database()  # empty
    run(block("pg_restore"), tmp_path, RESTORED_DB=target.replace("+psycopg", ""), PATH=path)
    restored, problems = finished_matches(target)
    assert problems == []
    assert 3 <= restored <= at_backup < final
