"""The container step's timings, shown in pytest's summary (output is captured)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

_NOTES: list[str] = []


@pytest.fixture(scope="session")
def note() -> Callable[[str], None]:
    """Record a line for the end of the run (step times, image sizes)."""
    return _NOTES.append


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _NOTES:
        terminalreporter.section("containers")
        for line in _NOTES:
            terminalreporter.write_line(line)
