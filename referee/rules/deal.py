"""Deals from a seed, by an algorithm any language can reproduce (docs/deals.md).

1. The stream: block ``i`` (i = 0, 1, 2, …) is
   ``SHA-256("pusoy-referee/deal/v1" || len(seed) as 4 bytes big-endian || seed ||
   hand number as 4 bytes big-endian || i as 4 bytes big-endian)``, where ``seed`` is
   the seed's UTF-8 bytes and the hand number counts from 1. Each block gives eight
   32-bit big-endian unsigned integers, read in order.
2. The deck starts in card order of ids 0..51 (``rank * 4 + suit``, ranks 3 … 2, suits
   C S H D).
3. Fisher–Yates: for ``i`` from 51 down to 1, draw ``x`` until
   ``x < 2**32 - (2**32 mod (i + 1))``, take ``j = x mod (i + 1)`` and swap
   positions ``i`` and ``j``.
4. Seat ``s`` gets deck positions ``13*s`` … ``13*s + 12``.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections.abc import Iterator

from referee.rules.cards import HAND_SIZE

DOMAIN = b"pusoy-referee/deal/v1"
MAX_SEED_BYTES = 1024


def _words(seed: bytes, hand_number: int) -> Iterator[int]:
    prefix = DOMAIN + struct.pack(">I", len(seed)) + seed + struct.pack(">I", hand_number)
    counter = 0
    while True:
        block = hashlib.sha256(prefix + struct.pack(">I", counter)).digest()
        yield from struct.unpack(">8I", block)
        counter += 1


def shuffled_deck(seed: str, hand_number: int) -> list[int]:
    """The 52 card ids in dealt order for one hand of a match."""
    raw = seed.encode("utf-8")
    if len(raw) > MAX_SEED_BYTES:
        raise ValueError(f"a seed has at most {MAX_SEED_BYTES} bytes")
    if not 1 <= hand_number < 2**32:
        raise ValueError("hand numbers count from 1")
    deck = list(range(52))
    words = _words(raw, hand_number)
    for i in range(51, 0, -1):
        bound = i + 1
        limit = 2**32 - (2**32 % bound)
        x = next(words)
        while x >= limit:
            x = next(words)
        j = x % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal(seed: str, hand_number: int) -> tuple[int, int, int, int]:
    """The four hands (card masks, seats 0..3) of hand ``hand_number`` (from 1)."""
    deck = shuffled_deck(seed, hand_number)
    hands = []
    for s in range(4):
        mask = 0
        for c in deck[HAND_SIZE * s : HAND_SIZE * (s + 1)]:
            mask |= 1 << c
        hands.append(mask)
    return hands[0], hands[1], hands[2], hands[3]


def new_seed() -> str:
    """A fresh seed from the operating system's random source (64 hex digits)."""
    return secrets.token_hex(32)


def seed_commitment(seed: str) -> str:
    """SHA-256 of the seed's UTF-8 bytes, in hex: published before the match starts."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()
