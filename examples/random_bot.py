#!/usr/bin/env python3
"""Run the random sample bot (clients/python/pusoy_client/samples.py) as its own process.

PUSOY_TOKEN=SEAT_TOKEN python examples/random_bot.py --address 127.0.0.1:50051
"""

import sys

from pusoy_client import main
from pusoy_client.samples import RandomBot

if __name__ == "__main__":
    sys.exit(main(RandomBot()))
