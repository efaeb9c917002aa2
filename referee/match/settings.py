"""A match's settings: one frozen value, its defaults in one place, and its protocol forms.

The CLI, the server (CreateMatchRequest), the tournament config, verify and crash
recovery (MatchConfig, as logged in match_created) all go through this module.
"""

from __future__ import annotations

import dataclasses

from referee.protocol import common, match_service
from referee.protocol.convert import rules_from_pb, rules_pb
from referee.rules import MatchEnd, OptionsError, Rules, new_seed
from referee.rules.deal import MAX_SEED_BYTES

DEFAULT_CONNECT_TIMEOUT_MS = 30_000
DEFAULT_TURN_TIME_MS = 5_000
DEFAULT_MAX_REJECTIONS = 3
DEFAULT_MAX_ACTIONS_OUT_OF_TURN = 16
DEFAULT_RECONNECT_GRACE_MS = 1_000
DEFAULT_RESUME_GRACE_MS = 10_000
TOURNAMENT_TURN_TIME_MS = 2_000
TOURNAMENT_CONNECT_TIMEOUT_MS = 10_000
"""A tournament plays many matches between programs: shorter clocks by default."""
MAX_TIME_MS = 3_600_000
MAX_NAME_CHARS = 100
MAX_HANDS = 10_000


class SettingsError(ValueError):
    """A match request that cannot be played; the message says which field and why."""


@dataclasses.dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything a match is created with; times in milliseconds."""

    rules: Rules
    seat_names: tuple[str, str, str, str] = ("seat 0", "seat 1", "seat 2", "seat 3")
    seed: str = ""
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    turn_time_ms: int = DEFAULT_TURN_TIME_MS
    time_bank_ms: int = 0
    reconnect_grace_ms: int = DEFAULT_RECONNECT_GRACE_MS
    resume_grace_ms: int = DEFAULT_RESUME_GRACE_MS
    max_rejections_per_turn: int = DEFAULT_MAX_REJECTIONS
    max_strikes: int = 0
    max_actions_out_of_turn: int = DEFAULT_MAX_ACTIONS_OUT_OF_TURN
    drill_disconnect_after_prompts: int = 0

    def config_pb(self) -> common.MatchConfig:
        """The settings as logged and sent to the bots (everything but the seed)."""
        return common.MatchConfig(
            rules=rules_pb(self.rules),
            seat_names=list(self.seat_names),
            time_control=common.TimeControl(
                connect_timeout_ms=self.connect_timeout_ms,
                turn_time_ms=self.turn_time_ms,
                time_bank_ms=self.time_bank_ms,
                reconnect_grace_ms=self.reconnect_grace_ms,
                resume_grace_ms=self.resume_grace_ms,
            ),
            fault_policy=common.FaultPolicy(
                max_rejections_per_turn=self.max_rejections_per_turn,
                max_strikes=self.max_strikes,
                max_actions_out_of_turn=self.max_actions_out_of_turn,
            ),
            drills=common.Drills(disconnect_after_prompts=self.drill_disconnect_after_prompts),
        )

    def with_seed(self, seed: str) -> MatchSettings:
        return dataclasses.replace(self, seed=seed)

    def request_pb(self) -> match_service.CreateMatchRequest:
        """The settings as a CreateMatch request, for a referee reached over gRPC; the
        options are those that differ from the profile's. ``settings_from_request`` gives
        the same settings back."""
        base = Rules.for_profile(self.rules.profile).options()
        return match_service.CreateMatchRequest(
            profile=self.rules.profile,
            options={
                name: _option_text(value)
                for name, value in self.rules.options().items()
                if value != base[name]
            },
            seat_names=list(self.seat_names),
            seed=self.seed,
            time_control=common.TimeControl(
                connect_timeout_ms=self.connect_timeout_ms,
                turn_time_ms=self.turn_time_ms,
                time_bank_ms=self.time_bank_ms,
                reconnect_grace_ms=self.reconnect_grace_ms,
                resume_grace_ms=self.resume_grace_ms,
            ),
            fault_policy=common.FaultPolicy(
                max_rejections_per_turn=self.max_rejections_per_turn,
                max_strikes=self.max_strikes,
                max_actions_out_of_turn=self.max_actions_out_of_turn,
            ),
            drills=common.Drills(disconnect_after_prompts=self.drill_disconnect_after_prompts),
        )


def _option_text(value: object) -> str:
    """An option's value as the text a request carries (``true``, ``hands 4``, ``10``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def settings_from_config(config: common.MatchConfig, seed: str = "") -> MatchSettings:
    """The settings a logged MatchConfig describes; a value left at 0 takes its default,
    as it did when the match was created. Raises SettingsError."""
    try:
        rules = rules_from_pb(config.rules)
    except (OptionsError, ValueError) as exc:
        raise SettingsError(f"the rules cannot be read: {exc}") from None
    names = list(config.seat_names) or [f"seat {i}" for i in range(4)]
    if len(names) != 4:
        raise SettingsError(f"seat_names needs 4 names, got {len(names)}")
    tc, fp = config.time_control, config.fault_policy
    return MatchSettings(
        rules=rules,
        seat_names=(names[0], names[1], names[2], names[3]),
        seed=seed,
        connect_timeout_ms=tc.connect_timeout_ms or DEFAULT_CONNECT_TIMEOUT_MS,
        turn_time_ms=tc.turn_time_ms or DEFAULT_TURN_TIME_MS,
        time_bank_ms=tc.time_bank_ms,
        reconnect_grace_ms=tc.reconnect_grace_ms or DEFAULT_RECONNECT_GRACE_MS,
        resume_grace_ms=tc.resume_grace_ms or DEFAULT_RESUME_GRACE_MS,
        max_rejections_per_turn=fp.max_rejections_per_turn or DEFAULT_MAX_REJECTIONS,
        max_strikes=fp.max_strikes,
        max_actions_out_of_turn=fp.max_actions_out_of_turn or DEFAULT_MAX_ACTIONS_OUT_OF_TURN,
        drill_disconnect_after_prompts=config.drills.disconnect_after_prompts,
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
    if any(len(n) > MAX_NAME_CHARS for n in names):
        raise SettingsError(f"a seat name has at most {MAX_NAME_CHARS} characters")
    seed = req.seed or new_seed()
    if len(seed.encode("utf-8")) > MAX_SEED_BYTES:
        raise SettingsError(f"the seed has at most {MAX_SEED_BYTES} bytes")
    tc = req.time_control
    for name in (
        "connect_timeout_ms",
        "turn_time_ms",
        "time_bank_ms",
        "reconnect_grace_ms",
        "resume_grace_ms",
    ):
        if getattr(tc, name) > MAX_TIME_MS:
            raise SettingsError(f"time_control.{name} is over one hour")
    if rules.match_end is MatchEnd.HANDS and rules.match_end_value > MAX_HANDS:
        raise SettingsError(f"at most {MAX_HANDS} hands per match")
    config = common.MatchConfig(
        rules=rules_pb(rules),
        seat_names=names,
        time_control=tc,
        fault_policy=req.fault_policy,
        drills=req.drills,
    )
    return settings_from_config(config, seed)
