"""A match's settings, validated before anything starts."""

from __future__ import annotations

import dataclasses

from referee.protocol import common, match_service
from referee.rules import MatchEnd, OptionsError, Rules, new_seed
from referee.rules.deal import MAX_SEED_BYTES

DEFAULT_CONNECT_TIMEOUT_MS = 30_000
DEFAULT_TURN_TIME_MS = 5_000
DEFAULT_MAX_REJECTIONS = 3
DEFAULT_MAX_ACTIONS_OUT_OF_TURN = 16
DEFAULT_RECONNECT_GRACE_MS = 1_000
MAX_TIME_MS = 3_600_000


class SettingsError(ValueError):
    """A match request that cannot be played; the message says which field and why."""


@dataclasses.dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything a match is created with."""

    rules: Rules
    seat_names: tuple[str, str, str, str]
    seed: str
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    turn_time_ms: int = DEFAULT_TURN_TIME_MS
    time_bank_ms: int = 0
    reconnect_grace_ms: int = DEFAULT_RECONNECT_GRACE_MS
    max_rejections_per_turn: int = DEFAULT_MAX_REJECTIONS
    max_strikes: int = 0
    max_actions_out_of_turn: int = DEFAULT_MAX_ACTIONS_OUT_OF_TURN
    drill_disconnect_after_prompts: int = 0

    def config_pb(self) -> common.MatchConfig:
        from referee.protocol.convert import rules_pb

        return common.MatchConfig(
            rules=rules_pb(self.rules),
            seat_names=list(self.seat_names),
            time_control=common.TimeControl(
                connect_timeout_ms=self.connect_timeout_ms,
                turn_time_ms=self.turn_time_ms,
                time_bank_ms=self.time_bank_ms,
                reconnect_grace_ms=self.reconnect_grace_ms,
            ),
            fault_policy=common.FaultPolicy(
                max_rejections_per_turn=self.max_rejections_per_turn,
                max_strikes=self.max_strikes,
                max_actions_out_of_turn=self.max_actions_out_of_turn,
            ),
            drills=common.Drills(disconnect_after_prompts=self.drill_disconnect_after_prompts),
        )


def settings_from_request(req: match_service.CreateMatchRequest) -> MatchSettings:
    """Validate a CreateMatchRequest; raises SettingsError naming the bad field."""
    if not req.profile:
        raise SettingsError("profile is required: pusoy-dos, pusoy-dos-chips or big-two")
    try:
        rules = Rules.for_profile(req.profile, dict(req.options))
        if req.hands and req.threshold:
            raise SettingsError("give either hands or threshold, not both")
        if req.hands:
            rules = rules.with_options({"match_end": f"hands {req.hands}"})
        if req.threshold:
            rules = rules.with_options({"match_end": f"threshold {req.threshold}"})
    except OptionsError as exc:
        raise SettingsError(str(exc)) from None
    names = list(req.seat_names) or [f"seat {i}" for i in range(4)]
    if len(names) != 4:
        raise SettingsError(f"seat_names needs 4 names, got {len(names)}")
    if any(len(n) > 100 for n in names):
        raise SettingsError("a seat name has at most 100 characters")
    seed = req.seed or new_seed()
    if len(seed.encode("utf-8")) > MAX_SEED_BYTES:
        raise SettingsError(f"the seed has at most {MAX_SEED_BYTES} bytes")
    tc, fp = req.time_control, req.fault_policy
    for name in ("connect_timeout_ms", "turn_time_ms", "time_bank_ms", "reconnect_grace_ms"):
        if getattr(tc, name) > MAX_TIME_MS:
            raise SettingsError(f"time_control.{name} is over one hour")
    if rules.match_end is MatchEnd.HANDS and rules.match_end_value > 10_000:
        raise SettingsError("at most 10000 hands per match")
    return MatchSettings(
        rules=rules,
        seat_names=(names[0], names[1], names[2], names[3]),
        seed=seed,
        connect_timeout_ms=tc.connect_timeout_ms or DEFAULT_CONNECT_TIMEOUT_MS,
        turn_time_ms=tc.turn_time_ms or DEFAULT_TURN_TIME_MS,
        time_bank_ms=tc.time_bank_ms,
        reconnect_grace_ms=tc.reconnect_grace_ms or DEFAULT_RECONNECT_GRACE_MS,
        max_rejections_per_turn=fp.max_rejections_per_turn or DEFAULT_MAX_REJECTIONS,
        max_strikes=fp.max_strikes,
        max_actions_out_of_turn=fp.max_actions_out_of_turn or DEFAULT_MAX_ACTIONS_OUT_OF_TURN,
        drill_disconnect_after_prompts=req.drills.disconnect_after_prompts,
    )
