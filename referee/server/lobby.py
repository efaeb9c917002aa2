"""The lobby: remote bots connect once with a bot key and are seated as a schedule needs.

The organiser (a tournament) registers each remote bot's key under the bot's name, then
hands the lobby one ``Assignment`` per seat the bot must play. A connected bot gets the
assignment at once; a bot that is not connected gets it, and every other assignment
still running, as soon as it connects. The lobby only carries seat tokens: the bot plays
each seat over PlayService.Play like any other bot, so the match runner does not know
or care where a bot runs.

Everything here runs on the server's event loop; RPC handlers only read and write the
connection queues.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable

import structlog

from referee.protocol import (
    PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    common,
    lobby_service,
    lobby_service_grpc,
)
from referee.server.hellos import HelloGuard
from referee.server.rpc import HELLO_TIMEOUT_S, Context

log = structlog.get_logger("referee.lobby")


MAX_CONCURRENT_MATCHES = 64
"""The most matches one remote bot is seated in at once, whatever it asks for."""


Admit = Callable[[lobby_service.LobbyHello, str], "str | lobby_service.LobbyRefusal | None"]
"""``Lobby.admit``: (the hello, the peer) -> a registered bot's name, a refusal, or None."""


class LobbyError(ValueError):
    """A registration that cannot be made (a key or name used twice, an empty key)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Assignment:
    """One seat for a remote bot."""

    match_id: str
    seat: int
    token: str
    config: common.MatchConfig

    def message(self) -> lobby_service.ConnectResponse:
        return lobby_service.ConnectResponse(
            assignment=lobby_service.SeatAssignment(
                match_id=self.match_id, seat=self.seat, seat_token=self.token, config=self.config
            )
        )


class LobbyConnection:
    """One lobby stream: an outbox the RPC handler drains; None ends the stream."""

    def __init__(self, peer: str, capacity: int) -> None:
        self.peer = peer
        self.capacity = capacity
        self.outbox: asyncio.Queue[lobby_service.ConnectResponse | None] = asyncio.Queue()
        self.closed = False

    def send(self, msg: lobby_service.ConnectResponse) -> None:
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self, reason: str | None = None) -> None:
        if self.closed:
            return
        if reason is not None:
            self.send(
                lobby_service.ConnectResponse(closed=lobby_service.LobbyClosed(reason=reason))
            )
        self.closed = True
        self.outbox.put_nowait(None)


@dataclasses.dataclass
class RegisteredBot:
    """A registered remote bot and what it is playing."""

    name: str
    key: str
    max_matches: int
    """The organiser's limit on matches at once (0: only the bot's own limit)."""
    connection: LobbyConnection | None = None
    assignments: dict[str, Assignment] = dataclasses.field(default_factory=dict)
    absent_since: float = 0.0
    """Loop time when the bot was registered or last lost its connection."""
    connections: int = 0
    """How many times the bot has connected."""

    @property
    def capacity(self) -> int:
        return self.connection.capacity if self.connection is not None else 0

    @property
    def free(self) -> int:
        """Seats it can take now: 0 when not connected."""
        return max(0, self.capacity - len(self.assignments))


class Lobby:
    """Registered remote bots by key, their connections and their current assignments."""

    def __init__(self) -> None:
        self.tournament = ""
        self.open = True
        self._by_key: dict[str, RegisteredBot] = {}
        self._by_name: dict[str, RegisteredBot] = {}
        self._listeners: list[Callable[[], None]] = []
        self.admit: Admit | None = None
        """Asked about a hello whose key no registration has (a ladder looks the key up
        in its database, ``referee.ladder.play.lobby``): the name of the bot it registered
        for the hello, a refusal, or None (no bot has this key)."""

    # -- the organiser's side ----------------------------------------------------

    def register(self, name: str, key: str, max_matches: int = 0) -> RegisteredBot:
        if not key:
            raise LobbyError(f"remote bot {name!r} needs a key")
        if key in self._by_key or name in self._by_name:
            raise LobbyError(f"remote bot {name!r}: name or key already registered")
        bot = RegisteredBot(name, key, max_matches, absent_since=asyncio.get_running_loop().time())
        self._by_key[key] = bot
        self._by_name[name] = bot
        self.open = True
        return bot

    def bot(self, name: str) -> RegisteredBot:
        return self._by_name[name]

    def add_listener(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever a bot connects or disconnects."""
        self._listeners.append(callback)

    def assign(self, name: str, assignment: Assignment) -> None:
        """Seat the bot: sent now if it is connected, else as soon as it connects."""
        bot = self._by_name[name]
        bot.assignments[assignment.match_id] = assignment
        if bot.connection is not None:
            bot.connection.send(assignment.message())
        log.info(
            "seat assigned",
            bot=name,
            match_id=assignment.match_id,
            seat=assignment.seat,
            connected=bot.connection is not None,
        )

    def release(self, name: str, match_id: str) -> None:
        """The match is over: its seat no longer counts against the bot's capacity."""
        self._by_name[name].assignments.pop(match_id, None)
        self._notify()

    def close(self, reason: str) -> None:
        """No more assignments: close every stream and refuse new hellos."""
        self.open = False
        for bot in self._by_key.values():
            if bot.connection is not None:
                bot.connection.close(reason)
                bot.connection = None

    # -- the bot's side ----------------------------------------------------------

    def hello(
        self, hello: lobby_service.LobbyHello, peer: str
    ) -> tuple[RegisteredBot, LobbyConnection] | lobby_service.LobbyRefusal:
        """Admit a bot, or say why not. A second connection replaces the first."""
        if hello.protocol_version not in SUPPORTED_PROTOCOL_VERSIONS:
            return _refusal(
                lobby_service.LOBBY_REFUSAL_REASON_VERSION_NOT_SUPPORTED,
                f"protocol version {hello.protocol_version} is not supported",
            )
        bot = self._by_key.get(hello.bot_key)
        if bot is None and self.admit is not None:
            admitted = self.admit(hello, peer)
            if isinstance(admitted, lobby_service.LobbyRefusal):
                return admitted
            bot = self._by_name.get(admitted) if admitted else None
        if bot is None:
            return _refusal(lobby_service.LOBBY_REFUSAL_REASON_BAD_KEY, "no bot has this key")
        if not self.open:
            return _refusal(lobby_service.LOBBY_REFUSAL_REASON_CLOSED, "the lobby is closed")
        capacity = min(max(1, hello.max_concurrent_matches), MAX_CONCURRENT_MATCHES)
        if bot.max_matches:
            capacity = min(capacity, bot.max_matches)
        if bot.connection is not None:
            bot.connection.close("replaced by a new connection")
        connection = LobbyConnection(peer, capacity)
        bot.connection = connection
        bot.connections += 1
        connection.send(
            lobby_service.ConnectResponse(
                welcome=lobby_service.LobbyWelcome(
                    bot_name=bot.name,
                    protocol_version=PROTOCOL_VERSION,
                    max_concurrent_matches=capacity,
                    tournament=self.tournament,
                )
            )
        )
        for assignment in bot.assignments.values():
            connection.send(assignment.message())
        log.info("remote bot connected", bot=bot.name, peer=peer, capacity=capacity)
        self._notify()
        return bot, connection

    def gone(self, bot: RegisteredBot, connection: LobbyConnection) -> None:
        connection.close()
        if bot.connection is connection:
            bot.connection = None
            bot.absent_since = asyncio.get_running_loop().time()
            log.info("remote bot disconnected", bot=bot.name)
            self._notify()

    def _notify(self) -> None:
        for callback in self._listeners:
            callback()


