#!/usr/bin/env python3
"""Write referee/view/assets/viewer.js, the viewer's script, from its parts.

The viewer is one self-contained HTML page (``referee.view.page``): its script is inlined
whole, and the page's Content-Security-Policy allows exactly that script by its hash. The
script is kept as parts, one concern each (``referee/view/assets/viewer/*.js``: the DOM
helpers, the model, the drawing, the turn, the timeline, a model's trace, the bots'
output, navigation, live), which together are one function: the first part opens it, the
last closes it. This joins them, in the order of their names, into the file the page
inlines; a test fails when that file is not the join of its parts. Run from the
repository root:

    .venv/bin/python scripts/build_viewer.py          # rewrite viewer.js
    .venv/bin/python scripts/build_viewer.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "referee" / "view" / "assets"
PARTS = ASSETS / "viewer"
OUTPUT = ASSETS / "viewer.js"


def build() -> str:
    """The viewer's script: its parts joined in the order of their names."""
    parts = sorted(PARTS.glob("*.js"))
    if not parts:
        raise SystemExit(f"no parts in {PARTS}")
    return "".join(part.read_text(encoding="utf-8") for part in parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/build_viewer.py",
        description="Join the viewer's parts into referee/view/assets/viewer.js.",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if viewer.js is stale")
    args = parser.parse_args(argv)
    text = build()
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if args.check:
        if current != text:
            print(f"{OUTPUT} is not the join of its parts: run {parser.prog}", file=sys.stderr)
            return 1
        return 0
    if current != text:
        OUTPUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
