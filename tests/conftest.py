"""Puts tests/support on the import path (helpers several test folders share), and
groups the tests for CI's two pytest-xdist workers (scripts/test: ``-n 2 --dist
loadgroup``): each test file runs whole on one worker (its module fixtures, servers and
clusters are made once), and the folders whose tests share a build run on one worker
together (two workers must never run one kit's build.sh at once)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_SUPPORT = str(Path(__file__).resolve().parent / "support")
if _SUPPORT not in sys.path:
    sys.path.insert(0, _SUPPORT)

_ROOT = Path(__file__).resolve().parent.parent
_SHARED_BUILDS = {
    # The kits' build.sh (tests/kits), the images with the Go, Rust and TypeScript kits
    # built on the host (tests/deploy), the Go kit's first bot (tests/docs).
    "kits": "toolchains",
    "deploy": "toolchains",
    "docs": "toolchains",
    "stdio": "stdio",  # clients/stdio/build.sh
    "view": "browser",  # one Chromium at a time
}
_SHARED_BUILD_FILES = {
    "tests/server/test_hundred_matches.py": "toolchains",  # the Go kit's pusoy-seats
}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        try:
            parts = Path(item.path).resolve().relative_to(_ROOT).parts
        except ValueError:
            parts = Path(item.path).parts
        path = "/".join(parts)
        group = _SHARED_BUILD_FILES.get(path)
        if group is None and parts[0] == "tests" and len(parts) > 2:
            group = _SHARED_BUILDS.get(parts[1])
        item.add_marker(pytest.mark.xdist_group(group or path))
