"""Lets the rules tests import their shared helpers (``import brute``).

pytest runs with ``--import-mode=importlib``, which does not put test folders on
``sys.path``; this folder is added here so that ``brute.py`` is importable.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
