"""A match's settings: one frozen value that checks itself, each field declared once.

Every form a match's settings come in is read into ``MatchSettings`` and checked there,
whichever door it came through: a CreateMatchRequest (the server), a logged MatchConfig
(verify, crash recovery), the CLI's flags (``referee match``, ``referee organiser
create``) and a tournament's ``[time]`` and ``[faults]`` tables. Each numeric field is
declared once, on the class, with its default, its bounds, its help and the forms that
carry it (``Setting``); the flags, the TOML keys and the protocol messages are made from
that table (``SETTINGS``), so a new field or a new bound is one line.

The protocol is imported only when a protocol form is asked for: the CLI builds its flags
from this module at every start, and the generated messages cost most of a second.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from referee.match.declared import Declared, declared
from referee.rules import MatchEnd, OptionsError, Rules, new_seed
from referee.rules.deal import MAX_SEED_BYTES

if TYPE_CHECKING:
    from referee.protocol import common, match_service

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
MAX_COUNT = 2**32 - 1
"""Counts travel as uint32 in the protocol."""
MAX_NAME_CHARS = 100
MAX_HANDS = 10_000
DEFAULT_SEAT_NAMES = ("seat 0", "seat 1", "seat 2", "seat 3")


@dataclasses.dataclass(frozen=True, slots=True)
class SeatClock:
    """A seat's own clock (a language model's seconds to minutes per move), replacing the
    match's turn time and time bank for that seat; checked by ``MatchSettings``."""

    seat: int
    turn_time_ms: int
    time_bank_ms: int = 0

    @classmethod
    def parse(cls, text: str) -> SeatClock:
        """``SEAT:TURN_MS`` or ``SEAT:TURN_MS:BANK_MS``, as the flag ``--seat-clock``
        takes it; SettingsError for anything else.

        >>> SeatClock.parse("2:60000:120000")
        SeatClock(seat=2, turn_time_ms=60000, time_bank_ms=120000)
        """
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(p.strip().isdigit() for p in parts):
            raise SettingsError(
                f"a seat clock is SEAT:TURN_MS or SEAT:TURN_MS:BANK_MS, got {text!r}",
                "seat_clocks",
            )
        numbers = [int(p) for p in parts]
        return cls(numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else 0)


