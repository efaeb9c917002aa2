"""The comparator and the state tracker against the referee's own answers (conformance data)."""

from __future__ import annotations

import json
from pathlib import Path

from google.protobuf import json_format

from pusoy_client import Rules, Tracker, beats, classify
from pusoy_client.protocol import common, play_service

DATA = Path(__file__).resolve().parents[2] / "conformance"


def test_the_comparator_gives_the_reference_judges_verdicts():
    cases = [json.loads(line) for line in (DATA / "judge_cases.jsonl").read_text().splitlines()]
    assert len(cases) > 1000
    for case in cases:
        rules = Rules(**case["rules"])
        combo = classify(rules, case["play"], case["revolution"])
        assert (combo.kind if combo else None) == case["combination"], case
        if case["table"] is not None and combo is not None:
            verdict = beats(rules, case["play"], case["table"], case["revolution"])
            assert verdict == case["legal"], case
        elif case["table"] is None:
            assert (combo is not None) == case["legal"], case


def test_the_tracker_matches_the_public_state_of_every_prompt():
    lines = [json.loads(x) for x in (DATA / "tracker_streams.jsonl").read_text().splitlines()]
    trackers: dict[str, Tracker] = {}
    checked = 0
    for line in lines:
        t = trackers.setdefault(line["stream"], Tracker())
        kind, body = line["kind"], line["message"]
        if kind == "welcome":
            t.on_welcome(json_format.ParseDict(body, play_service.Welcome()))
        elif kind == "snapshot":
            t.on_snapshot(json_format.ParseDict(body, play_service.Snapshot()))
        elif kind == "event":
            t.on_event(json_format.ParseDict(body, common.Event()))
        else:
            p = json_format.ParseDict(body, play_service.TurnPrompt())
            st = p.state
            where = (line["stream"], p.turn_id)
            assert t.hand_number == st.hand_number, where
            assert t.hand == list(p.hand), where
            assert t.card_counts == list(st.card_counts), where
            assert t.played_cards == list(st.played_cards), where
            assert t.table == list(st.table.cards), where
            assert t.table_seat == (st.table_seat if st.HasField("table_seat") else None), where
            assert t.locked_out == list(st.locked_out), where
            assert t.revolution == st.revolution, where
            want = [(x.seat, [] if getattr(x, "pass") else list(x.play.cards)) for x in st.trick]
            assert [(e.seat, e.cards) for e in t.trick] == want, where
            assert t.totals == list(st.totals), where
            checked += 1
    assert len(trackers) == 3 and checked > 100
