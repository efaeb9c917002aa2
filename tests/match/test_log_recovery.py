"""Where an unfinished log goes on after a crash (``referee.log.recovery``): after its last
whole decision. The lines of a decision the crash cut short are cut off; a last decision
that is neither whole nor the beginning of what the referee decides is not continued,
unless the seed is lost (the match is then only cancelled, and a deal cannot be decided
again). Real logs: a fixture match cut where a crash would cut it."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from referee.log.reader import read_log
from referee.log.recovery import RecoveryError, recover
from referee.server.app import RefereeServer

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = sorted((ROOT / "tests" / "fixtures" / "logs" / "v2").glob("*.jsonl"))[0]


def fixture() -> tuple[list[dict[str, Any]], str, int]:
    """The fixture's entries, its seed, and the index of a decision of three entries or
    more in its middle (a play that ends a trick or a hand)."""
    entries = [json.loads(line) for line in FIXTURE.read_bytes().split(b"\n")[:-2]]
    seed = entries[-1]["event"]["match_ended"]["seed"]
    heads = [i for i, e in enumerate(entries) if "command" in e] + [len(entries)]
    long = [a for a, b in itertools.pairwise(heads) if b - a >= 3 and a > len(entries) // 2]
    return entries, seed, long[0]


def write(path: Path, entries: list[dict[str, Any]], torn: bytes = b"") -> Path:
    """Entries as the referee writes them (hash chain recomputed), then ``torn``."""
    prev, out = "", []
    for i, e in enumerate(entries, start=1):
        e = {**e, "seq": str(i)}
        e.pop("prev_hash", None)
        if prev:
            e = {k: e[k] for k in ("match_id", "seq", "time")} | {"prev_hash": prev} | e
        line = json.dumps(e, separators=(",", ":"), ensure_ascii=False).encode()
        prev = hashlib.sha256(line).hexdigest()
        out.append(line + b"\n")
    path.write_bytes(b"".join(out) + torn)
    return path


def test_the_first_lines_of_a_decision_are_cut_off(tmp_path):
    entries, seed, head = fixture()
    log = write(tmp_path / "cut.jsonl", entries[: head + 2], torn=b'{"match_id":"2026')
    recovery = recover(read_log(log), seed)
    assert [line.number for line in recovery.cut] == [head + 1, head + 2]
    assert recovery.last.number == head and recovery.torn_bytes == 17
    assert recovery.size == sum(len(line.raw.encode()) + 1 for line in recovery.kept)
    assert log.read_bytes()[: recovery.size].count(b"\n") == head
    assert recovery.state.seq == head  # the match before the decision cut short
    assert len(recover(read_log(log), "").cut) == 2  # the seed lost: cut all the same
    restart = recovery.restart("9.9").restart
    assert (restart.cut_entries, restart.torn_bytes) == (2, 17)
    kinds = ", ".join(next(iter(e["event"])) for e in entries[head : head + 2])
    assert recovery.describe() == (
        f"cut off 2 entries of an unfinished decision (lines {head + 1}-{head + 2}: {kinds}) "
        "and a torn line of 17 bytes"
    )


def test_a_whole_last_decision_is_kept(tmp_path):
    entries, seed, head = fixture()
    end = next(i for i in range(head + 1, len(entries)) if "command" in entries[i])
    recovery = recover(read_log(write(tmp_path / "whole.jsonl", entries[:end])), seed)
    assert not recovery.cut and recovery.last.number == end and recovery.describe() == ""
    assert recovery.restart("9.9").restart.cut_entries == 0


def changed(entries: list[dict[str, Any]], head: int) -> list[dict[str, Any]]:
    """The decision at ``head`` cut after two lines, its second saying another thing."""
    out = json.loads(json.dumps(entries[: head + 2]))
    second = out[head + 1]["event"]
    kind = next(iter(second))
    if kind == "trick_cleared":
        second[kind]["leader"] = (second[kind].get("leader", 0) + 1) % 4
    else:
        out[head + 1]["event"] = {"trick_cleared": {"leader": 2}}
    return out


def test_a_last_decision_that_is_not_what_the_referee_decides_is_not_continued(tmp_path):
    entries, seed, head = fixture()
    log = write(tmp_path / "forged.jsonl", changed(entries, head))
    with pytest.raises(RecoveryError) as err:
        recover(read_log(log), seed)
    assert str(err.value).startswith(
        f"line {head + 2}: the log's last decision is not what the referee decides: "
        "the referee decides "
    )
    # Without the seed the match is only cancelled: the decision is kept as it is.
    assert not recover(read_log(log), "").cut


async def test_a_server_sets_such_a_log_aside_as_unresumable(tmp_path):
    entries, seed, head = fixture()
    logs, seeds = tmp_path / "logs", tmp_path / "state" / "seeds"
    logs.mkdir()
    seeds.mkdir(parents=True, mode=0o700)
    (tmp_path / "state").chmod(0o700)
    match_id = entries[0]["match_id"]
    (seeds / f"{match_id}.seed").write_text(seed)
    log = write(logs / f"{match_id}.jsonl", changed(entries, head))
    server = RefereeServer("127.0.0.1:0", logs, state_dir=tmp_path / "state", resume=True)
    await server.start()
    try:
        [outcome] = server.resumed
        assert not outcome.resumed
        assert "the log's last decision is not what the referee decides" in outcome.problem
        assert not log.exists() and log.with_suffix(".jsonl.unresumable").exists()
    finally:
        await server.stop(grace=0.2)
