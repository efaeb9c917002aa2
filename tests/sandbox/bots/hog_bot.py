"""A bot that tries to slow or starve the others, then plays as the greedy sample bot.

Each misdeed is asked for in its environment:

- PUSOY_HOG_LOOPS: that many busy loops, each in a session of its own (so that neither
  nice nor its process group holds them);
- PUSOY_HOG_HOLDERS x PUSOY_HOG_MB: processes each holding that many megabytes, touched
  (resident and private);
- PUSOY_HOG_CONNECTIONS: that many connections held open to the referee's address (each
  one a forwarder process in its jail);
- PUSOY_HOG_SCRATCH_MB: written to /tmp, and a byte to / and /run.

It says on its output what it did: ``HOG {"scratch": ..., "root": ..., ...}``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

from pusoy_client import main
from pusoy_client.samples import GreedyBot


def spin() -> None:
    os.setsid()
    while True:
        pass


def hold(mb: int, ready: int) -> None:
    os.setsid()
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    os.write(ready, b"x")  # all of it held before the bot plays (and is stopped off-turn)
    while True:  # held until the jail stops the bot
        signal.pause()


def fork_into(target, *args) -> None:
    if os.fork() == 0:
        try:
            target(*args)
        finally:
            os._exit(0)


def write(path: str, megabytes: int) -> str:
    try:
        with open(path, "wb") as f:
            for _ in range(megabytes):
                f.write(b"\0" * (1 << 20))
                f.flush()
        return "written"
    except OSError as exc:
        return exc.strerror or str(exc)


if __name__ == "__main__":
    env = os.environ
    done: dict[str, object] = {}
    for _ in range(int(env.get("PUSOY_HOG_LOOPS", "0"))):
        fork_into(spin)
    holders = int(env.get("PUSOY_HOG_HOLDERS", "0"))
    ready_r, ready_w = os.pipe()
    for _ in range(holders):
        fork_into(hold, int(env.get("PUSOY_HOG_MB", "0")), ready_w)
    for _ in range(holders):
        os.read(ready_r, 1)
    held = []
    host, _, port = env.get("PUSOY_ADDRESS", "127.0.0.1:0").rpartition(":")
    for _ in range(int(env.get("PUSOY_HOG_CONNECTIONS", "0"))):
        try:
            held.append(socket.create_connection((host, int(port)), timeout=5))
        except OSError as exc:
            done["connect"] = exc.strerror or str(exc)
            break
    done["connections"] = len(held)
    scratch = int(env.get("PUSOY_HOG_SCRATCH_MB", "0"))
    if scratch:
        done["scratch"] = write("/tmp/fill", scratch)
        done["root"] = write("/fill", 1)
        done["run"] = write("/run/fill", 1)
    print("HOG " + json.dumps(done), flush=True)
    sys.exit(main(GreedyBot()))
