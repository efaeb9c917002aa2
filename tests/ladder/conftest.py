"""The ladder's store on both of its engines: a SQLite file per test, and a database per
test in a throwaway PostgreSQL cluster that this session starts from Debian's package
(scripts/system-packages installs ``postgresql``).

The cluster is made by ``initdb`` and run by ``pg_ctl`` as an ordinary user (PostgreSQL
refuses root: as root, the tests run both as uid 65534 through ``setpriv``), listening
only on a Unix socket in a private temporary folder, with ``fsync`` off (it is thrown
away). One cluster per test session (tests/conftest.py keeps tests/ladder on one xdist
worker), stopped at the end. Where it cannot start, its tests skip, saying why; under CI
(``CI=true``) they fail instead: the PostgreSQL half of the suite is never silently gone.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from referee.ladder.storage.db import make_engine, sqlite_url, upgrade
from referee.ladder.storage.store import LadderStore

NOBODY = 65534
ENGINES = ("sqlite", "postgresql")


@dataclasses.dataclass
class Clock:
    """The store's clock, moved by the tests (leases expire without sleeping)."""

    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclasses.dataclass
class PostgresCluster:
    bin: Path
    socket_dir: Path
    user: str = "ladder"
    _names: Iterator[int] = dataclasses.field(default_factory=itertools.count)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@/{database}?host={self.socket_dir}"

    def new_database(self, template: str = "template1") -> str:
        """A fresh database, a copy of ``template`` (by default empty); its URL."""
        name = f"t{next(self._names)}"
        self.psql("postgres", f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)

    def psql(self, database: str, sql: str) -> str:
        return self.run("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", sql)

    def run(self, tool: str, *args: str) -> str:
        """A client tool of the cluster's version (psql, pg_dump, pg_restore...), as the
        tests' own user, over the cluster's socket."""
        done = subprocess.run(
            [str(self.bin / tool), "-h", str(self.socket_dir), "-U", self.user, *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr}")
        return done.stdout


def postgres_bin() -> Path | None:
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def _unavailable(why: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL is needed under CI and could not start: {why}")
    pytest.skip(f"PostgreSQL unavailable: {why}")


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    bin_dir = postgres_bin()
    if bin_dir is None or shutil.which("setpriv") is None:
        _unavailable("no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql) or setpriv")
    base = Path(tempfile.mkdtemp(prefix="ladder-pg-"))  # short: a socket path has 107 bytes
    as_user: list[str] = []
    if os.getuid() == 0:
        os.chown(base, NOBODY, NOBODY)
        as_user = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(base)}

    def server(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*as_user, *args], cwd=base, env=env, capture_output=True, text=True, timeout=timeout
        )

    cluster = PostgresCluster(bin_dir, base)
    data = base / "data"
    started = False
    try:
        init = server(
            str(bin_dir / "initdb"),
            "-D", str(data), "-U", cluster.user, "--auth=trust", "-E", "UTF8",
            "--no-sync", "--no-instructions",
        )  # fmt: skip
        if init.returncode:
            _unavailable(f"initdb failed: {init.stderr.strip()}")
        options = (
            f"-k {base} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=60"
        )
        start = server(
            str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"),
            "-w", "-t", "60", "-o", options, "start",
        )  # fmt: skip
        if start.returncode:
            log = (base / "server.log").read_text(errors="replace")[-2000:]
            _unavailable(f"pg_ctl start failed: {start.stderr.strip()} {log}")
        started = True
        yield cluster
    finally:
        if started:
            server(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=ENGINES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database on each engine."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "ladder.db")
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    return cluster.new_database()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database migrated once, copied for each test (the migrations' own tests
    start from empty ones)."""
    path = tmp_path_factory.mktemp("template") / "ladder.db"
    engine = make_engine(sqlite_url(path))
    upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def postgres_template(postgres: PostgresCluster) -> str:
    name = "ladder_template"
    postgres.psql("postgres", f"CREATE DATABASE {name}")
    engine = make_engine(postgres.url(name))
    upgrade(engine)
    engine.dispose()  # a template is copied only while nobody is connected to it
    return name


@pytest.fixture(params=ENGINES)
def migrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database at the newest schema on each engine, empty of data."""
    if request.param == "sqlite":
        path = tmp_path / "ladder.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        os.chmod(path, 0o600)
        return sqlite_url(path)
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    return cluster.new_database(template=request.getfixturevalue("postgres_template"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(migrated_url: str, clock: Clock) -> Iterator[LadderStore]:
    """A store on each engine (opened as the ladder does: ``upgrade head`` first, here a
    no-op), its time in the test's hands."""
    s = LadderStore.open(migrated_url, clock=clock)
    yield s
    s.close()
