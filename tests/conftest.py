"""Puts tests/support on the import path (helpers several test folders share), and
schedules the tests for CI's two pytest-xdist workers (scripts/test: ``-n 2 --dist
loadfile``): each test file runs whole on one worker (its module fixtures, servers and
clusters are made once), and the folders whose tests share a build run on one worker
together (two workers must never run one kit's build.sh, or start two Docker daemons,
at once).

The grouping is a scheduler of our own (xdist's ``pytest_xdist_make_scheduler`` hook)
rather than ``xdist_group`` marks: xdist 3.8's ``loadgroup`` renames items through an
attribute that pytest 9.2 no longer reads, so its groups are silently ignored."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_SUPPORT = str(Path(__file__).resolve().parent / "support")
if _SUPPORT not in sys.path:
    sys.path.insert(0, _SUPPORT)

_SHARED_BUILDS = {
    # The kits' build.sh (tests/kits), the images with the Go, Rust and TypeScript kits
    # built on the host and one Docker daemon (tests/deploy), the Go kit's first bot
    # (tests/docs).
    "tests/kits/": "toolchains",
    "tests/deploy/": "toolchains",
    "tests/docs/": "toolchains",
    "tests/server/test_hundred_matches.py": "toolchains",  # the Go kit's pusoy-seats
    "tests/stdio/": "stdio",  # clients/stdio/build.sh
    "tests/view/": "browser",  # one Chromium at a time
}


def work_unit(path: str) -> str:
    """The unit of work a test file belongs to: its shared-build group, or itself."""
    for prefix, group in _SHARED_BUILDS.items():
        if path.startswith(prefix):
            return group
    return path


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedBuildScheduling(LoadFileScheduling):
        """``loadfile``, with the files of a shared-build group as one unit."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid.split("::", 1)[0])

    return SharedBuildScheduling(config, log)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """The container tests after the kits' own: the kits' first (cold) builds then count
    for the kits, and the container step reuses them, as docs/deploy.md says."""
    items.sort(key=lambda item: "tests/deploy/" in Path(str(item.path)).as_posix())
