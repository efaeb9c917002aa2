"""The container step's engine and images, made once for both of its test modules, and
its timings, shown in pytest's summary (output is captured)."""

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
def images(note: Callable[[str], None]) -> Iterator[Engine]:
    """A private dockerd with every image of docker/compose.yaml built: the referee and
    the four kits' sample bots (the compiled kits built on the host). Stopped, daemon
    included, at the end of the session."""
    with private_engine(note, compose=True) as engine:
        build_images(engine, note, ",".join(("referee", *KITS)))
        yield engine


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _NOTES:
        terminalreporter.section("containers")
        for line in _NOTES:
            terminalreporter.write_line(line)
