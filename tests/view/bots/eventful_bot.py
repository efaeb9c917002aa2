#!/usr/bin/env python3
"""A bot for the viewer's tests: greedy, with one kind of trouble each (the first argument).

- ``chatty``: writes two lines to its standard error on each prompt, markup and script
  among them (the page must show them as text), then plays.
- ``crash``: plays ``PUSOY_CRASH_AFTER`` (default 4) prompts, then raises: a traceback on
  its standard error, exit status 1.
- ``sleepy``: first sends a card it does not hold on its first prompt of each hand (a
  rejection), then answers late: after PUSOY_LATE_S on the second prompt of each hand
  (past its turn, into its time bank), after PUSOY_TIMEOUT_S on the third (a timeout).
- ``flaky``: drops its stream on its third prompt and connects again (a disconnect).
- ``flood``: writes to its standard error as fast as it can, from a thread, for the whole
  match, and plays greedily; at the end, writes how many bytes it wrote to the file
  PUSOY_FLOOD_REPORT.

Played with the referee's own small client (no deadline cut-off, so it can time out),
reaching the referee at PUSOY_ADDRESS with PUSOY_TOKEN, as ``referee match`` spawns it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading

from referee.bots import play_seat
from referee.bots.strategies import Choice, GreedyBot
from referee.protocol import play_service

MODE = sys.argv[1] if len(sys.argv) > 1 else "chatty"
# Settings may also come as NAME=VALUE words after the mode: a jailed bot gets only the
# environment its table gives it, never the referee's (referee.table.jails).
os.environ.update(word.split("=", 1) for word in sys.argv[2:] if "=" in word)


class Eventful(GreedyBot):
    name = f"eventful-{MODE}"

    def __init__(self) -> None:
        self.prompts = 0
        self.in_hand = 0
        self.hand = 0
        self.crash_after = int(os.environ.get("PUSOY_CRASH_AFTER", "4"))
        self.dropped = asyncio.Event()

    async def _late(self, prompt: play_service.TurnPrompt, sleep_s: float) -> Choice:
        await asyncio.sleep(sleep_s)
        return GreedyBot.choose(self, prompt)

    def choose(self, prompt: play_service.TurnPrompt) -> Choice | asyncio.Future[Choice]:
        self.prompts += 1
        if prompt.state.hand_number != self.hand:
            self.hand, self.in_hand = prompt.state.hand_number, 0
        self.in_hand += 1
        if MODE == "chatty":
            print(f"prompt {self.prompts}: {len(prompt.legal_plays)} plays", file=sys.stderr)
            print("<b>bold</b></script><script>window.__pwned=9</script>", file=sys.stderr)
            sys.stderr.flush()
        elif MODE == "crash" and self.prompts > self.crash_after:
            print(f"giving up after {self.crash_after} prompts", file=sys.stderr, flush=True)
            raise RuntimeError("out of ideas")
        elif MODE == "sleepy":
            if self.in_hand == 1:
                held = {c for c in prompt.hand}
                stranger = next(c for c in ("3C", "3S", "3H", "3D", "4C") if c not in held)
                return [stranger]
            if self.in_hand in (2, 3):
                late = "PUSOY_LATE_S" if self.in_hand == 2 else "PUSOY_TIMEOUT_S"
                return asyncio.ensure_future(self._late(prompt, float(os.environ.get(late, "2"))))
        elif MODE == "flaky" and self.prompts == 3:
            self.dropped.set()
        return GreedyBot.choose(self, prompt)


FLOODED = [0]


def flood() -> None:
    chunk = (b"flood " * 1000 + b"\n") * 10
    err = sys.stderr.fileno()
    while True:
        FLOODED[0] += os.write(err, chunk)


async def main() -> int:
    address, token = os.environ["PUSOY_ADDRESS"], os.environ["PUSOY_TOKEN"]
    bot = Eventful()
    if MODE == "flood":
        threading.Thread(target=flood, daemon=True).start()
        await play_seat(bot, address, token)
        return 0
    while True:
        task = asyncio.create_task(play_seat(bot, address, token))
        drop = asyncio.create_task(bot.dropped.wait())
        await asyncio.wait([task, drop], return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            drop.cancel()
            task.result()
            return 0
        bot.dropped = asyncio.Event()  # once
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.3)


if __name__ == "__main__":
    code = asyncio.run(main())
    if MODE == "flood":
        with open(os.environ["PUSOY_FLOOD_REPORT"], "w") as report:
            report.write(str(FLOODED[0]))
        os._exit(code)  # the flooding thread may be blocked in a write
    sys.exit(code)
