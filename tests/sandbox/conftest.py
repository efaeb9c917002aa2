"""Fixtures of the sandbox's tests: a Python user 65534 can run (made once), and the
hosts a jail must hold on (``hosts.KINDS``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import hosts
import jailing
import pytest


@pytest.fixture(scope="session")
def nobody_python() -> Iterator[Path]:
    yield from jailing.nobody_python()


@pytest.fixture(params=hosts.KINDS)
def host(request: pytest.FixtureRequest) -> hosts.Host:
    if request.param == "user":
        return hosts.Host("user", request.getfixturevalue("nobody_python"))
    return hosts.Host(request.param)
