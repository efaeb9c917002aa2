"""Remote bots on a ladder: a team's bot joins the lobby with the team's API key while it
is online, and plays the matches made for it there.

The lobby is the referee's (``referee.server.lobby``); a ladder answers the hellos whose
key no registration holds (``Lobby.admit``): the key is a team's API key, checked against
its hash behind the ``KeyGuard`` (refusals counted per address, throttled, logged), and
``LobbyHello.bot_name`` names the team's bot. Its first connection makes the bot and a
pending remote version (it counts as an upload), validated by a match like an uploaded
one while it is online; later connections play as that version. A bot of the team that
is an uploaded one cannot be joined as remote.

A remote bot is not sandboxed: it could remember a deal. Its groups are one match each
(``LadderConfig.seatings_per_group``), so it never sees a deal twice. Its matches are
played by the process that holds the lobby (``referee ladder run`` with ``[lobby]
address``), only while it is connected; the matchmaker takes its queued matches off the
queue after it has been away ``[lobby] wait_s``.
"""

from __future__ import annotations

import ipaddress
import secrets

import structlog

from referee.ladder.errors import KeyRefused, LadderError, TooManyGuesses
from referee.ladder.storage.keys import KeyGuard
from referee.ladder.storage.records import TeamLimits
from referee.ladder.storage.store import LadderStore, check_name
from referee.protocol import lobby_service
from referee.server.lobby import Lobby
from referee.service.rates import peer_host
from referee.text import printable

log = structlog.get_logger("referee.ladder.lobby")

MAX_MATCHES_AT_ONCE = 4
"""Matches one remote version plays at once on a ladder, whatever it offers."""


def _refusal(
    reason: lobby_service.LobbyRefusalReason.ValueType, message: str
) -> lobby_service.LobbyRefusal:
    return lobby_service.LobbyRefusal(reason=reason, message=message[:500])


def _loopback(host: str) -> bool:
    """``ipv4:127.0.0.1``, ``ipv6:[::1]`` (a gRPC peer's host): this machine."""
    text = host.removeprefix("ipv4:").removeprefix("ipv6:").strip("[]").split("%")[0]
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


class LadderLobby:
    """The ladder's side of a referee's lobby: who may join, and who is online."""

    def __init__(
        self,
        store: LadderStore,
        lobby: Lobby,
        guard: KeyGuard,
        limits: TeamLimits,
        *,
        insecure: bool = False,
    ) -> None:
        """``insecure``: accept keys from other machines, which the lobby (no TLS) gets
        in clear; only through a tunnel that encrypts (``[lobby] insecure``)."""
        self.store = store
        self.insecure = insecure
        self.lobby = lobby
        self.guard = guard
        self.limits = limits
        self.names: dict[int, str] = {}
        """Remote version id -> its bot's name in the lobby."""
        lobby.admit = self.admit

    def admit(
        self, hello: lobby_service.LobbyHello, peer: str
    ) -> str | lobby_service.LobbyRefusal | None:
        address = peer_host(peer)
        if not self.insecure and not _loopback(address):
            return _refusal(
                lobby_service.LOBBY_REFUSAL_REASON_BAD_KEY,
                "this ladder's lobby takes keys from its own machine only (no TLS): "
                "reach it through a tunnel, or ask the organiser",
            )
        try:
            team = self.guard.authenticate(self.store.team_by_key, hello.bot_key, address)
        except TooManyGuesses as exc:
            return _refusal(lobby_service.LOBBY_REFUSAL_REASON_BAD_KEY, str(exc))
        except KeyRefused:
            return None
        bot = hello.bot_name.strip()
        try:
            check_name("bot", bot)
            version = self.store.remote_version(team.name, bot, self.limits)
        except LadderError as exc:
            log.info("remote bot refused", team=team.name, bot=printable(bot[:60]), why=str(exc))
            return _refusal(lobby_service.LOBBY_REFUSAL_REASON_UNSPECIFIED, str(exc))
        name = version.label
        try:
            self.lobby.bot(name)
        except KeyError:  # its first connection since the ladder started
            self.lobby.register(name, secrets.token_hex(32), MAX_MATCHES_AT_ONCE)
        self.names[version.id] = name
        log.info("remote bot admitted", version=name, address=address)
        return name

    def online(self) -> dict[int, int]:
        """Remote versions connected now -> seats they can take now."""
        out = {}
        for version_id, name in self.names.items():
            bot = self.lobby.bot(name)
            if bot.connection is not None:
                out[version_id] = bot.free
        return out


__all__ = ["MAX_MATCHES_AT_ONCE", "LadderLobby"]
