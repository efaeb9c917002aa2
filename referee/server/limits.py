"""The bounds a server puts on everything a client can make it hold or do.

Each is an option of ``referee serve`` with a safe default, and served by
``MatchService.GetServerInfo``. A request over a bound is refused with a typed status
(INVALID_ARGUMENT for a value, RESOURCE_EXHAUSTED for a count or a rate) and leaves
every match running.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Self

from referee.match.declared import Declared, declared
from referee.match.settings import MatchSettings, SettingsError
from referee.rules import MatchEnd
from referee.rules.deal import MAX_SEED_BYTES

if TYPE_CHECKING:  # the protocol only where a limit is served: `referee --help` stays light
    from referee.protocol import match_service

DEFAULT_MAX_HANDS = 1000
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024


_OWN_FLAG = "--"
"""A limit declared with this flag has the option named after its field."""


@dataclasses.dataclass(frozen=True, slots=True)
class Limit(Declared):
    """One field of ``ServerLimits`` as ``referee serve`` takes it and
    ``GetServerInfo`` serves it."""

    positive: bool
    """At least 1 (else 0 may turn it off)."""
    served: bool
    """Served by ``GetServerInfo`` (the connection bounds are the transport's)."""

    def named(self, name: str) -> Self:
        """Named, with its option named after it (``--max-hands``) if it has one."""
        flag = "--" + name.replace("_", "-") if self.flag == _OWN_FLAG else ""
        return dataclasses.replace(self, name=name, flag=flag)


def _limit(
    default: int,
    help: str = "",
    *,
    metavar: str = "N",
    flag: bool = True,
    positive: bool = False,
    served: bool = True,
) -> Any:
    """A ``ServerLimits`` field and its ``Limit`` (named once the class exists)."""
    own_flag = _OWN_FLAG if flag else ""
    spec = Limit("", default, help.format(default=default), own_flag, metavar, positive, served)
    return spec.field()


@dataclasses.dataclass(frozen=True, slots=True)
class ServerLimits:
    """A server's limits; 0 turns a count limit off. Each field is declared once, with
    its default and its ``referee serve`` option (``LIMITS``, in the order of ``--help``).
    The connection bounds (connections, handshake and idle timeouts) are not served by
    GetServerInfo: they are the transport's, not a match's."""

    max_hands: int = _limit(
        DEFAULT_MAX_HANDS,
        "hands per match; threshold matches end at N hands too (default {default})",
    )
    """Hands per match: a "hands N" match asks for at most this many, and every other
    match (threshold ones too) ends after this many (rules option max_hands)."""
    max_waiting_matches: int = _limit(
        100, "matches waiting for their bots at once (default {default})"
    )
    """Matches still waiting for their bots, at once."""
    max_live_matches: int = _limit(500, "matches not over at once (default {default})")
    """Matches not over (waiting or running), at once."""
    max_connect_timeout_ms: int = _limit(
        600_000, "the longest a match may wait for its bots (default {default})", metavar="MS"
    )
    """The longest a match may wait for its bots (TimeControl.connect_timeout_ms)."""
    max_spectators_per_match: int = _limit(32, "WatchMatch streams per match (default {default})")
    max_spectators: int = _limit(512, "WatchMatch streams on the server (default {default})")
    """WatchMatch streams open at once, per match and on the whole server."""
    max_reconnects_per_minute: int = _limit(60, "hellos per seat in any minute (default {default})")
    """Hellos per seat in any minute (a bot that reconnects in a loop is cut off)."""
    max_failed_hellos_per_minute: int = _limit(
        60,
        "hellos with a bad token or key per client address in any minute (default {default})",
    )
    """Hellos with an unknown token or bot key, per client address, in any minute."""
    max_connections: int = _limit(
        0,
        "gRPC connections held at once; more are closed as they arrive (default {default}: "
        "what the open-file limit leaves once a descriptor per live match's log is kept "
        "in reserve)",
        served=False,
    )
    """gRPC connections a listener holds at once; more are closed as they arrive. 0: no
    cap (``referee serve`` sets one from its open-file limit: ``connection_budget``)."""
    handshake_timeout_ms: int = _limit(
        10_000,
        "a connection that has not finished its TLS and HTTP/2 handshakes by then is "
        "closed (default {default})",
        metavar="MS",
        positive=True,
        served=False,
    )
    """A connection that has not finished its TLS and HTTP/2 handshakes (the client's
    HTTP/2 settings received) this long after it opened is closed: a socket that sends
    nothing holds a descriptor for this long at most (gRPC's own default: 120 s)."""
    idle_timeout_ms: int = _limit(
        60_000,
        "a connection with no call open this long is closed; clients connect again "
        "when they next call (default {default}; 0: never)",
        metavar="MS",
        served=False,
    )
    """A connection with no call open this long is closed (HTTP/2 GOAWAY; a client
    connects again when it next calls); 0: never."""
    max_message_bytes: int = _limit(
        DEFAULT_MAX_MESSAGE_BYTES, "the largest message a client may send (default {default})"
    )
    """The largest message a client may send."""
    max_name_chars: int = _limit(100, flag=False, served=False)
    """Seat names (and the part of a bot's self-chosen name that is kept)."""
    max_reason_chars: int = _limit(500, flag=False, served=False)
    """A cancel reason."""
    max_options: int = _limit(32, flag=False, served=False)
    max_option_chars: int = _limit(100, flag=False, served=False)
    """Option overrides per match, and the length of each name and value."""
    max_seed_bytes: int = _limit(MAX_SEED_BYTES, flag=False, served=False)
    max_id_chars: int = _limit(64, flag=False, served=False)
    """Match ids, seat tokens and bot keys in requests (longer ones match nothing)."""

    def pb(self) -> match_service.ServerLimits:
        from referee.protocol import match_service

        return match_service.ServerLimits(
            **{limit.name: getattr(self, limit.name) for limit in LIMITS if limit.served}
        )


LIMITS: tuple[Limit, ...] = declared(ServerLimits, Limit)
"""Every limit, in the order ``referee serve --help`` shows them."""


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
