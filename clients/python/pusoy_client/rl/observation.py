"""The observation: what one seat knows, as one fixed vector of small integers (int8).

One encoder for every place a policy meets the game: the referee's environments
(``referee.rl``) and a bot playing over gRPC (``pusoy_client.rl.SeatEncoder``) both make
``SeatFacts`` and call ``Encoder.encode``, so a policy trained in the environment acts on
the same numbers live. Nothing here reads a clock: the time left is no part of an
observation, so observations are the same live and in simulation. Layout (docs/rl.md):

=========  ====  ==============================================================
offset     size  what
=========  ====  ==============================================================
0          52    the seat's cards now (card planes: see below)
52         208   cards played this hand by each seat, relative order (me, next, ...)
260        52    every card played this hand (the referee's ``played_cards``)
312        52    the play to beat (empty on a fresh lead)
364        221   the 13 positions of the action index: per position, its card's
                 rank (13 one-hot) and suit strength (4 one-hot)
585        13    per position, whether its card is still held
598        4     cards left per seat (0..13), relative order
602        4     match totals before this hand, relative, clipped to -128..127
606        4     hands won, relative, clipped to 127
610        1     the hand's number (clipped to 127)
611        4     who made the play to beat (one-hot, relative; none on a lead)
615        4     who passed since the last play (relative)
619        4     who is locked out of the trick (``pass_locks_out``; relative)
623        8     the kind of the play to beat (single ... straight flush)
631        4     a fresh lead; the opening card must be played; a revolution is in
                 force; the lone-2 restriction is in force
635        4     the seat's own number (one-hot, absolute: seat 0's tie-break)
639        19    the options in force (``RULE_FEATURES``)
=========  ====  ==============================================================

A card plane has 52 entries in the profile's normal card order: entry ``rank * 4 + k``
is the card of that rank (3 .. 2) whose suit is the k-th weakest under the suit order,
so entry 0 is the deck's lowest card (3♣ or 3♦) and 51 its highest. "Relative order"
is the turn order starting at the observing seat: me, the seat after me, and so on.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from pusoy_client.rl.index import HAND_SIZE, HandIndex, card_strength
from pusoy_client.rules import SUIT_RANKS

KINDS = (
    "single",
    "pair",
    "triple",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
)
"""Kinds of plays, in the order of their one-hot entries (the protocol's Combination - 1)."""

CARD_PLANES = 7
PLANE = 52
POS_BASE = CARD_PLANES * PLANE  # 364
POS_WIDTH = 17
HELD = POS_BASE + HAND_SIZE * POS_WIDTH  # 585
COUNTS = HELD + HAND_SIZE  # 598
TOTALS = COUNTS + 4
HANDS_WON = TOTALS + 4
HAND_NUMBER = HANDS_WON + 4
TABLE_SEAT = HAND_NUMBER + 1
PASSED = TABLE_SEAT + 4
LOCKED = PASSED + 4
KIND = LOCKED + 4
FLAGS = KIND + 8
SEAT = FLAGS + 4
RULES = SEAT + 4

RULE_FEATURES = (
    "suit_order=diamonds-low",
    "direction=counterclockwise",
    "first_lead=opening-card-every-hand",
    "pass_locks_out",
    "five_card_categories=locked",
    "straights=wrap-high",
    "straights=none-with-two",
    "straights=wrap-low",
    "five_card_hands",
    "lowest_straight_beats_straights",
    "no_finish_on_lone_two",
    "revolution",
    "bomb",
    "teams",
    "scoring=chips",
    "tie_break=hands-won-then-seat",
    "match_end=hands",
    "match_end value (clipped to 127)",
    "multiplier_from",
)
"""The options' entries, in order: 1 when the option has that value (or is on)."""

OBS_SIZE = RULES + len(RULE_FEATURES)  # 658

OBS_LOW = np.zeros(OBS_SIZE, dtype=np.int8)
OBS_HIGH = np.ones(OBS_SIZE, dtype=np.int8)
OBS_HIGH[COUNTS : COUNTS + 4] = HAND_SIZE
OBS_LOW[TOTALS : TOTALS + 4] = -128
OBS_HIGH[TOTALS : TOTALS + 4] = 127
OBS_HIGH[HANDS_WON : HANDS_WON + 4] = 127
OBS_HIGH[HAND_NUMBER] = 127
OBS_HIGH[RULES + 17] = 127
OBS_HIGH[RULES + 18] = HAND_SIZE
"""Bounds of every entry (for a ``Box`` space)."""


class SeatFacts(NamedTuple):
    """Everything one seat knows at one moment; seats are absolute (0..3) here, the
    encoder puts them in relative order."""

    seat: int
    dealt: HandIndex
    """The seat's dealt hand (the action index's positions)."""
    hand: int
    """Card mask of the seat's cards now."""
    played: Sequence[int]
    """Card masks of the cards each seat played this hand (seats 0..3)."""
    played_all: int
    counts: Sequence[int]
    table: int
    """Card mask of the play to beat; 0 on a fresh lead."""
    table_kind: int
    """Index in ``KINDS``; -1 on a fresh lead."""
    table_seat: int
    """-1 on a fresh lead."""
    passed: int
    """Bit s: seat s passed since the last play (or since the trick began)."""
    locked: int
    """Bit s: seat s is locked out of the trick."""
    must_include: bool
    revolution: bool
    lone_two_rule: bool
    hand_number: int
    totals: Sequence[int]
    hands_won: Sequence[int]
    held: int = -1
    """The positions (13-bit mask) of ``hand``'s cards, when the caller keeps them; -1:
    worked out from ``hand``."""


def _option(options: Mapping[str, Any], name: str, default: Any) -> Any:
    value = options.get(name, default)
    return default if value in ("", None) else value


def rule_features(options: Mapping[str, Any]) -> list[int]:
    """The options' entries from option values by name: ``Rules.options()`` on the
    referee's side, the fields of ``Welcome.config.rules`` on a bot's."""
    end = str(_option(options, "match_end", "hands 10")).split()
    try:
        end_value = int(end[1]) if len(end) == 2 else 0
    except ValueError:
        end_value = 0
    straights = str(_option(options, "straights", "wrap-high"))
    return [
        int(_option(options, "suit_order", "clubs-low") == "diamonds-low"),
        int(_option(options, "direction", "clockwise") == "counterclockwise"),
        int(_option(options, "first_lead", "") == "opening-card-every-hand"),
        int(bool(options.get("pass_locks_out", False))),
        int(_option(options, "five_card_categories", "ranked") == "locked"),
        int(straights == "wrap-high"),
        int(straights == "none-with-two"),
        int(straights == "wrap-low"),
        int(bool(options.get("five_card_hands", True))),
        int(bool(options.get("lowest_straight_beats_straights", False))),
        int(bool(options.get("no_finish_on_lone_two", False))),
        int(bool(options.get("revolution", False))),
        int(bool(options.get("bomb", False))),
        int(bool(options.get("teams", False))),
        int(_option(options, "scoring", "penalty") == "chips"),
        int(_option(options, "tie_break", "shared") == "hands-won-then-seat"),
        int(end[0] == "hands" if end else 0),
        min(127, max(0, end_value)),
        min(HAND_SIZE, max(0, int(_option(options, "multiplier_from", 10)))),
    ]


_HELD = tuple(bytes(m >> p & 1 for p in range(HAND_SIZE)) for m in range(1 << HAND_SIZE))
_PACK13 = struct.Struct("13b").pack
"""Cards left, totals and hands won (4 each, relative) and the hand's number."""
_KIND_FLAGS = tuple(
    tuple(
        bytes(int(i == kind) for i in range(8)) + bytes(flags >> b & 1 for b in range(4))
        for flags in range(16)
    )
    for kind in range(-1, 8)
)
"""``[kind + 1][flags]``: the play's kind one-hot and the four flags."""


def _clip(v: int, low: int = -128) -> int:
    return min(127, max(low, v))


def _plane_tables(suit_order: str) -> tuple[list[bytes], list[bytes]]:
    """For 16 bits of a card mask (four ranks), the 16 plane bytes in card order; and
    for the last 4 bits (the 2s), their 4 bytes."""
    strength = SUIT_RANKS[suit_order]
    nibble = []
    for m in range(16):
        out = bytearray(4)
        for suit in range(4):
            if m >> suit & 1:
                out[strength[suit]] = 1
        nibble.append(bytes(out))
    chunks = [
        nibble[m & 15] + nibble[m >> 4 & 15] + nibble[m >> 8 & 15] + nibble[m >> 12]
        for m in range(1 << 16)
    ]
    return chunks, nibble


class _Tables:
    """What an encoder looks up, for one suit order and turn order."""

    def __init__(self, suit_order: str, relative: tuple[tuple[int, ...], ...]) -> None:
        order = sorted(range(52), key=lambda c: card_strength(c, suit_order))
        self.perm: npt.NDArray[np.intp] | None = (
            None if order == list(range(52)) else np.array(order, dtype=np.intp)
        )
        """The physical card at each place of a plane (for numpy's unpacked bits)."""
        self.card_block = tuple(
            bytes(int(i == c >> 2) for i in range(13))
            + bytes(int(i == card_strength(c, suit_order) & 3) for i in range(4))
            for c in range(52)
        )
        """A card's entries in the position block: its rank and its suit's strength."""
        # Per seat: who made the play to beat (-1: nobody), who passed and who is locked
        # out (4-bit sets of absolute seats) as the 12 bytes of the relative order.
        rel = relative
        four = [[bytes(m >> rel[s][k] & 1 for k in range(4)) for m in range(16)] for s in range(4)]
        self.trick = tuple(
            tuple(
                four[s][(1 << ts) if ts >= 0 else 0] + four[s][passed] + four[s][locked]
                for ts in range(-1, 4)
                for passed in range(16)
                for locked in range(16)
            )
            for s in range(4)
        )


class Encoder:
    """Observations for one match's rules: ``encode`` one seat, ``encode_batch`` many.

    Built as bytes and viewed by numpy once: a numpy call costs about a microsecond,
    and an observation has some forty small parts, so filling an array part by part
    would cost several times the rules engine's whole turn.

    >>> enc = Encoder({"suit_order": "diamonds-low", "direction": "counterclockwise"})
    >>> enc.size, enc.relative(0)
    (658, (0, 3, 2, 1))
    """

    _planes: ClassVar[dict[str, tuple[list[bytes], list[bytes]]]] = {}
    """The plane tables of each suit order, made once per process (65,536 entries)."""
    _made: ClassVar[dict[tuple[str, int], _Tables]] = {}
    """The other tables of each suit order and direction (``referee dataset`` makes an
    encoder per log)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.suit_order = str(_option(options, "suit_order", "clubs-low"))
        if self.suit_order not in SUIT_RANKS:
            raise ValueError(f"unknown suit order {self.suit_order!r}")
        step = 3 if _option(options, "direction", "clockwise") == "counterclockwise" else 1
        self._relative = tuple(tuple((s + k * step) % 4 for k in range(4)) for s in range(4))
        features = rule_features(options)
        self.rules = np.array(features, dtype=np.int8)
        self._rules = bytes(features)
        self.size = OBS_SIZE
        tables = Encoder._planes.get(self.suit_order)
        if tables is None:
            tables = Encoder._planes[self.suit_order] = _plane_tables(self.suit_order)
        self._chunks, self._twos = tables
        self._plane_memo: dict[int, bytes] = {}
        """Card planes of masks seen lately: most of an observation's planes are the
        same as in the seat's previous one."""
        made = Encoder._made.get((self.suit_order, step))
        if made is None:
            made = Encoder._made[(self.suit_order, step)] = _Tables(self.suit_order, self._relative)
        self._perm, self._card_block, self._trick = made.perm, made.card_block, made.trick
        self._tail = tuple(bytes(int(i == s) for i in range(4)) + self._rules for s in range(4))

    def relative(self, seat: int) -> tuple[int, int, int, int]:
        """The seats in turn order from ``seat``: the order of every per-seat entry."""
        r = self._relative[seat]
        return r[0], r[1], r[2], r[3]

    def _plane(self, m: int) -> bytes:
        """A card plane, made and remembered (``_row`` looks in the memory first)."""
        c = self._chunks
        plane = c[m & 0xFFFF] + c[m >> 16 & 0xFFFF] + c[m >> 32 & 0xFFFF] + self._twos[m >> 48]
        memo = self._plane_memo
        if len(memo) >= 1 << 16:
            memo.clear()
        memo[m] = plane
        return plane

    def _positions(self, dealt: HandIndex) -> bytes:
        """The position block of a dealt hand (kept with the hand: it does not change)."""
        block = dealt.memo
        if block is None:
            block = dealt.memo = b"".join([self._card_block[c] for c in dealt.cards]).ljust(
                HAND_SIZE * POS_WIDTH, b"\0"
            )
        return block

    def _rest(self, f: SeatFacts) -> tuple[int, int, int, int, int, int, int, bytes]:
        """The seven card masks of the planes (relative order), and every entry after."""
        (seat, dealt, hand, played, played_all, counts, table, kind, table_seat, passed, locked,
         must, revolution, lone_two, hand_number, totals, won, held) = f  # fmt: skip
        r0, r1, r2, r3 = self._relative[seat]
        numbers = (
            counts[r0], counts[r1], counts[r2], counts[r3],
            totals[r0], totals[r1], totals[r2], totals[r3],
            won[r0], won[r1], won[r2], won[r3], hand_number,
        )  # fmt: skip
        try:
            packed = _PACK13(*numbers)
        except struct.error:  # a total or a count of hands past int8: clipped
            packed = _PACK13(*(_clip(v, -128 if 4 <= i < 8 else 0) for i, v in enumerate(numbers)))
        rest = b"".join(
            (
                dealt.memo or self._positions(dealt),
                _HELD[held if held >= 0 else dealt.held_positions(hand)],
                packed,
                self._trick[seat][(table_seat + 1) << 8 | passed << 4 | locked],
                _KIND_FLAGS[kind + 1][(not table) | must << 1 | revolution << 2 | lone_two << 3],
                self._tail[seat],
            )
        )
        return hand, played[r0], played[r1], played[r2], played[r3], played_all, table, rest

    def _row(self, f: SeatFacts) -> bytes:
        *masks, rest = self._rest(f)
        known = self._plane_memo.get  # most planes are as in the seat's last observation
        plane = self._plane
        return b"".join([*(known(m) or plane(m) for m in masks), rest])

    def encode(self, facts: SeatFacts) -> npt.NDArray[np.int8]:
        """The observation of one seat (a new array)."""
        return np.frombuffer(bytearray(self._row(facts)), dtype=np.int8)

    def encode_batch(
        self, batch: Sequence[SeatFacts], out: npt.NDArray[np.int8] | None = None
    ) -> npt.NDArray[np.int8]:
        """The observations of several seats, one row each (into ``out`` when given).

        The card planes of all rows are unpacked by numpy at once: per row, that costs
        less than making them as bytes, past a few rows."""
        n = len(batch)
        if out is None:
            out = np.empty((n, OBS_SIZE), dtype=np.int8)
        if n < 8:
            out[:n] = np.frombuffer(b"".join([self._row(f) for f in batch]), np.int8).reshape(
                n, OBS_SIZE
            )
            return out
        masks: list[int] = []
        rests: list[bytes] = []
        rest_of = self._rest
        for f in batch:
            parts = rest_of(f)
            masks += parts[:7]
            rests.append(parts[7])
        bits = np.unpackbits(
            np.array(masks, dtype=np.uint64).view(np.uint8).reshape(n * CARD_PLANES, 8),
            axis=1,
            count=PLANE,
            bitorder="little",
        )
        if self._perm is not None:
            bits = bits[:, self._perm]
        out[:n, :POS_BASE] = bits.reshape(n, POS_BASE)
        out[:n, POS_BASE:] = np.frombuffer(b"".join(rests), np.int8).reshape(n, -1)
        return out


def decode_cards(observation: npt.NDArray[np.int8], plane: int, suit_order: str) -> list[int]:
    """The card numbers set in one card plane of an observation (0: the seat's cards,
    1..4: played by each seat in relative order, 5: every card played, 6: the table)."""
    order = sorted(range(52), key=lambda c: card_strength(c, suit_order))
    row = observation[plane * PLANE : (plane + 1) * PLANE]
    return sorted(order[i] for i in np.flatnonzero(row))


__all__ = [
    "KINDS",
    "OBS_HIGH",
    "OBS_LOW",
    "OBS_SIZE",
    "RULE_FEATURES",
    "Encoder",
    "SeatFacts",
    "decode_cards",
    "rule_features",
]
