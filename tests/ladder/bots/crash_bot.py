"""A ladder entrant that fails at start, as a bot missing a file does: the ladder must
reject it with the reason and these last lines of its output."""

import sys

if __name__ == "__main__":  # (pytest's doctest collection imports this file)
    print("loading weights from model.bin", file=sys.stderr)
    print("FileNotFoundError: model.bin is not in the archive", file=sys.stderr)
    sys.exit(3)
