#!/usr/bin/env python3
"""Write docs/deal-vectors.json: test vectors for the seeded deal (docs/deals.md).

Every vector is computed by the rules engine (``referee.rules.deal``); the fields other
than ``dealt`` and ``hands`` are intermediate values that help an implementer in another
language find where their code goes wrong. Run from the repository root:

    .venv/bin/python scripts/gen_deal_vectors.py          # rewrite the file
    .venv/bin/python scripts/gen_deal_vectors.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
from pathlib import Path
from typing import Any

from referee.rules.cards import card_text
from referee.rules.deal import DOMAIN, seed_commitment, shuffled_deck

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "deal-vectors.json"

HEX_SEED = "9f2c4e1ab07d53c8e6a1f0b94d27c3e85a6b1d0f7e2c9a4b3d8e5f1c0a7b6d29"

# (name, seed, hand number). The rejection vector was found by searching hand numbers
# of that seed for a deal in which a draw falls in the rejected range (about one deal in
# seven million does).
CASES: list[tuple[str, str, int]] = [
    ("empty seed, hand 1", "", 1),
    ("empty seed, hand 2", "", 2),
    ("ascii seed, hand 1", "pusoy", 1),
    ("ascii seed with a space, hand 10", "big two", 10),
    ("unicode seed, hand 1", "Pusoy Dos ♦ 大老二", 1),
    ("unicode seed, NFC form (é is one code point), hand 2", "caf\u00e9", 2),
    ("unicode seed, NFD form (e + combining accent), hand 2", "cafe\u0301", 2),
    ("64-hex seed, hand 1", HEX_SEED, 1),
    ("64-hex seed, hand 2", HEX_SEED, 2),
    ("64-hex seed, hand 10", HEX_SEED, 10),
    ("64-hex seed, hand 1000", HEX_SEED, 1000),
    ("longest seed (1024 bytes), hand 1", "x" * 1024, 1),
    ("a draw is rejected", "rejection-sampling", 604340),
]


def block_input(seed: str, hand_number: int, counter: int) -> bytes:
    """The bytes hashed for one block of the stream."""
    raw = seed.encode("utf-8")
    return (
        DOMAIN
        + struct.pack(">I", len(raw))
        + raw
        + struct.pack(">I", hand_number)
        + struct.pack(">I", counter)
    )


def draws(seed: str, hand_number: int) -> list[dict[str, int]]:
    """Every 32-bit word drawn, with the bound it was drawn for and whether it was kept."""
    out: list[dict[str, int]] = []
    counter = 0
    words: list[int] = []
    for i in range(51, 0, -1):
        bound = i + 1
        limit = 2**32 - (2**32 % bound)
        while True:
            if not words:
                block = hashlib.sha256(block_input(seed, hand_number, counter)).digest()
                words = list(struct.unpack(">8I", block))
                counter += 1
            x = words.pop(0)
            if x < limit:
                out.append({"i": i, "x": x, "bound": bound, "j": x % bound})
                break
            out.append({"i": i, "x": x, "bound": bound, "j": -1})
    return out


def hand_text(cards: list[int]) -> str:
    return " ".join(card_text(c) for c in sorted(cards))


def vector(name: str, seed: str, hand_number: int) -> dict[str, Any]:
    deck = shuffled_deck(seed, hand_number)
    drawn = draws(seed, hand_number)
    return {
        "name": name,
        "seed": seed,
        "seed_utf8_hex": seed.encode("utf-8").hex(),
        "hand_number": hand_number,
        "seed_commitment": seed_commitment(seed),
        "block0_sha256": hashlib.sha256(block_input(seed, hand_number, 0)).hexdigest(),
        "words_drawn": len(drawn),
        "rejected_draws": sum(1 for d in drawn if d["j"] < 0),
        "dealt": deck,
        "dealt_text": " ".join(card_text(c) for c in deck),
        "hands": [hand_text(deck[13 * s : 13 * s + 13]) for s in range(4)],
    }


def document() -> dict[str, Any]:
    """The whole file's content."""
    return {
        "algorithm": DOMAIN.decode("ascii"),
        "description": (
            "Seeded deals, see docs/deals.md. Card id = rank * 4 + suit, ranks 3 4 5 6 7 8 "
            "9 T J Q K A 2 (0..12), suits C S H D (0..3). 'dealt' is the deck after the "
            "shuffle, position 0 first; seat s holds positions 13s..13s+12; 'hands' lists "
            "each seat's cards as canonical text in card id order."
        ),
        "vectors": [vector(name, seed, n) for name, seed, n in CASES],
    }


def render() -> str:
    """The file's exact text."""
    text = json.dumps(document(), ensure_ascii=True, indent=2)
    # One line for each list of card ids.
    text = re.sub(
        r"\[\s+(\d[\d,\s]*?)\s+\]",
        lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]",
        text,
    )
    return text + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/deal-vectors.json.")
    parser.add_argument("--check", action="store_true", help="only check the file is current")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run scripts/gen_deal_vectors.py")
            return 1
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(CASES)} vectors to {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
