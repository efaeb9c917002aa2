#!/usr/bin/env python3
"""The Python kit's conformance bot: a bot whose behaviour the transcript scripts.

The fake referee (clients/conformance/run) starts it with PUSOY_CONFORMANCE_BOT, a JSON
object: ``choose`` and ``on_rejected`` map a turn id to a step (``{"play": [...]}``,
``{"pass": true}``, ``{"block_ms": N, ...}`` to block first, ``{"until_remaining_ms": N,
...}`` to wait until the budget has N ms left, ``{"throw": "why"}``); ``throw_in`` names
hooks that throw; ``want_legal_plays`` is passed on. Unlisted turns play the weakest
legal play (or pass). Checks of what the hooks were given (exit 70 when one fails):
``tracker`` (the kit's Tracker, fed by the hooks, must hold each prompt's state when
``choose`` is called), ``events_before`` (turn id to the number of ``on_event`` calls
made before that turn's ``choose``), ``events_total`` (``on_event`` calls in the run).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pusoy_client import PASS, Bot, Choice, Prompt, Rejection, Tracker, fallback, main
from pusoy_client.protocol import common, play_service

EXIT_CHECK_FAILED = 70


def check_failed(why: str) -> None:
    """A scripted check failed: say why and stop at once (the transcript then fails)."""
    print(f"python-conformance: check failed: {why}", file=sys.stderr, flush=True)
    os._exit(EXIT_CHECK_FAILED)


def tracker_differs(t: Tracker, p: play_service.TurnPrompt) -> str | None:
    """What the tracker holds that differs from the referee's state in the prompt."""
    st = p.state
    trick = [(x.seat, [] if getattr(x, "pass") else list(x.play.cards)) for x in st.trick]
    pairs = {
        "hand_number": (t.hand_number, st.hand_number),
        "hand": (t.hand, list(p.hand)),
        "card_counts": (t.card_counts, list(st.card_counts)),
        "played_cards": (t.played_cards, list(st.played_cards)),
        "table": (t.table, list(st.table.cards)),
        "table_seat": (t.table_seat, st.table_seat if st.HasField("table_seat") else None),
        "locked_out": (t.locked_out, list(st.locked_out)),
        "revolution": (t.revolution, st.revolution),
        "trick": ([(e.seat, e.cards) for e in t.trick], trick),
        "totals": (t.totals, list(st.totals)),
        "hands_won": (t.hands_won, list(st.hands_won)),
    }
    for name, (mine, theirs) in pairs.items():
        if mine != theirs:
            return f"turn {p.turn_id}: tracker {name} {mine}, the referee's {theirs}"
    return None


class ConformanceBot(Bot):
    name = "python-conformance"

    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.want_legal_plays = bool(script.get("want_legal_plays", True))
        self.throw_in = set(script.get("throw_in", []))
        self.tracker = Tracker() if script.get("tracker") else None
        self.events = 0

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
        want = self.script.get("events_before", {}).get(str(prompt.turn_id))
        if want is not None and want != self.events:
            check_failed(f"turn {prompt.turn_id}: {self.events} events before choose, not {want}")
        if self.tracker is not None and (why := tracker_differs(self.tracker, prompt.message)):
            check_failed(why)
        weakest = list(prompt.legal_plays[0].cards) if prompt.legal_plays else PASS
        return self.step("choose", prompt, weakest)

    def on_rejected(self, prompt: Prompt, rejection: Rejection) -> Choice:
        if "on_rejected" in self.throw_in:
            raise RuntimeError("scripted failure in on_rejected")
        if str(prompt.turn_id) in self.script.get("on_rejected", {}):
            return self.step("on_rejected", prompt, PASS)
        return fallback(prompt)

    def on_welcome(self, welcome: play_service.Welcome) -> None:
        if self.tracker is not None:
            self.tracker.on_welcome(welcome)
        if "on_welcome" in self.throw_in:
            raise RuntimeError("scripted failure in on_welcome")

    def on_snapshot(self, snapshot: play_service.Snapshot) -> None:
        if self.tracker is not None:
            self.tracker.on_snapshot(snapshot)
        if "on_snapshot" in self.throw_in:
            raise RuntimeError("scripted failure in on_snapshot")

    def on_event(self, event: common.Event) -> None:
        self.events += 1
        if self.tracker is not None:
            self.tracker.on_event(event)
        if "on_event" in self.throw_in:
            raise RuntimeError("scripted failure in on_event")


def run() -> int:
    bot = ConformanceBot(json.loads(os.environ.get("PUSOY_CONFORMANCE_BOT", "{}")))
    code = main(bot)
    want = bot.script.get("events_total")
    if code == 0 and want is not None and want != bot.events:
        check_failed(f"{bot.events} events in the run, not {want}")
    return code


if __name__ == "__main__":
    sys.exit(run())
