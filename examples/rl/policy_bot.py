#!/usr/bin/env python3
r"""Seat a trained policy at a referee with the Python kit: the same observation and
action index as in training (pusoy_client.rl), over gRPC.

    referee match --bot "{python} examples/rl/policy_bot.py --policy examples/rl/policy.npz" \
        --bot random --bot greedy --bot random
    PUSOY_TOKEN=... python examples/rl/policy_bot.py --policy policy.npz --address HOST:PORT

A referee gives a bot it spawns its address and seat token in PUSOY_ADDRESS and
PUSOY_TOKEN (a token on a command line is visible to every user in the process list).
The policy file comes from --policy, else PUSOY_POLICY: a variable of your shell does not
reach a bot the referee spawns (docs/kits.md), so give --policy there. Needs numpy and the
kit, not the referee.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import Policy

from pusoy_client import main
from pusoy_client.rl import PolicyBot


def policy_path(argv: list[str]) -> tuple[str, list[str]]:
    """``--policy FILE`` (or ``--policy=FILE``) out of the kit's own flags."""
    rest: list[str] = []
    path = os.environ.get("PUSOY_POLICY", "")
    it = iter(argv)
    for arg in it:
        if arg == "--policy":
            path = next(it, "")
        elif arg.startswith("--policy="):
            path = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return path, rest


if __name__ == "__main__":
    path, rest = policy_path(sys.argv[1:])
    if not path:
        print("policy_bot.py: give --policy FILE (a policy saved by train.py)", file=sys.stderr)
        raise SystemExit(64)
    bot = PolicyBot(Policy.load(Path(path)), name="rl-policy")
    raise SystemExit(main(bot, rest))