class SettingsError(ValueError):
    """Settings that cannot be played; the message says which field and why, ``field``
    names it for a reader that points at its own key: a ``MatchSettings`` field, or
    ``profile``, ``options``, ``hands``, ``threshold`` (the rules as asked for)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclasses.dataclass(frozen=True, slots=True)
class Setting(Declared):
    """One numeric field of ``MatchSettings``: everything each form needs to carry it.
    Its ``help`` has ``{default}`` for the default; its flag is that of ``referee match``
    and ``referee organiser create``."""

    low: int
    high: int
    message: str
    """The protocol message that carries it: time_control, fault_policy or drills."""
    proto: str
    """Its name in that message."""
    table: str
    """The tournament's TOML table that holds it (time, faults); "" for none."""

    def named(self, name: str) -> Self:
        """Named, with the proto name and the metavar made from it where none is given."""
        metavar = self.metavar or self.dest.upper()
        return dataclasses.replace(self, name=name, proto=self.proto or name, metavar=metavar)

    @property
    def path(self) -> str:
        """The field as a CreateMatchRequest names it (``time_control.turn_time_ms``)."""
        return f"{self.message}.{self.proto}"

    def check(self, value: object) -> None:
        """SettingsError unless ``value`` is a whole number within the bounds."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingsError(f"{self.path} should be a whole number, got {value!r}", self.name)
        if value > self.high:
            most = "one hour" if self.high == MAX_TIME_MS else str(self.high)
            raise SettingsError(f"{self.path} is over {most}", self.name)
        if value < self.low:
            raise SettingsError(
                f"{self.path} should be at least {self.low}, got {value}", self.name
            )


def _setting(
    default: int,
    message: str,
    help: str,
    *,
    low: int = 1,
    high: int = MAX_COUNT,
    proto: str = "",
    flag: str = "",
    metavar: str = "",
    table: str = "",
) -> Any:
    """A ``MatchSettings`` field and its ``Setting`` (named once the class exists)."""
    spec = Setting("", default, help, flag, metavar, low, high, message, proto, table)
    return spec.field()


@dataclasses.dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything a match is created with; times in milliseconds. A value that cannot
    be played is refused when the settings are made (``SettingsError``)."""

    rules: Rules
    seat_names: tuple[str, str, str, str] = DEFAULT_SEAT_NAMES
    seed: str = ""
    """The deal seed; "" where it is not known yet (a request draws one)."""
    turn_time_ms: int = _setting(
        DEFAULT_TURN_TIME_MS,
        "time_control",
        "time per turn (default: {default})",
        high=MAX_TIME_MS,
        flag="--turn-time-ms",
        table="time",
    )
    connect_timeout_ms: int = _setting(
        DEFAULT_CONNECT_TIMEOUT_MS,
        "time_control",
        "time for the bots to connect (default: {default})",
        high=MAX_TIME_MS,
        flag="--connect-timeout-ms",
        table="time",
    )
    time_bank_ms: int = _setting(
        0,
        "time_control",
        "reserve per seat (default: {default})",
        low=0,
        high=MAX_TIME_MS,
        flag="--time-bank-ms",
        table="time",
    )
    reconnect_grace_ms: int = _setting(
        DEFAULT_RECONNECT_GRACE_MS,
        "time_control",
        "how long a seat that lost its stream is waited for when its turn comes "
        "(default: {default})",
        high=MAX_TIME_MS,
    )
    resume_grace_ms: int = _setting(
        DEFAULT_RESUME_GRACE_MS,
        "time_control",
        "how long a resumed match waits for its bots to come back (default: {default})",
        high=MAX_TIME_MS,
    )
    max_rejections_per_turn: int = _setting(
        DEFAULT_MAX_REJECTIONS,
        "fault_policy",
        "rejected attempts per turn before the default action (default: {default})",
        high=1000,
        flag="--max-rejections",
        table="faults",
    )
    max_strikes: int = _setting(
        0,
        "fault_policy",
        "strikes before a seat is played by default (0: no limit; default: {default})",
        low=0,
        high=1_000_000,
        flag="--max-strikes",
        table="faults",
    )
    max_actions_out_of_turn: int = _setting(
        DEFAULT_MAX_ACTIONS_OUT_OF_TURN,
        "fault_policy",
        "actions answering no prompt, between two prompts, before a seat's stream is "
        "closed (default: {default})",
        high=1_000_000,
        flag="--max-actions-out-of-turn",
        table="faults",
    )
    drill_disconnect_after_prompts: int = _setting(
        0,
        "drills",
        "close each seat's stream once after its Nth prompt, to check that bots "
        "reconnect (default: off)",
        low=0,
        proto="disconnect_after_prompts",
        flag="--drill-disconnect-after",
        metavar="N",
    )
    seat_clocks: tuple[SeatClock, ...] = ()
    """Seats whose turn time and time bank are their own, at most one each, by seat."""

    def __post_init__(self) -> None:
        if len(self.seat_names) != 4:
            raise SettingsError(
                f"seat_names needs 4 names, got {len(self.seat_names)}", "seat_names"
            )
        if any(len(name) > MAX_NAME_CHARS for name in self.seat_names):
            raise SettingsError(
                f"a seat name has at most {MAX_NAME_CHARS} characters", "seat_names"
            )
        if len(self.seed.encode("utf-8")) > MAX_SEED_BYTES:
            raise SettingsError(f"the seed has at most {MAX_SEED_BYTES} bytes", "seed")
        for setting in SETTINGS:
            setting.check(getattr(self, setting.name))
        if self.rules.match_end is MatchEnd.HANDS and self.rules.match_end_value > MAX_HANDS:
            raise SettingsError(f"at most {MAX_HANDS} hands per match", "rules")
        _check_seat_clocks(self.seat_clocks)

    def turn_time_for(self, seat: int) -> int:
        """The seat's time per turn in milliseconds: its own clock's, else the match's."""
        for clock in self.seat_clocks:
            if clock.seat == seat:
                return clock.turn_time_ms
        return self.turn_time_ms

    def time_bank_for(self, seat: int) -> int:
        """The seat's time bank at the start, in milliseconds."""
        for clock in self.seat_clocks:
            if clock.seat == seat:
                return clock.time_bank_ms
        return self.time_bank_ms

    def with_seat_clock(self, clock: SeatClock) -> MatchSettings:
        """These settings with ``clock`` for its seat (replacing one it had)."""
        kept = tuple(c for c in self.seat_clocks if c.seat != clock.seat)
        clocks = tuple(sorted((*kept, clock), key=lambda c: c.seat))
        return dataclasses.replace(self, seat_clocks=clocks)

    def config_pb(self) -> common.MatchConfig:
        """The settings as logged and sent to the bots (everything but the seed)."""
        from referee.protocol import common
        from referee.protocol.convert import rules_pb

        time_control, fault_policy, drills = self._messages()
        return common.MatchConfig(
            rules=rules_pb(self.rules),
            seat_names=list(self.seat_names),
            time_control=time_control,
            fault_policy=fault_policy,
            drills=drills,
        )

    def with_seed(self, seed: str) -> MatchSettings:
        return dataclasses.replace(self, seed=seed)

    def request_pb(self) -> match_service.CreateMatchRequest:
        """The settings as a CreateMatch request, for a referee reached over gRPC; the
        options are those that differ from the profile's. ``settings_from_request`` gives
        the same settings back."""
        from referee.protocol import match_service

        base = Rules.for_profile(self.rules.profile).options()
        time_control, fault_policy, drills = self._messages()
        return match_service.CreateMatchRequest(
            profile=self.rules.profile,
            options={
                name: _option_text(value)
                for name, value in self.rules.options().items()
                if value != base[name]
            },
            seat_names=list(self.seat_names),
            seed=self.seed,
            time_control=time_control,
            fault_policy=fault_policy,
            drills=drills,
        )

    def _messages(self) -> tuple[common.TimeControl, common.FaultPolicy, common.Drills]:
        from referee.protocol import common

        fields: dict[str, dict[str, int]] = {"time_control": {}, "fault_policy": {}, "drills": {}}
        for setting in SETTINGS:
            fields[setting.message][setting.proto] = getattr(self, setting.name)
        clocks = [
            common.SeatClock(seat=c.seat, turn_time_ms=c.turn_time_ms, time_bank_ms=c.time_bank_ms)
            for c in self.seat_clocks
        ]
        return (
            common.TimeControl(**fields["time_control"], seat_clocks=clocks),
            common.FaultPolicy(**fields["fault_policy"]),
            common.Drills(**fields["drills"]),
        )


