"""``python -m pusoy_client [sample|random|greedy] [--misbehave] --address A --token T``."""

from __future__ import annotations

import os
import sys

from pusoy_client.bot import Bot
from pusoy_client.runner import main
from pusoy_client.samples import BUILTIN_BOTS, Misbehaving, SampleBot

BOTS: dict[str, type[Bot]] = {**BUILTIN_BOTS, "sample": SampleBot}


def run(argv: list[str]) -> int:
    name = argv[0] if argv and argv[0] in BOTS else "sample"
    rest = argv[1:] if argv and argv[0] in BOTS else argv
    bot = BOTS[name]()
    if "--misbehave" in rest or os.environ.get("PUSOY_MISBEHAVE") == "1":
        rest = [a for a in rest if a != "--misbehave"]
        return main(Misbehaving(bot), rest)
    return main(bot, rest)


def entry() -> int:
    """The ``pusoy-sample-bot`` command."""
    return run(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
