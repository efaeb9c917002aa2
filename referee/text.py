"""Text from others, made safe to print on a terminal.

Bot names, cancel reasons, disconnect causes and whole log lines come from programs the
referee does not trust. Printed raw, a name can carry terminal escape sequences (move
the cursor, rewrite earlier lines, set the window title) or bidirectional-override
characters that make one name read as another. Every terminal output of the referee
passes such text through ``printable`` first.
"""

from __future__ import annotations

import unicodedata

_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Controls (C0, DEL, C1), format characters (bidi overrides, zero-width joiners),
surrogates, private use, unassigned, and line/paragraph separators."""


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str) -> str:
    r"""``text`` with every control or format character shown as an escape.

    >>> printable("evil\x1b[2J\x1b]0;pwned\x07bot")
    'evil\\x1b[2J\\x1b]0;pwned\\x07bot'
    >>> printable("abc\u202egpj.exe")
    'abc\\u202egpj.exe'
    >>> printable("Ünïcødé ♠ 名前")
    'Ünïcødé ♠ 名前'
    """
    if text.isprintable():
        return text
    return "".join(
        _escape(ch) if unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch for ch in text
    )
