#!/usr/bin/env python3
"""A greedy bot of the Python kit whose own code raises ZeroDivisionError on its second
prompt of the match: the kit plays the fallback for that turn and writes its raised
marker (docs/kits.md, section 5)."""

import sys

from pusoy_client import main
from pusoy_client.samples import GreedyBot


class Raising(GreedyBot):
    name = "raising"

    def __init__(self) -> None:
        super().__init__()
        self.prompts = 0

    def choose(self, prompt):  # type: ignore[no-untyped-def]
        self.prompts += 1
        if self.prompts == 2:
            return 1 // 0
        return super().choose(prompt)


if __name__ == "__main__":
    sys.exit(main(Raising()))
