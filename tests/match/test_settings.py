"""MatchSettings checks itself, whichever form it is read from; a CreateMatch request gives
the same settings back."""

from __future__ import annotations

import pytest

from referee.match.settings import (
    DEFAULT_TURN_TIME_MS,
    MAX_TIME_MS,
    MatchSettings,
    SettingsError,
    settings_from_request,
)
from referee.rules import Rules


@pytest.mark.parametrize(
    "rules",
    [
        Rules.for_profile("pusoy-dos"),
        Rules.for_profile("pusoy-dos-chips", {"revolution": True, "bomb": True}),
        Rules.for_profile("big-two", {"match_end": "threshold 40", "multiplier_from": 9}),
        Rules.for_profile("big-two", {"suit_order": "clubs-low", "match_end": "hands 3"}),
    ],
)
def test_a_request_carries_every_setting(rules):
    settings = MatchSettings(
        rules,
        seat_names=("a", "b", "c", "d"),
        seed="s",
        connect_timeout_ms=1234,
        turn_time_ms=567,
        time_bank_ms=89,
        reconnect_grace_ms=10,
        resume_grace_ms=11,
        max_rejections_per_turn=2,
        max_strikes=4,
        max_actions_out_of_turn=5,
        drill_disconnect_after_prompts=6,
    )
    assert settings_from_request(settings.request_pb()) == settings


def test_a_request_names_only_the_options_that_differ_from_the_profile():
    settings = MatchSettings(Rules.for_profile("pusoy-dos", {"revolution": True}), seed="s")
    assert dict(settings.request_pb().options) == {"revolution": "true"}


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"turn_time_ms": MAX_TIME_MS + 1}, "turn_time_ms", "time_control.turn_time_ms is over"),
        ({"connect_timeout_ms": 0}, "connect_timeout_ms", "should be at least 1, got 0"),
        ({"max_rejections_per_turn": 1001}, "max_rejections_per_turn", "is over 1000"),
        ({"max_strikes": True}, "max_strikes", "should be a whole number, got True"),
        ({"seat_names": ("a", "b", "c")}, "seat_names", "seat_names needs 4 names, got 3"),
        ({"seat_names": ("a", "b", "c", "d" * 101)}, "seat_names", "at most 100 characters"),
        ({"seed": "s" * 1025}, "seed", "the seed has at most 1024 bytes"),
        (
            {"rules": Rules.for_profile("big-two", {"match_end": "hands 20000"})},
            "rules",
            "at most 10000 hands per match",
        ),
    ],
)
def test_settings_that_cannot_be_played_are_refused_when_made(changes, field, message):
    with pytest.raises(SettingsError) as info:
        MatchSettings(**{"rules": Rules.for_profile("pusoy-dos"), **changes})
    assert info.value.field == field
    assert message in str(info.value)


def test_a_request_is_read_then_checked_as_any_other_form():
    request = MatchSettings(Rules.for_profile("big-two")).request_pb()
    request.time_control.turn_time_ms = 0  # left out: the default
    request.fault_policy.max_actions_out_of_turn = 0
    read = settings_from_request(request)
    assert read.turn_time_ms == DEFAULT_TURN_TIME_MS and read.max_actions_out_of_turn == 16
    request.fault_policy.max_rejections_per_turn = 5000  # within uint32, beyond any use
    with pytest.raises(SettingsError, match=r"fault_policy\.max_rejections_per_turn is over"):
        settings_from_request(request)
    request.fault_policy.max_rejections_per_turn = 3
    request.hands, request.threshold = 2, 30
    with pytest.raises(SettingsError, match="either hands or threshold"):
        settings_from_request(request)
