#!/usr/bin/env python3
"""A bot that goes over a limit at its first prompt: ``hog_bot.py MODE``.

- ``memory``: allocates (and touches) 16 MB at a time without end;
- ``cpu``: spins;
- ``fork``: starts 100 processes that sleep, reporting ``HOG {"forked": N}`` if the
  system refuses one, then spins on, keeping them;
- ``spam``: writes 8 MB to standard error, then plays on greedily.
"""

from __future__ import annotations

import json
import os
import sys
import time

from pusoy_client import Choice, main
from pusoy_client.protocol import play_service
from pusoy_client.samples import GreedyBot


def say(**fields: object) -> None:
    print("HOG " + json.dumps(fields), file=sys.stderr, flush=True)


class HogBot(GreedyBot):
    name = "hog"

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.done = False

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        if not self.done:
            self.done = True
            say(mode=self.mode)
            getattr(self, self.mode)()
        return super().choose(prompt)

    def memory(self) -> None:
        held = []
        while True:
            block = bytearray(16 << 20)
            block[::4096] = b"x" * len(block[::4096])
            held.append(block)

    def cpu(self) -> None:
        while True:
            pass

    def fork(self) -> None:
        for children in range(100):
            try:
                pid = os.fork()
            except OSError as exc:
                say(forked=children, error=exc.strerror)
                break
            if pid == 0:
                time.sleep(60)
                os._exit(0)
        while True:
            time.sleep(0.1)

    def spam(self) -> None:
        line = "spam " * 200 + "\n"
        for _ in range(8 * 1024 * 1024 // len(line)):
            sys.stderr.write(line)
        sys.stderr.flush()


if __name__ == "__main__":
    mode = sys.argv.pop(1)
    sys.exit(main(HogBot(mode)))
