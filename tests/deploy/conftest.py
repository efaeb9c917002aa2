"""The container step's engine and images, made once for its test modules (each builds
only the images it needs), and its timings, shown in pytest's summary (output is
captured)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from .engine import KITS, Engine, build_images, private_engine

_NOTES: list[str] = []


@pytest.fixture(scope="session")
def note() -> Callable[[str], None]:
    """Record a line for the end of the run (step times, image sizes)."""
    return _NOTES.append


@pytest.fixture(scope="session")
def engine(note: Callable[[str], None]) -> Iterator[Engine]:
    """A private dockerd (with docker-compose), shared by the session's container tests;
    stopped, daemon included, at the end of the session."""
    with private_engine(note, compose=True) as engine:
        yield engine


@pytest.fixture(scope="session")
def images(engine: Engine, note: Callable[[str], None]) -> Engine:
    """Every image of docker/compose.yaml's match built: the referee and the four kits'
    sample bots (the compiled kits built on the host)."""
    build_images(engine, note, ",".join(("referee", *KITS)))
    return engine


@pytest.fixture(scope="session")
def ladder_image(engine: Engine, note: Callable[[str], None]) -> Engine:
    """The ladder service's image alone (no kit is built for it); its build reuses the
    referee image's stages when those were built first."""
    build_images(engine, note, "ladder")
    return engine


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _NOTES:
        terminalreporter.section("containers")
        for line in _NOTES:
            terminalreporter.write_line(line)
