"""The kits' shared conformance data is the referee's own answers (docs/kits.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from .conftest import ROOT

DATA = ROOT / "clients" / "conformance"


def test_judge_cases_are_the_reference_judges_current_verdicts():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_kit_conformance.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_tracker_streams_hold_prompts_and_a_reconnect_per_match():
    kinds = Counter(
        (line["stream"], line["kind"])
        for line in map(json.loads, (DATA / "tracker_streams.jsonl").read_text().splitlines())
    )
    streams = {s for s, _ in kinds}
    assert len(streams) == 3
    for s in streams:
        assert kinds[(s, "welcome")] == 2 and kinds[(s, "snapshot")] == 2  # the drill
        assert kinds[(s, "prompt")] > 20


def test_every_transcript_is_valid_json_with_a_description():
    for path in sorted((DATA / "transcripts").glob("*.json")):
        data = json.loads(path.read_text())
        assert data.get("description"), path.name
        assert isinstance(data.get("streams", []), list), path.name
