"""Puts tests/support on the import path: helpers several test folders share."""

import sys
from pathlib import Path

_SUPPORT = str(Path(__file__).resolve().parent / "support")
if _SUPPORT not in sys.path:
    sys.path.insert(0, _SUPPORT)
