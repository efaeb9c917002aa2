#!/usr/bin/env python3
"""A bot that plays greedily for a few prompts, then drops its connection to the
referee at once and exits with status 4 a little later (as the stdio bridge does when it
stops a bot that stopped reading): the match may well finish before its process ends.

PUSOY_LEAVE_AFTER (default 3) is how many prompts it answers first; PUSOY_EXIT_AFTER_S
(default 2.5) how long it takes to exit once it has left.
"""

import os
import socket
import stat
import time

from pusoy_client import Choice, main
from pusoy_client.samples import GreedyBot
from referee.protocol import play_service


def drop_connections() -> None:
    """Shut down every socket of this process (the referee sees the stream end)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=fd)
        except OSError:
            continue
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        finally:
            sock.detach()


class LeavingBot(GreedyBot):
    name = "leaving"

    def __init__(self) -> None:
        self.left = int(os.environ.get("PUSOY_LEAVE_AFTER", "3"))

    def choose(self, prompt: play_service.TurnPrompt) -> Choice:
        self.left -= 1
        if self.left < 0:
            drop_connections()
            time.sleep(3600)  # no answer: the process ends below
        return super().choose(prompt)


if __name__ == "__main__":
    os.environ["PUSOY_RECONNECT_WINDOW_MS"] = "0"  # it does not come back
    main(LeavingBot())
    time.sleep(float(os.environ.get("PUSOY_EXIT_AFTER_S", "2.5")))
    os._exit(4)
