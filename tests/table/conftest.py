"""Fixtures of the table's tests: a Python that user 65534 can run (built once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import jailing
import pytest


@pytest.fixture(scope="session")
def nobody_python() -> Iterator[Path]:
    yield from jailing.nobody_python()
