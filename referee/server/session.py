"""A seat's connection and the commands RPC handlers send to a match runner.

Handlers never change a match; they only build these values and queue them.
"""

from __future__ import annotations

import asyncio
import dataclasses

from referee.protocol import play_service


class Session:
    """One bot stream: an outbox the RPC handler drains; None ends the stream."""

    def __init__(self, peer: str = "") -> None:
        self.peer = peer
        self.outbox: asyncio.Queue[play_service.PlayResponse | None] = asyncio.Queue()
        self.seat: int | None = None
        self.closed = False

    def send(self, msg: play_service.PlayResponse) -> None:
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)


@dataclasses.dataclass
class HelloCmd:
    session: Session
    hello: play_service.Hello
    seat: int


@dataclasses.dataclass
class ActionCmd:
    session: Session
    action: play_service.Action
    received: float


@dataclasses.dataclass
class GoneCmd:
    session: Session
    cause: str


@dataclasses.dataclass
class CancelCmd:
    reason: str


Command = HelloCmd | ActionCmd | GoneCmd | CancelCmd


class MatchCancelled(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclasses.dataclass
class SeatSlot:
    seat: int
    name: str
    token: str
    bank_ms: int
    session: Session | None = None
    ever_connected: bool = False
    want_legal_plays: bool = False
    strikes: int = 0
    benched: bool = False
    last_prompt: int = 0
    prompts: int = 0
    out_of_turn: int = 0
    """Actions that answered no prompt since this seat's last prompt."""
    drilled: bool = False
    disconnected_at: float | None = None


@dataclasses.dataclass
class Turn:
    """The prompt in force: which seat, which id, when it was sent."""

    turn_id: int
    seat: int
    started: float
    deadline: float
    rejections: int = 0
