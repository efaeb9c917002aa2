"""The stdio line protocol, without I/O: what a bot reads, what it may write, whose turn.

To the bot, each line is one ``PlayResponse`` of the gRPC stream in the protobuf JSON
mapping (proto field names, compact, UTF-8), so it is a JSON object with exactly one key,
the message's kind::

    >>> from referee.protocol import play_service
    >>> encode(play_service.PlayResponse(result=play_service.ActionResult(turn_id=6)))
    b'{"result":{"turn_id":"6"}}\\n'

From the bot, each line is one answer: cards or ``pass`` as text, the cards as a JSON
list, or an ``Action`` in JSON (also wrapped as a ``PlayRequest``, ``{"action": ...}``)::

    >>> parse_answer(b"5D 5C")
    Answer(cards=('5D', '5C'), turn_id=0, malformed='')
    >>> parse_answer(b"PASS\\r")
    Answer(cards=None, turn_id=0, malformed='')
    >>> parse_answer(b'["5D", "5C"]')
    Answer(cards=('5D', '5C'), turn_id=0, malformed='')
    >>> parse_answer(b'{"action": {"turn_id": "6", "play": {"cards": ["5D"]}}}')
    Answer(cards=('5D',), turn_id=6, malformed='')

A line that is neither becomes an action with neither a play nor a pass, which the
referee rejects as ``MALFORMED_ACTION``; the reason stays with the bridge (its stderr)::

    >>> parse_answer(b"{oops").malformed
    'not JSON (Expecting property name enclosed in double quotes at column 2)'

Every other verdict (unreadable cards, an empty play, cards not held, a stale turn) is
the referee's, exactly as for a gRPC bot.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from referee.protocol import common, play_service

PASS_WORD = "pass"
_SEPARATORS = re.compile(r"[\s,]+")


def encode(message: Message) -> bytes:
    """One line for the bot: compact JSON with proto field names, ending in a newline."""
    data = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """What one line from the bot says."""

    cards: tuple[str, ...] | None
    """The cards to play; None for a pass (or for a malformed line)."""
    turn_id: int = 0
    """The turn the bot named (JSON form only); 0 when it left the turn to the bridge."""
    malformed: str = ""
    """Why the line is no answer at all; empty for a real answer."""

    def action(self, turn_id: int) -> play_service.Action:
        """The Action sent to the referee, for ``turn_id`` unless the bot named its own."""
        action = play_service.Action(turn_id=self.turn_id or turn_id)
        if self.malformed:
            return action  # neither play nor pass: MALFORMED_ACTION
        if self.cards is None:
            getattr(action, "pass").SetInParent()
        else:
            action.play.CopyFrom(common.Cards(cards=list(self.cards)))
        return action


def malformed(reason: str) -> Answer:
    return Answer(cards=None, malformed=reason)


def parse_answer(line: bytes) -> Answer:
    """Read one line the bot wrote (without its newline)."""
    try:
        text = line.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        return malformed(f"not UTF-8 text (byte {exc.start})")
    if text.startswith(("{", "[")):
        return _parse_json(text)
    if text.lower() == PASS_WORD:
        return Answer(cards=None)
    # An empty line is an empty play: the referee answers EMPTY_PLAY.
    return Answer(cards=tuple(w for w in _SEPARATORS.split(text) if w))


def _parse_json(text: str) -> Answer:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return malformed(f"not JSON ({exc.msg} at column {exc.colno})")
    if isinstance(data, list):
        if not all(isinstance(c, str) for c in data):
            return malformed("a JSON list answer must hold card strings only")
        return Answer(cards=tuple(data))
    if isinstance(data, dict) and list(data) == ["action"]:
        data = data["action"]
    if not isinstance(data, dict):
        return malformed("a JSON answer must be an Action object or a list of cards")
    try:
        action = json_format.ParseDict(data, play_service.Action())
    except json_format.ParseError as exc:
        return malformed(f"not an Action ({exc})")
    kind = action.WhichOneof("kind")
    if kind is None:
        return malformed("the Action has neither a play nor a pass")
    cards = tuple(action.play.cards) if kind == "play" else None
    return Answer(cards=cards, turn_id=action.turn_id)


class Owed:
    """The turns the bot owes an answer for, oldest first.

    A stdio bot reads its lines in order and answers each prompt, and each rejection of
    its current turn that leaves attempts, with one line. So a line without a turn id
    answers the oldest turn still owed: a bot that falls behind gets its late answers
    judged against the turns they were meant for (stale, and so rejected) instead of
    having them taken for a later turn. A line that answers nothing owed is sent for the
    latest prompt, and the referee judges it.

    >>> owed = Owed()
    >>> owed.prompted(6); owed.prompted(10)
    >>> owed.take(), owed.take()
    (6, 10)
    >>> owed.sent(10); owed.judged(10, accepted=False, attempts_left=2); owed.take()
    10

    A rejection asks for another answer only if the bot has not sent one already: a bot
    that sends a second guess before reading the rejection of its first stays in step.

    >>> owed.sent(10); owed.sent(10); owed.judged(10, accepted=False, attempts_left=1)
    >>> len(owed)
    0

    A turn prompted on a stream that has since been lost was closed by the referee when
    the stream went (a default action), so an answer to it is not worth sending:
    ``take`` returns ``-turn_id`` for it.

    >>> owed.prompted(14); owed.new_stream(); owed.take()
    -14
    """

    def __init__(self, limit: int = 64) -> None:
        self._turns: collections.deque[tuple[int, int]] = collections.deque(maxlen=limit)
        self._stream = 0
        self._sent = 0
        """Answers sent for the latest prompt's turn."""
        self._judged = 0
        """Results received for the latest prompt's turn."""
        self.latest = 0
        """The turn id of the latest prompt."""

    def new_stream(self) -> None:
        """The stream to the referee was opened again: what it owed so far is lost."""
        self._stream += 1

    def prompted(self, turn_id: int) -> None:
        self.latest = turn_id
        self._sent = self._judged = 0
        self._turns.append((turn_id, self._stream))

    def take(self) -> int:
        """The turn a line without a turn id answers; negative for a lost one."""
        if not self._turns:
            return self.latest
        turn_id, stream = self._turns.popleft()
        return turn_id if stream == self._stream else -turn_id

    def sent(self, turn_id: int) -> None:
        """An answer for ``turn_id`` went to the referee."""
        if turn_id == self.latest:
            self._sent += 1

    def judged(self, turn_id: int, *, accepted: bool, attempts_left: int) -> None:
        """A result came: a rejection of the current turn with attempts left, and no
        answer of the bot's still unjudged, asks for another answer."""
        if turn_id != self.latest:
            return
        self._judged += 1
        if not accepted and attempts_left > 0 and self._sent <= self._judged:
            self._turns.append((turn_id, self._stream))

    def answered(self, turn_id: int) -> None:
        """The bot named ``turn_id`` itself: it owes nothing up to that turn any more."""
        while self._turns and self._turns[0][0] <= turn_id:
            self._turns.popleft()

    def __len__(self) -> int:
        return len(self._turns)


__all__ = ["PASS_WORD", "Answer", "Owed", "encode", "parse_answer"]
