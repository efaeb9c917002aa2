"""The bounds a server puts on everything a client can make it hold or do.

Each is an option of ``referee serve`` with a safe default, and served by
``MatchService.GetServerInfo``. A request over a bound is refused with a typed status
(INVALID_ARGUMENT for a value, RESOURCE_EXHAUSTED for a count or a rate) and leaves
every match running.
"""

from __future__ import annotations

import dataclasses

from referee.match.settings import MatchSettings, SettingsError
from referee.protocol import match_service
from referee.rules import MatchEnd
from referee.rules.deal import MAX_SEED_BYTES

DEFAULT_MAX_HANDS = 1000
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024


@dataclasses.dataclass(frozen=True, slots=True)
class ServerLimits:
    """A server's limits; 0 turns a count limit off. The connection bounds at the end are
    not served by GetServerInfo: they are the transport's, not a match's."""

    max_hands: int = DEFAULT_MAX_HANDS
    """Hands per match: a "hands N" match asks for at most this many, and every other
    match (threshold ones too) ends after this many (rules option max_hands)."""
    max_waiting_matches: int = 100
    """Matches still waiting for their bots, at once."""
    max_live_matches: int = 500
    """Matches not over (waiting or running), at once."""
    max_connect_timeout_ms: int = 600_000
    """The longest a match may wait for its bots (TimeControl.connect_timeout_ms)."""
    max_spectators_per_match: int = 32
    max_spectators: int = 512
    """WatchMatch streams open at once, per match and on the whole server."""
    max_reconnects_per_minute: int = 60
    """Hellos per seat in any minute (a bot that reconnects in a loop is cut off)."""
    max_failed_hellos_per_minute: int = 60
    """Hellos with an unknown token or bot key, per client address, in any minute."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """The largest message a client may send."""
    max_name_chars: int = 100
    """Seat names (and the part of a bot's self-chosen name that is kept)."""
    max_reason_chars: int = 500
    """A cancel reason."""
    max_options: int = 32
    max_option_chars: int = 100
    """Option overrides per match, and the length of each name and value."""
    max_seed_bytes: int = MAX_SEED_BYTES
    max_id_chars: int = 64
    """Match ids, seat tokens and bot keys in requests (longer ones match nothing)."""
    handshake_timeout_ms: int = 10_000
    """A connection that has not finished its TLS and HTTP/2 handshakes (the client's
    HTTP/2 settings received) this long after it opened is closed: a socket that sends
    nothing holds a descriptor for this long at most (gRPC's own default: 120 s)."""
    idle_timeout_ms: int = 60_000
    """A connection with no call open this long is closed (HTTP/2 GOAWAY; a client
    connects again when it next calls); 0: never."""
    max_connections: int = 0
    """gRPC connections a listener holds at once; more are closed as they arrive. 0: no
    cap (``referee serve`` sets one from its open-file limit: ``connection_budget``)."""

    def pb(self) -> match_service.ServerLimits:
        return match_service.ServerLimits(
            max_hands=self.max_hands,
            max_waiting_matches=self.max_waiting_matches,
            max_live_matches=self.max_live_matches,
            max_connect_timeout_ms=self.max_connect_timeout_ms,
            max_spectators_per_match=self.max_spectators_per_match,
            max_spectators=self.max_spectators,
            max_reconnects_per_minute=self.max_reconnects_per_minute,
            max_failed_hellos_per_minute=self.max_failed_hellos_per_minute,
            max_message_bytes=self.max_message_bytes,
        )


def check_request(req: match_service.CreateMatchRequest, limits: ServerLimits) -> None:
    """The request's strings and counts within bounds (before its settings are read);
    SettingsError naming the field otherwise."""
    if len(req.profile) > limits.max_option_chars:
        raise SettingsError("unknown profile (the name is too long)")
    if len(req.options) > limits.max_options:
        raise SettingsError(f"at most {limits.max_options} option overrides")
    for name, value in req.options.items():
        if len(name) > limits.max_option_chars or len(value) > limits.max_option_chars:
            raise SettingsError(
                f"option names and values have at most {limits.max_option_chars} characters"
            )
    if any(len(n) > limits.max_name_chars for n in req.seat_names):
        raise SettingsError(f"a seat name has at most {limits.max_name_chars} characters")
    if len(req.seed.encode("utf-8")) > limits.max_seed_bytes:
        raise SettingsError(f"the seed has at most {limits.max_seed_bytes} bytes")


def apply_limits(settings: MatchSettings, limits: ServerLimits) -> MatchSettings:
    """The settings within this server's bounds: a hands cap on every match (the rules
    option ``max_hands``, logged with the rules), the connect wait. SettingsError for a
    request over a bound."""
    rules = settings.rules
    cap = limits.max_hands
    if cap:
        if rules.match_end is MatchEnd.HANDS and rules.match_end_value > cap:
            raise SettingsError(f"at most {cap} hands per match on this server")
        if rules.max_hands > cap:
            raise SettingsError(f"option max_hands: at most {cap} on this server")
        if not rules.max_hands:
            settings = dataclasses.replace(
                settings, rules=dataclasses.replace(rules, max_hands=cap)
            )
    wait = limits.max_connect_timeout_ms
    if wait and settings.connect_timeout_ms > wait:
        raise SettingsError(f"time_control.connect_timeout_ms is at most {wait} on this server")
    return settings
