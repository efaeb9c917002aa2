#!/usr/bin/env python3
"""A bot that writes down every deal it sees, to know the cards when a deal comes back.

It keeps its own hand of every deal, every hand revealed at the end of a hand, and the
seed revealed at the end of the match, in a file in every place it can write: /tmp,
/dev/shm, its home, its working folder, and PUSOY_MEMO_DIR if set. When a match starts
it reads them back and prints ``MEMO {"found": N}``; on its welcome, whether it knows
the seed behind the match's seed commitment (then it knows every seat's cards); at each
deal, whether it has seen its hand before, or can derive it from a seed it kept
(``MEMO {"hand": 1, "recognised": true}``). Then it plays greedily.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pusoy_client import main
from pusoy_client.protocol import common, play_service
from pusoy_client.samples import GreedyBot
from referee.rules import card_text, deal, seed_commitment

NAME = "pusoy-memo.jsonl"


def places() -> list[Path]:
    folders = ["/tmp", "/dev/shm", os.environ.get("HOME", "/tmp"), os.getcwd()]
    if os.environ.get("PUSOY_MEMO_DIR"):
        folders.append(os.environ["PUSOY_MEMO_DIR"])
    return [Path(f) / NAME for f in dict.fromkeys(folders)]


def say(**fields: object) -> None:
    print("MEMO " + json.dumps(fields), file=sys.stderr, flush=True)


def recall() -> list[dict[str, object]]:
    seen: list[dict[str, object]] = []
    for path in places():
        try:
            seen += [json.loads(line) for line in path.read_text().splitlines() if line]
        except (OSError, ValueError):
            continue
    return seen


def remember(entry: dict[str, object]) -> None:
    line = json.dumps(entry) + "\n"
    for path in places():
        try:
            with open(path, "a") as f:
                f.write(line)
        except OSError:
            continue


class MemoBot(GreedyBot):
    name = "memo"

    def __init__(self) -> None:
        self.memory = recall()
        say(found=len(self.memory))
        self.known = {tuple(sorted(e["cards"])) for e in self.memory if "cards" in e}
        self.seeds = {str(e["seed"]) for e in self.memory if e.get("seed")}
        self.seed = ""

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        by_commitment = {seed_commitment(s): s for s in self.seeds}
        self.seed = by_commitment.get(welcome.seed_commitment, "")
        say(knows_seed=bool(self.seed))

    def derivable(self, hand_number: int) -> set[tuple[str, ...]]:
        """Every seat's hand of this deal, if the seed is known."""
        if not self.seed:
            return set()
        hands = deal(self.seed, hand_number)
        return {tuple(sorted(card_text(c) for c in range(52) if m >> c & 1)) for m in hands}

    def on_event(self, event: common.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind == "hand_dealt":
            for hand in event.hand_dealt.hands:
                if hand.cards:
                    cards = tuple(sorted(hand.cards))
                    number = event.hand_dealt.hand_number
                    recognised = cards in self.known or cards in self.derivable(number)
                    say(hand=number, recognised=recognised)
                    remember({"cards": list(cards)})
        elif kind == "hand_ended":
            for hand in event.hand_ended.hands:
                remember({"revealed": list(hand.cards), "seat": hand.seat})
        elif kind == "match_ended":
            remember({"seed": event.match_ended.seed})


if __name__ == "__main__":
    sys.exit(main(MemoBot()))