def _refusal(
    reason: lobby_service.LobbyRefusalReason.ValueType, message: str
) -> lobby_service.LobbyRefusal:
    return lobby_service.LobbyRefusal(
        reason=reason, message=message, supported_versions=list(SUPPORTED_PROTOCOL_VERSIONS)
    )


class LobbyServicer(lobby_service_grpc.LobbyServiceServicer):
    def __init__(self, lobby: Lobby, hellos: HelloGuard | None = None) -> None:
        self.lobby = lobby
        self.hellos = hellos
        """Counts failed hellos per client address (shared with PlayService)."""

    async def Connect(
        self,
        request_iterator: AsyncIterator[lobby_service.ConnectRequest],
        context: Context,
    ) -> AsyncIterator[lobby_service.ConnectResponse]:
        try:
            first = await asyncio.wait_for(anext(request_iterator), HELLO_TIMEOUT_S)
        except (StopAsyncIteration, TimeoutError):
            return
        if first.WhichOneof("kind") != "hello":
            if self.hellos is not None:
                await self.hellos.failed_hello(context, "first lobby message not a hello")
            yield lobby_service.ConnectResponse(
                refusal=_refusal(
                    lobby_service.LOBBY_REFUSAL_REASON_HELLO_EXPECTED,
                    "the first message must be a LobbyHello",
                )
            )
            return
        admitted = self.lobby.hello(first.hello, context.peer())
        if isinstance(admitted, lobby_service.LobbyRefusal):
            if self.hellos is not None and (
                admitted.reason == lobby_service.LOBBY_REFUSAL_REASON_BAD_KEY
            ):
                await self.hellos.failed_hello(context, "bad bot key")
            yield lobby_service.ConnectResponse(refusal=admitted)
            return
        bot, connection = admitted
        reader = asyncio.create_task(self._read(request_iterator, bot, connection))
        try:
            while True:
                msg = await connection.outbox.get()
                if msg is None:
                    break
                yield msg
        finally:
            reader.cancel()
            self.lobby.gone(bot, connection)

    async def _read(
        self,
        requests: AsyncIterator[lobby_service.ConnectRequest],
        bot: RegisteredBot,
        connection: LobbyConnection,
    ) -> None:
        try:
            async for _ in requests:
                pass  # nothing but the hello is defined yet; later messages are ignored
        except asyncio.CancelledError:
            return
        except Exception:  # a broken stream: the bot is gone
            log.info("lobby stream broken", bot=bot.name)
        self.lobby.gone(bot, connection)
