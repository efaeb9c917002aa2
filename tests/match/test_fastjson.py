"""The fast log-line reader and writer read and write every log exactly as protobuf's own
json_format does, and the reader refuses what json_format refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp
from sim import T0, Sim, settings, write_log

from referee.log import fastjson
from referee.log.fastjson import ParseError, parse_entry, timestamp_json, to_dict, to_json
from referee.log.signing import looks_like_trailer
from referee.log.writer import entry_to_line
from referee.protocol import common

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"


def slow(data: dict) -> common.LogEntry:
    entry = common.LogEntry()
    json_format.ParseDict(data, entry)
    return entry


def test_every_fixture_line_reads_the_same(tmp_path):
    sim = Sim(settings("pusoy-dos-chips", hands=2, max_strikes=1))
    sim.connect_all(T0)
    t = T0
    while not sim.state.over:
        t += 1000
        if sim.turn.turn_id % 7 == 0:
            sim.act(sim.turn.seat, t, [sim.unheld(sim.turn.seat)])
        sim.play_lowest(t + 1)
    write_log(sim, tmp_path / "now.jsonl")
    logs = [*FIXTURES.glob("*/*.jsonl"), tmp_path / "now.jsonl"]
    count = 0
    for log in logs:
        for raw in log.read_text().splitlines():
            if looks_like_trailer(raw):
                continue
            data = json.loads(raw)
            entry = parse_entry(data)
            assert entry == slow(data)
            assert to_dict(entry) == json_format.MessageToDict(
                entry, preserving_proto_field_name=True
            )
            assert list(to_dict(entry)) == list(data)  # the same order of keys
            assert to_json(entry) == json.dumps(
                json_format.MessageToDict(entry, preserving_proto_field_name=True),
                separators=(",", ":"),
                ensure_ascii=False,
            )
            if entry.schema_version == 2:  # written by today's writer: byte for byte
                assert entry_to_line(entry) == raw
            count += 1
    assert count > 500


@pytest.mark.parametrize(
    "data",
    [
        {"seq": "x"},
        {"seq": True},
        {"nope": 1},
        {"event": {"played": {"seat": -1}}},
        {"event": {"played": {"default_cause": "NOT_A_CAUSE"}}},
        {"event": {"played": {"play": {"cards": "3D"}}}},
        {"event": {"played": {"play": {"cards": [3]}}}},
        {"time": "yesterday"},
        {"schema_version": 1.5},
    ],
)
def test_what_json_format_refuses_is_refused(data):
    with pytest.raises(ParseError):
        slow(data)
    with pytest.raises(ParseError):
        parse_entry(data)


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-01T18:32:08.696430Z",
        "2026-12-01T18:32:08Z",
        "2026-12-01T18:32:08.1Z",
        "2026-12-01T18:32:08.123456789Z",
        "1970-01-01T00:00:00Z",
        "2024-02-29T23:59:59.5Z",
        "9999-12-31T23:59:59.999999999Z",
    ],
)
def test_timestamps_read_as_protobuf_reads_them(text):
    want = Timestamp()
    want.FromJsonString(text)
    got = Timestamp()
    fastjson._fill(got, text)
    assert (got.seconds, got.nanos) == (want.seconds, want.nanos)


@pytest.mark.parametrize("text", ["2026-02-30T00:00:00Z", "2026-12-01T24:00:00Z", "x"])
def test_bad_timestamps_are_refused(text):
    with pytest.raises(ParseError):
        fastjson._fill(Timestamp(), text)


def test_times_are_written_as_json_format_writes_them():
    seconds = [0, 1, 59, 86_399, 86_400, 951_782_400, 1_800_000_000, 253_402_300_799]
    nanos = [0, 1_000, 5_000_000, 123_000, 999_999_000, 1, 123_456_789]
    for s in seconds:
        for n in nanos:
            assert timestamp_json(s, n) == Timestamp(seconds=s, nanos=n).ToJsonString()
