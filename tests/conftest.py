"""Puts tests/support on the import path (helpers several test folders share), and
schedules the tests for CI's two pytest-xdist workers (scripts/test: ``-n 2 --dist
loadfile``): each test file runs whole on one worker (its module fixtures, servers and
clusters are made once), with these units of our own:

- the kits' own suites and the first-bot page, one unit, in _BUILDS' order: each kit's
  first build on a fresh machine takes minutes of both cores (its compiler runs in
  parallel), so two at once on the two workers only slow each other, and the first-bot
  page's Go build reuses the Go kit's caches when it comes after it;
- the container tests share one Docker daemon, the stdio tests one build, the browser
  tests one Chromium, the ladder's tests one PostgreSQL cluster.

Order: the builds first, on one worker, while the other runs the Python suites; then the
tests that use the built kits (the container step, the mixed tables...), when the builds
are done. A kit's build.sh waits for its own lock, so a test that needs a kit still being
built waits rather than building it alongside. On a full run, scripts/test starts the same
builds, in the same order, before the virtualenv, lint and types; and the kits keep their
compiled dependencies in the per-user build cache (docs/kits.md section 11), so on a
machine that built them once the builds take seconds and the unit is mostly the kits'
conformance suites.

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

_CONFORMANCE = "tests/kits/test_kits.py::test_kit_unit_tests_and_conformance"
_BUILDS = (
    f"{_CONFORMANCE}[go]",
    "tests/docs/test_first_bot.py",
    f"{_CONFORMANCE}[rust]",
    f"{_CONFORMANCE}[typescript]",
    f"{_CONFORMANCE}[cpp]",
    f"{_CONFORMANCE}[java]",
    f"{_CONFORMANCE}[python]",
)
_GROUPS = {
    "tests/deploy/": "containers",  # one Docker daemon and one build of every image
    "tests/stdio/": "stdio",  # clients/stdio/build.sh
    "tests/view/": "browser",  # one Chromium at a time
    "tests/ladder/": "ladder",  # one throwaway PostgreSQL cluster
}
_AFTER_THE_BUILDS = ("tests/kits/", "tests/deploy/", "tests/server/test_hundred_matches.py")


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: the builds, its group, or its file."""
    if nodeid.startswith(_BUILDS):
        return "builds"
    path = nodeid.split("::", 1)[0]
    for prefix, group in _GROUPS.items():
        if path.startswith(prefix):
            return group
    return path


def start_rank(nodeid: str) -> int:
    """Where a test starts in the run: the builds in _BUILDS' order, the tests that need
    no kit, then those that use the built kits."""
    for i, head in enumerate(_BUILDS):
        if nodeid.startswith(head):
            return i
    return len(_BUILDS) + nodeid.startswith(_AFTER_THE_BUILDS)


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
