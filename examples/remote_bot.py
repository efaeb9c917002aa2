#!/usr/bin/env python3
"""Take part in a tournament from your own machine through the referee's lobby.

The organiser enters the bot in the tournament's configuration with a secret key
(``[[bot]] name = "mine"  key = "..."``) and gives you the key and the referee's address.
This program connects once, waits in the lobby, and plays every seat it is assigned with
a fresh greedy bot (swap in your own ``Bot`` subclass), up to --max-matches at once.

python examples/remote_bot.py --address referee.example.org:50051 --key BOT_KEY --max-matches 2
"""

import sys

from pusoy_client import lobby_main
from pusoy_client.samples import GreedyBot

if __name__ == "__main__":
    sys.exit(lobby_main(GreedyBot))
