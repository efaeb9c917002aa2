"""What a model may answer, read tolerantly: a play or a pass, and how it was found.

Models write around their answer (reasoning, apologies, Markdown), so the parser looks
for three forms, the last one written winning within each, in this order:

1. a JSON object: ``{"play": ["3D", "3S"]}``, ``{"play": "3D 3S"}`` or ``{"pass": true}``
   (``{"play": "pass"}`` and ``{"play": []}`` pass too);
2. a ``Final Answer:`` line: ``Final Answer: 3D 3S`` or ``Final Answer: pass``;
3. a bracketed play: ``[3D 3S]`` or ``[pass]``.

Cards may come in any order and case, with ``10`` for ``T`` and the suit symbols
(``10♥``). Legality is not judged here: an answer that names cards is sent to the
referee, whose verdict (and its reason) goes back to the model. Nothing here trusts the
text: it is bounded (``MAX_ANSWER_CHARS``) before any search.
"""

from __future__ import annotations

import dataclasses
import json
import re

MAX_ANSWER_CHARS = 20_000
"""Only the last this many characters of an answer are read (the answer comes last)."""
MAX_CARDS = 13

_SUITS = {"♣": "C", "♧": "C", "♠": "S", "♤": "S", "♥": "H", "♡": "H", "♦": "D", "♢": "D"}
_CARD = re.compile(r"(?<![A-Za-z0-9])(10|[2-9TJQKA])\s?([CDHS♣♧♠♤♥♡♦♢])(?![A-Za-z0-9])", re.I)
_FINAL = re.compile(r"final\s+answer\s*[:：]\s*(.+)", re.I)
_BRACKET = re.compile(r"\[([^\[\]{}]{1,200})\]")
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_PASS = re.compile(r"^\W*pass\W*$", re.I)


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    """A play (``cards``, canonical names in the order written) or a pass (None), and the
    form it was read from: ``json``, ``final-answer`` or ``bracket``."""

    cards: tuple[str, ...] | None
    path: str

    @property
    def is_pass(self) -> bool:
        return self.cards is None

    def text(self) -> str:
        return "pass" if self.cards is None else " ".join(self.cards)


class ParseFault(ValueError):
    """No play or pass could be read from the answer; the message says why, for the
    model's next attempt."""


def card_names(text: str) -> tuple[str, ...]:
    """Every card named in ``text``, canonical (``10♥`` -> ``TH``), in order.

    >>> card_names("10♥, 3d and q♠")
    ('TH', '3D', 'QS')
    """
    out = []
    for rank, suit in _CARD.findall(text):
        rank = "T" if rank == "10" else rank.upper()
        out.append(rank + _SUITS.get(suit, suit.upper()))
    return tuple(out)


def strip_reasoning(text: str) -> tuple[str, str]:
    """The answer without ``<think>…</think>`` blocks, and the reasoning they held."""
    thoughts = [m.group(0)[7:-8].strip() for m in _THINK.finditer(text)]
    return _THINK.sub(" ", text), "\n".join(t for t in thoughts if t)


def _from_words(words: str, path: str) -> Answer | None:
    if _PASS.match(words):
        return Answer(None, path)
    cards = card_names(words)
    if not cards:
        return None
    if len(cards) > MAX_CARDS:
        raise ParseFault(f"{len(cards)} cards named: a play has at most 5")
    return Answer(cards, path)


def _from_json(value: object) -> Answer | None:
    if not isinstance(value, dict):
        return None
    if value.get("pass") is True:
        return Answer(None, "json")
    play = value.get("play", value.get("cards"))
    if isinstance(play, str):
        return _from_words(play, "json") or (
            Answer(None, "json") if play.strip().lower() == "pass" else None
        )
    if isinstance(play, list) and all(isinstance(c, str) for c in play):
        if not play:
            return Answer(None, "json")
        return _from_words(" ".join(play), "json")
    return None


def _json_objects(text: str) -> list[object]:
    """Every JSON object in ``text`` (each ``{`` tried as a start), in order."""
    decoder = json.JSONDecoder()
    found: list[object] = []
    i = text.find("{")
    while i != -1 and len(found) < 100:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        found.append(value)
        i = text.find("{", end)
    return found


def parse_answer(text: str) -> Answer:
    """The play or pass ``text`` gives; ParseFault when it gives none.

    >>> parse_answer('I will lead low. {"play": ["3s", "3D"]}')
    Answer(cards=('3S', '3D'), path='json')
    >>> parse_answer("Thinking... Final Answer: pass")
    Answer(cards=None, path='final-answer')
    >>> parse_answer("My move is [10♥ 10♠].")
    Answer(cards=('TH', 'TS'), path='bracket')
    """
    text, _ = strip_reasoning(text[-MAX_ANSWER_CHARS:])
    if not text.strip():
        raise ParseFault("the answer was empty")
    for value in reversed(_json_objects(text)):
        answer = _from_json(value)
        if answer is not None:
            return answer
    finals = _FINAL.findall(text)
    if finals:
        answer = _from_words(finals[-1].strip().strip("`*").strip(), "final-answer")
        if answer is not None:
            return answer
    for group in reversed(_BRACKET.findall(text)):
        answer = _from_words(group.strip().strip("\"'"), "bracket")
        if answer is not None:
            return answer
    raise ParseFault(
        'no play found: answer with JSON, {"play": ["3D", "3S"]} or {"pass": true}, or a '
        'last line "Final Answer: 3D 3S"'
    )


def move_schema(plays: list[list[str]], can_pass: bool) -> dict[str, object]:
    """A JSON schema whose only instances are the legal moves, for endpoints that
    constrain their output to one (structured output).

    >>> move_schema([["3C"]], False)["anyOf"][0]["properties"]
    {'play': {'enum': [['3C']]}}
    """
    options: list[dict[str, object]] = []
    if plays:
        options.append(
            {
                "type": "object",
                "properties": {"play": {"enum": plays}},
                "required": ["play"],
                "additionalProperties": False,
            }
        )
    if can_pass or not plays:
        options.append(
            {
                "type": "object",
                "properties": {"pass": {"const": True}},
                "required": ["pass"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": options}


CARD_NAMES = tuple(r + s for r in "3456789TJQKA2" for s in "CSHD")


def format_schema() -> dict[str, object]:
    """A JSON schema of a well-formed move, legal or not: one to five card names, or a
    pass. Constrains the answer's form and leaves the move to the model (the referee
    judges it).

    >>> format_schema()["anyOf"][0]["properties"]["play"]["maxItems"]
    5
    """
    play = {"type": "array", "items": {"enum": list(CARD_NAMES)}, "minItems": 1, "maxItems": 5}
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"play": play},
                "required": ["play"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"pass": {"const": True}},
                "required": ["pass"],
                "additionalProperties": False,
            },
        ]
    }