def _check_seat_clocks(clocks: Sequence[SeatClock]) -> None:
    seen: set[int] = set()
    for clock in clocks:
        where = f"time_control.seat_clocks (seat {clock.seat})"
        if not isinstance(clock, SeatClock):
            raise SettingsError("time_control.seat_clocks holds SeatClock values", "seat_clocks")
        if not 0 <= clock.seat <= 3:
            raise SettingsError(f"{where}: a seat is 0 to 3", "seat_clocks")
        if clock.seat in seen:
            raise SettingsError(f"{where}: one clock per seat", "seat_clocks")
        seen.add(clock.seat)
        if not 1 <= clock.turn_time_ms <= MAX_TIME_MS:
            raise SettingsError(
                f"{where}: turn_time_ms should be 1 ms to one hour, got {clock.turn_time_ms}",
                "seat_clocks",
            )
        if not 0 <= clock.time_bank_ms <= MAX_TIME_MS:
            raise SettingsError(
                f"{where}: time_bank_ms should be 0 to one hour, got {clock.time_bank_ms}",
                "seat_clocks",
            )


def _seat_clocks(time_control: common.TimeControl) -> tuple[SeatClock, ...]:
    return tuple(
        SeatClock(c.seat, c.turn_time_ms, c.time_bank_ms) for c in time_control.seat_clocks
    )


