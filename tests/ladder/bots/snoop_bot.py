"""A ladder entrant that tries, before it plays, to read what its jail must hide: the
paths it is given (the ladder's database, the logs, the signing key) and to list the
ladder's folder and its versions (where it may see only the way to its own folder). It
writes what it found to its stderr, which the test reads, then plays as the greedy
sample does."""

import os
import sys

from pusoy_client import main
from pusoy_client.samples import GreedyBot


def snoop_then_play() -> int:
    args = sys.argv[1:]
    paths = args[: args.index("--")] if "--" in args else []
    rest = args[args.index("--") + 1 :] if "--" in args else args
    for path in paths:
        try:
            if os.path.isdir(path):
                found = "listed " + ",".join(sorted(os.listdir(path)))
            else:
                with open(path, "rb") as f:
                    found = f"read {len(f.read(64))} bytes"
            print(f"SNOOP {path}: {found}", file=sys.stderr)
        except OSError as exc:
            print(f"SNOOP {path}: denied ({type(exc).__name__})", file=sys.stderr)
    sys.stderr.flush()
    return main(GreedyBot(), rest)


if __name__ == "__main__":
    sys.exit(snoop_then_play())
