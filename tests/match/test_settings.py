"""MatchSettings in its protocol forms: a CreateMatch request gives the same settings back."""

from __future__ import annotations

import pytest

from referee.match.settings import MatchSettings, settings_from_request
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
