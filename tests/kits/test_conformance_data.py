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


def test_batched_transcripts_are_a_batching_seats_exchanges():
    """What the batched_* transcripts (scripts/record_transcripts.py) must show."""
    seen = {}
    for path in sorted((DATA / "transcripts").glob("batched_*.json")):
        data = json.loads(path.read_text())
        assert data["requires"] == ["batched_events"], path.name
        assert data["env"]["PUSOY_BATCH_EVENTS"] == "1", path.name
        steps = [step for stream in data["streams"] for step in stream["steps"]]
        hellos = [s["recv"] for s in steps if "recv" in s and "hello" in s["recv"]]
        assert len(hellos) == len(data["streams"]), path.name
        assert all(h["hello"]["batch_events"] is True for h in hellos), path.name
        sent = [s["send"] for s in steps if "send" in s]
        assert not [m for m in sent if "event" in m], f"{path.name}: a live event"
        assert not [m for m in sent if m.get("result", {}).get("accepted")], path.name
        in_prompts = sum(len(m["prompt"].get("events", [])) for m in sent if "prompt" in m)
        batches = [[next(iter(e)) for e in m["batch"]["events"]] for m in sent if "batch" in m]
        assert data["bot"]["tracker"] is True
        assert data["bot"]["events_total"] == in_prompts + sum(map(len, batches)), path.name
        assert batches[-1][-1] == "match_ended", path.name
        seen[path.stem] = (data, sent, batches)
    assert set(seen) == {
        "batched_match",
        "batched_rejection",
        "batched_reconnect",
        "batched_cancelled",
    }
    data, sent, batches = seen["batched_match"]
    kinds = [next(iter(m)) for m in sent]
    hand_end = kinds.index("batch")
    assert batches[0][-1] == "hand_ended" and kinds[hand_end + 1] == "prompt"
    assert batches[-1] == ["match_ended"]  # the last hand's end, then the match's
    _, sent, _ = seen["batched_rejection"]
    results = [m["result"] for m in sent if "result" in m]
    assert len(results) == 1 and "accepted" not in results[0]  # refused (false is left out)
    assert results[0]["reason"] == "REJECTION_REASON_CARD_NOT_IN_HAND"
    data, _, _ = seen["batched_reconnect"]
    assert len(data["streams"]) == 2
    _, _, batches = seen["batched_cancelled"]
    assert len(batches[-1]) > 1 and "hand_ended" not in batches[-1]
