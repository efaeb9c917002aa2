"""A new version's first score: the benchmark's quick run (docs/benchmark.md) before the
version is rated in the ladder, when ``[ladder] pool`` names a benchmark pool.

Once a pending version has passed its validation match, the matchmaker starts ``referee
benchmark --quick`` for it: the version's own command in its unpacked folder, as a
tournament's ``[[bot]]`` (jailed as a tournament jails a spawned bot), against the
pool's quick anchors on the pool's deals, in ``benchmarks/v<id>/`` of the ladder's
folder: a tournament folder with signed logs, ``referee verify --tournament`` and
``benchmark.json``. The version becomes active when the run has ended (its score, or
why there is none, is kept there; a run that cannot score it does not hold the version
back). A ladder stopped mid-run resumes it on its next start (the benchmark's folder is
resumable). Built-in and remote versions are not benchmarked here: the house's bots are
the pool, and a remote bot's key belongs to the ladder's lobby.
"""

from __future__ import annotations

import ctypes
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import structlog

from referee.ladder.types import Version

log = structlog.get_logger("referee.ladder")

REPORT = "benchmark.json"
"""The benchmark's report in its folder."""
ENDED = "ended.json"
"""Written when the run has ended: its exit status, and the score if there is one."""
MAX_SECONDS = 600.0
"""A run still going after this long is stopped (the version is activated without)."""


def folder_of(ladder_folder: Path, version_id: int) -> Path:
    return ladder_folder / "benchmarks" / f"v{version_id}"


def first_score(ladder_folder: Path, version_id: int) -> dict[str, Any] | None:
    """What the run ended with (``ended.json``): None while it runs or never ran."""
    try:
        doc = json.loads((folder_of(ladder_folder, version_id) / ENDED).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: the run stops with the ladder


class FirstScores:
    """The matchmaker's quick benchmarks of new versions, one process each."""

    def __init__(
        self, ladder_folder: Path, pool: str, versions_dir: Path, deals: int | None = None
    ) -> None:
        self.folder = ladder_folder
        self.pool = pool
        self.versions_dir = versions_dir
        self.deals = deals
        """None: the pool's quick number of deals."""
        self.running: dict[int, tuple[subprocess.Popen[bytes], float]] = {}

    def ready(self, version: Version, now: float) -> bool:
        """Whether ``version`` may be activated: its run has ended (or it needs none);
        starts the run the first time it is asked."""
        if version.runtime in ("builtin", "remote") or version.archive_sha256 is None:
            return True
        if first_score(self.folder, version.id) is not None:
            return True
        entry = self.running.get(version.id)
        if entry is None:
            self.running[version.id] = (self._start(version), now)
            return False
        proc, started = entry
        code = proc.poll()
        if code is None and now - started < MAX_SECONDS:
            return False
        if code is None:
            proc.terminate()
            code = proc.wait()
        del self.running[version.id]
        self._ended(version, code)
        return True

    def _start(self, version: Version) -> subprocess.Popen[bytes]:
        out = folder_of(self.folder, version.id)
        out.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        assert version.archive_sha256 is not None
        cwd = self.versions_dir / version.archive_sha256
        bot = out.parent / f"v{version.id}.toml"
        argv = version.manifest.argv(cwd)
        bot.write_text(
            "[[bot]]\n"
            f"name = {json.dumps(f'v{version.id}')}\n"
            f"command = {json.dumps(list(argv))}\n"
            f"cwd = {json.dumps(str(cwd))}\n",
            encoding="utf-8",
        )
        log.info("first score", version=version.label, folder=str(out))
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "referee.cli",
                "benchmark",
                "--quick",
                "--pool",
                self.pool,
                "--bot-config",
                str(bot),
                "--out",
                str(out),
                "--no-page",
                *(["--deals", str(self.deals)] if self.deals else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=(out.parent / f"v{version.id}.out").open("wb"),
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )

    def _ended(self, version: Version, code: int) -> None:
        out = folder_of(self.folder, version.id)
        report: dict[str, Any] | None = None
        try:
            report = json.loads((out / REPORT).read_text("utf-8"))
        except (OSError, ValueError):
            report = None
        score = report.get("score") if isinstance(report, dict) else None
        doc = {
            "exit_code": code,
            "pool": self.pool,
            "quick": True,
            "score": score,
            "complete": bool(report and report.get("complete")),
        }
        out.mkdir(mode=0o700, parents=True, exist_ok=True)
        (out / ENDED).write_text(json.dumps(doc) + "\n", encoding="utf-8")
        log.info("first score ended", version=version.label, exit_code=code, score=score)

    def stop(self) -> None:
        for proc, _ in self.running.values():
            proc.terminate()
        self.running.clear()
