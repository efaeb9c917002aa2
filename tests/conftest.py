"""Puts tests/support on the import path (helpers several test folders share), and
schedules the tests for CI's two pytest-xdist workers (scripts/test: ``-n 2 --dist
loadfile``): each test file runs whole on one worker (its module fixtures, servers and
clusters are made once), except the kits' own suites, one unit per kit, so that two
kits build at once on the two workers (each kit's build.sh waits for its own lock, so a
second caller never builds alongside the first); the container tests share one Docker
daemon, the stdio tests one build, the browser tests one Chromium.

Order: the cold builds first (a kit's first build on a fresh machine takes minutes: if
it started last, one worker would build alone while the other sat idle), then the
container step (which reuses them), then the rest in collection order.

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

_GROUPS = {
    "tests/deploy/": "containers",  # one Docker daemon and one build of every image
    "tests/stdio/": "stdio",  # clients/stdio/build.sh
    "tests/view/": "browser",  # one Chromium at a time
}
_ONE_UNIT_PER_TEST = ("tests/kits/test_kits.py",)

_CONFORMANCE = "tests/kits/test_kits.py::test_kit_unit_tests_and_conformance"
_FIRST = (
    # The slowest cold builds first, Go and Rust on the two workers at once; the first-bot
    # page builds grpcurl with the Go kit's module cache, so after the Go kit.
    f"{_CONFORMANCE}[go]",
    f"{_CONFORMANCE}[rust]",
    "tests/docs/test_first_bot.py",
    f"{_CONFORMANCE}[cpp]",
    f"{_CONFORMANCE}[java]",
    f"{_CONFORMANCE}[typescript]",
    f"{_CONFORMANCE}[python]",
    "tests/deploy/",
)


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its group, itself, or its file."""
    path = nodeid.split("::", 1)[0]
    for prefix, group in _GROUPS.items():
        if path.startswith(prefix):
            return group
    return nodeid if path in _ONE_UNIT_PER_TEST else path


def start_rank(nodeid: str) -> int:
    """Where a test starts in the run: the cold builds' order in _FIRST, then the rest."""
    return next((i for i, head in enumerate(_FIRST) if nodeid.startswith(head)), len(_FIRST))


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # units in start_rank's order, not by size

    class SharedBuildScheduling(LoadFileScheduling):
        """``loadfile`` with work_unit's units."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return SharedBuildScheduling(config, log)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    items.sort(key=lambda item: start_rank(item.nodeid))
