#!/usr/bin/env python3
"""A greedy bot that first writes its environment's names (and MYBOT_DEPTH's value) to its
standard error, as one line: ``ENV {"names": [...], "depth": "3"}``."""

import json
import os
import sys

from pusoy_client import main
from pusoy_client.samples import GreedyBot

print("ENV " + json.dumps({"names": sorted(os.environ), "depth": os.environ.get("MYBOT_DEPTH")}))
sys.stdout.flush()

if __name__ == "__main__":
    sys.exit(main(GreedyBot()))
