#!/usr/bin/env python3
"""The Python kit's conformance bot: a bot whose behaviour the transcript scripts.

The fake referee (clients/conformance/run) starts it with PUSOY_CONFORMANCE_BOT, a JSON
object: ``choose`` and ``on_rejected`` map a turn id to a step (``{"play": [...]}``,
``{"pass": true}``, ``{"block_ms": N, ...}`` to block first, ``{"until_remaining_ms": N,
...}`` to wait until the budget has N ms left, ``{"throw": "why"}``); ``throw_in`` names
hooks that throw; ``want_legal_plays`` is passed on. Unlisted turns play the weakest
legal play (or pass).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pusoy_client import PASS, Bot, Choice, Prompt, Rejection, fallback, main
from pusoy_client.protocol import common, play_service


class ConformanceBot(Bot):
    name = "python-conformance"

    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.want_legal_plays = bool(script.get("want_legal_plays", True))
        self.throw_in = set(script.get("throw_in", []))

    def step(self, table: str, prompt: Prompt, default: Choice) -> Choice:
        step = self.script.get(table, {}).get(str(prompt.turn_id))
        if step is None:
            return default
        if "block_ms" in step:
            time.sleep(step["block_ms"] / 1000)  # blocks the worker: no cooperation
        if "until_remaining_ms" in step:
            while prompt.budget.remaining() * 1000 > step["until_remaining_ms"]:
                time.sleep(0.005)
        if "throw" in step:
            raise RuntimeError(step["throw"])
        if step.get("pass"):
            return PASS
        return list(step["play"])

    def choose(self, prompt: Prompt) -> Choice:
        weakest = list(prompt.legal_plays[0].cards) if prompt.legal_plays else PASS
        return self.step("choose", prompt, weakest)

    def on_rejected(self, prompt: Prompt, rejection: Rejection) -> Choice:
        if "on_rejected" in self.throw_in:
            raise RuntimeError("scripted failure in on_rejected")
        if str(prompt.turn_id) in self.script.get("on_rejected", {}):
            return self.step("on_rejected", prompt, PASS)
        return fallback(prompt)

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        if "on_welcome" in self.throw_in:
            raise RuntimeError("scripted failure in on_welcome")

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        if "on_snapshot" in self.throw_in:
            raise RuntimeError("scripted failure in on_snapshot")

    def on_event(self, event: common.Event) -> None:
        if "on_event" in self.throw_in:
            raise RuntimeError("scripted failure in on_event")


if __name__ == "__main__":
    sys.exit(main(ConformanceBot(json.loads(os.environ.get("PUSOY_CONFORMANCE_BOT", "{}")))))