SETTINGS: tuple[Setting, ...] = declared(MatchSettings, Setting)
"""The numeric fields of ``MatchSettings``, in order: the one table every form is made from."""


def _option_text(value: object) -> str:
    """An option's value as the text a request carries (``true``, ``hands 4``, ``10``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def match_rules(
    profile: str, options: Mapping[str, Any] | None = None, hands: int = 0, threshold: int = 0
) -> Rules:
    """The rules of ``profile`` with option overrides, ending after ``hands`` hands or at
    ``threshold`` when one is given. SettingsError naming ``profile``, ``options``,
    ``hands`` or ``threshold``."""
    try:
        rules = Rules.for_profile(profile)
    except OptionsError as exc:
        raise SettingsError(str(exc), "profile") from None
    try:
        rules = rules.with_options(options or {})
    except OptionsError as exc:
        raise SettingsError(str(exc), "options") from None
    if hands and threshold:
        raise SettingsError("give either hands or threshold, not both", "hands")
    for name, value in (("hands", hands), ("threshold", threshold)):
        if value:
            try:
                rules = rules.with_options({"match_end": f"{name} {value}"})
            except OptionsError as exc:
                raise SettingsError(str(exc), name) from None
    return rules


def settings_from_values(
    rules: Rules,
    values: Mapping[str, int],
    seat_names: Sequence[str] = (),
    seed: str = "",
    seat_clocks: Sequence[SeatClock] = (),
) -> MatchSettings:
    """Settings from values as the protocol carries them: a field left out or 0 takes
    its default, no seat names the default names. Raises SettingsError."""
    names = tuple(seat_names) or DEFAULT_SEAT_NAMES
    if len(names) != 4:
        raise SettingsError(f"seat_names needs 4 names, got {len(names)}", "seat_names")
    return MatchSettings(
        rules,
        seat_names=(names[0], names[1], names[2], names[3]),
        seed=seed,
        seat_clocks=tuple(sorted(seat_clocks, key=lambda c: c.seat)),
        **{s.name: values.get(s.name, 0) or s.default for s in SETTINGS},
    )


def _values(
    time_control: common.TimeControl, fault_policy: common.FaultPolicy, drills: common.Drills
) -> dict[str, int]:
    messages = {"time_control": time_control, "fault_policy": fault_policy, "drills": drills}
    return {s.name: getattr(messages[s.message], s.proto) for s in SETTINGS}


def settings_from_config(config: common.MatchConfig, seed: str = "") -> MatchSettings:
    """The settings a logged MatchConfig describes; a value left at 0 takes its default,
    as it did when the match was created. Raises SettingsError."""
    from referee.protocol.convert import rules_from_pb

    try:
        rules = rules_from_pb(config.rules)
    except (OptionsError, ValueError) as exc:
        raise SettingsError(f"the rules cannot be read: {exc}", "rules") from None
    values = _values(config.time_control, config.fault_policy, config.drills)
    clocks = _seat_clocks(config.time_control)
    return settings_from_values(rules, values, config.seat_names, seed, clocks)


def settings_from_request(req: match_service.CreateMatchRequest) -> MatchSettings:
    """The settings a CreateMatchRequest asks for (no seed: one is drawn); raises
    SettingsError naming the bad field."""
    if not req.profile:
        raise SettingsError("profile is required: pusoy-dos, pusoy-dos-chips or big-two", "profile")
    rules = match_rules(req.profile, dict(req.options), req.hands, req.threshold)
    values = _values(req.time_control, req.fault_policy, req.drills)
    clocks = _seat_clocks(req.time_control)
    return settings_from_values(rules, values, req.seat_names, req.seed or new_seed(), clocks)
