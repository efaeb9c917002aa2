"""A bot that tries to starve the others: it starts PUSOY_HOG_LOOPS busy loops, each in a
session of its own (so that neither nice nor its process group holds them), and
PUSOY_HOG_MB megabytes held in each of PUSOY_HOG_HOLDERS processes, then plays as the
greedy sample bot does (or, with PUSOY_HOG_SCRATCH_MB, first fills its /tmp)."""

from __future__ import annotations

import os
import sys

from pusoy_client import main
from pusoy_client.samples import GreedyBot


def spin() -> None:
    os.setsid()
    while True:
        pass


def hold(mb: int) -> None:
    os.setsid()
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1  # touched: resident, and private to this process
    os.pause()


def fork_into(target, *args) -> None:
    if os.fork() == 0:
        try:
            target(*args)
        finally:
            os._exit(0)


if __name__ == "__main__":
    for _ in range(int(os.environ.get("PUSOY_HOG_LOOPS", "0"))):
        fork_into(spin)
    mb = int(os.environ.get("PUSOY_HOG_MB", "0"))
    for _ in range(int(os.environ.get("PUSOY_HOG_HOLDERS", "0"))):
        fork_into(hold, mb)
    scratch = int(os.environ.get("PUSOY_HOG_SCRATCH_MB", "0"))
    if scratch:
        with open("/tmp/fill", "wb") as f:
            try:
                for _ in range(scratch):
                    f.write(b"\0" * (1 << 20))
                    f.flush()
            except OSError as exc:
                print(f"HOG scratch stopped: {exc.strerror}", flush=True)
    print("HOG started", flush=True)
    sys.exit(main(GreedyBot()))
