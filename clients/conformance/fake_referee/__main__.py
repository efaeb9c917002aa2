"""``python -m fake_referee --bot CMD [--features F ...] [TRANSCRIPT ...]``."""

from __future__ import annotations

import sys

from fake_referee.runner import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
