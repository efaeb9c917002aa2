"""The sample stdio bots (sh + jq, C, Perl) play whole matches through the bridge.

Each table mixes stdio bots with the referee's built-in gRPC bots; every log verifies.
"""

from __future__ import annotations

import pytest

from referee.log.verify import verify_log
from referee.protocol import common

from .conftest import build_samples, events, referee_match, seat_stderr

TABLES = [
    ("pusoy-dos", ["jq", "c", "perl", "greedy"]),
    ("pusoy-dos-chips", ["c", "perl", "random", "jq"]),
    ("big-two", ["perl", "greedy", "jq", "c"]),
]


def command(kind: str, samples: dict[str, str], *args: str) -> str:
    if kind in ("greedy", "random"):
        return kind
    return " ".join([f"stdio:{samples[kind]}", *args])


@pytest.mark.parametrize(("profile", "kinds"), TABLES, ids=[p for p, _ in TABLES])
def test_samples_play_a_full_match(tmp_path, profile, kinds):
    samples = build_samples()
    bots = [command(k, samples) for k in kinds]
    log, done = referee_match(
        tmp_path, bots, "--profile", profile, "--hands", "2", "--seed", f"stdio-{profile}"
    )
    assert "finished after 2 hands" in done.stdout
    report = verify_log(log)
    assert report.ok, report.summary()
    ended = events(log, "match_ended")[0]
    assert ended.status == common.MATCH_STATUS_FINISHED
    assert list(ended.strikes) == [0, 0, 0, 0]
    # Every seat played for itself: no default actions, no rejections.
    for kind in ("played", "passed"):
        assert not [e for e in events(log, kind) if e.default_cause], f"defaults in {log}"
    assert not events(log, "action_rejected")
    for seat, kind in enumerate(kinds):
        if kind not in ("greedy", "random"):
            assert "exit 0 (match over)" in seat_stderr(log, seat)


def test_four_copies_of_one_program_get_distinct_names(tmp_path):
    samples = build_samples()
    log, done = referee_match(
        tmp_path, [f"stdio:{samples['c']}"] * 4, "--hands", "1", "--seed", "four-copies"
    )
    config = events(log, "match_created")[0].config
    names = list(config.seat_names)
    assert len(set(names)) == 4, names
    assert names == [f"{names[0][:-2]}-{k}" for k in (1, 2, 3, 4)]
    bot_names = {e.seat: e.bot_name for e in events(log, "seat_connected")}
    assert sorted(bot_names) == [0, 1, 2, 3]
    assert [bot_names[s] for s in range(4)] == names  # the bridge says hello with the seat name
    for name in names:
        assert name in done.stdout  # the standings tell the four apart


@pytest.mark.parametrize("kind", ["c", "jq", "perl"])
def test_sample_recovers_from_a_rejection_and_a_dropped_stream(tmp_path, kind):
    samples = build_samples()
    log, _ = referee_match(
        tmp_path,
        [command(kind, samples, "--misbehave"), "greedy", "random", "greedy"],
        "--profile",
        "big-two",
        "--hands",
        "2",
        "--seed",
        f"drill-{kind}",
        "--drill-disconnect-after",
        "2",
    )
    report = verify_log(log)
    assert report.ok, report.summary()
    rejected = events(log, "action_rejected", seat=0)
    assert rejected
    assert {e.reason for e in rejected} == {common.REJECTION_REASON_CARD_NOT_IN_HAND}
    # Each rejection was followed by the bot's own (not a default) action in that turn.
    acted = {e.turn_id: e for k in ("played", "passed") for e in events(log, k, seat=0)}
    assert all(e.turn_id in acted and not acted[e.turn_id].default_cause for e in rejected)
    # The drill closed the stream once; the bridge reconnected and the bot played on.
    connects = [e.reconnect for e in events(log, "seat_connected", seat=0)]
    assert connects == [False, True]
    defaults = [e.default_cause for k in ("played", "passed") for e in events(log, k, seat=0)]
    assert [d for d in defaults if d] == [common.DEFAULT_CAUSE_DISCONNECTED]  # the drilled turn
    assert "1 reconnects" in seat_stderr(log, 0)
