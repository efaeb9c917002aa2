"""Stdio bots: programs that read JSON lines on stdin and answer on stdout, no gRPC.

A stdio bot plays through a bridge (``referee stdio-bot``, ``referee.stdio.bridge``): an
ordinary gRPC bot on one side, the bot's process on the other. ``referee match --bot
"stdio:COMMAND"`` and a tournament's ``stdio = "COMMAND"`` spawn the bridge as the
seat's command, so a stdio bot is stopped, logged and judged like any spawned bot. The
line protocol is in ``referee.stdio.lines`` and docs/protocol.md, section 8.

This module imports no gRPC: configuration code uses it to build the bridge's command.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

PREFIX = "stdio:"
"""A ``referee match --bot`` value that starts with this is a stdio bot's command."""

INTERPRETERS = frozenset(
    {"sh", "bash", "dash", "zsh", "env", "perl", "ruby", "node", "lua", "php", "java", "jq"}
)


def program_name(argv: Sequence[str]) -> str:
    """A short name for a bot command: its program, or the script an interpreter runs.

    >>> program_name(["sh", "clients/stdio/jq/bot.sh"])
    'bot.sh'
    >>> program_name(["/usr/bin/python3", "-u", "my_bot.py", "--fast"])
    'my_bot.py'
    >>> program_name(["./build/mybot"])
    'mybot'
    """
    words = list(argv)
    if not words:
        return "stdio"
    first = os.path.basename(words[0])
    if first in INTERPRETERS or first.startswith(("python", "pypy", "lua")):
        script = next((w for w in words[1:] if not w.startswith("-")), None)
        if script is not None:
            return os.path.basename(script.rstrip("/")) or first
    return first or "stdio"


def bridge_argv(
    command: Sequence[str], *, name: str = "", python: str = sys.executable
) -> list[str]:
    """The command that plays a seat with the stdio bot ``command`` through the bridge.

    The bridge takes the referee's address and the seat's token from PUSOY_ADDRESS and
    PUSOY_TOKEN (set for every spawned bot), so the token never shows in a process list.

    >>> bridge_argv(["./bot"], name="mine", python="python3")
    ['python3', '-m', 'referee.cli', 'stdio-bot', '--name', 'mine', '--', './bot']
    """
    named = ["--name", name] if name else []
    return [python, "-m", "referee.cli", "stdio-bot", *named, "--", *command]


__all__ = ["PREFIX", "bridge_argv", "program_name"]
