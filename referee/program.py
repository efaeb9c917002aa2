"""How to run this ``referee`` again from the same shell, for the hints the commands print
(a replay, a view, a verify command, a built-in bot) that a user pastes as they are."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def referee_program() -> str:
    """How to run this ``referee`` again from the same shell: ``referee`` when that is
    what PATH finds, else the path it was started by, or ``python -m referee.cli``."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "referee":
        found = shutil.which("referee")
        try:
            if found is not None and os.path.samefile(found, argv0):
                return "referee"
        except OSError:
            pass
        return shlex.quote(argv0)
    return f"{shlex.quote(sys.executable)} -m referee.cli"


__all__ = ["referee_program"]
