"""The schema-2 fixture logs (tests/fixtures/logs/v2/) verify, signed, with ``referee
verify``, and are exactly what scripts/gen_fixture_logs.py writes today: a change of the
match machine, the writer or the signature shows up here as a fixture that no longer
verifies or no longer regenerates."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "logs" / "v2"
LOGS = sorted(FIXTURES.glob("*.jsonl"))


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_fixture_logs", ROOT / "scripts" / "gen_fixture_logs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_fixtures_gives_the_same_bytes():
    files = _generator().rendered()
    current = {p.name: p.read_bytes() for p in FIXTURES.iterdir()}
    assert sorted(current) == sorted(files)
    stale = [name for name in files if files[name] != current[name]]
    assert not stale, (
        f"{', '.join(stale)} differ from what the referee writes now; if the change is "
        "intended (and docs/log-format.md says so), run: .venv/bin/python "
        "scripts/gen_fixture_logs.py"
    )


def test_referee_verify_accepts_every_fixture_signed_by_the_published_key():
    key = (FIXTURES / "signing-key.pub").read_text().strip()
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", "--public-key", key, *map(str, LOGS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(LOGS)
    for log, line in zip(LOGS, lines, strict=True):
        assert line.startswith(f"OK: {log}: "), line
        assert line.endswith(f"signed by {key}"), line


def test_the_fixtures_are_schema_2_logs_of_every_profile_each_ended_and_signed():
    profiles = set()
    statuses = set()
    for log in LOGS:
        lines = [json.loads(raw) for raw in log.read_text(encoding="utf-8").splitlines()]
        entries = lines[:-1]  # the trailer is checked by `referee verify --public-key` above
        assert {e["schema_version"] for e in entries} == {2}
        profiles.add(entries[0]["event"]["match_created"]["config"]["rules"]["profile"])
        statuses.add(entries[-1]["event"]["match_ended"]["status"])
    assert profiles == {"pusoy-dos", "pusoy-dos-chips", "big-two"}
    assert statuses == {"MATCH_STATUS_FINISHED", "MATCH_STATUS_CANCELLED"}
