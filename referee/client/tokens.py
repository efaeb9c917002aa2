"""Token files: the one reader of a token a client sends (the organiser's, as
``referee serve`` keeps it; a seat's, as ``referee organiser create --tokens-dir``
writes it), and of the organiser's token the server keeps for itself.

A token file holds one word on one line. It is read within a bound (a token file that
is a device or a log cannot make the reader hold it whole) and refused when it is not
one plain ASCII word, so that what is sent is what the file's owner meant.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_TOKEN_BYTES = 4096


class TokenError(ValueError):
    """A token file that cannot be used; the message says why."""


def read_token(path: Path, what: str = "organiser token", *, private: bool = False) -> str:
    """The token in ``path`` (``what`` names it in errors). ``private``: a file others
    can read is refused as well (the organiser's token is the organiser's whole
    authority). Raises TokenError."""
    path = Path(path)
    not_one = f"{path} is not {'an' if what[:1] in 'aeiou' else 'a'} {what} file"
    try:
        if not path.is_file() and path.exists():
            raise TokenError(f"{not_one} (not a regular file)")
        with path.open("rb") as f:
            mode = os.fstat(f.fileno()).st_mode if private else 0
            raw = f.read(MAX_TOKEN_BYTES + 1)
    except OSError as exc:
        raise TokenError(f"cannot read the {what} file {path}: {exc.strerror}") from None
    if mode & 0o077:
        raise TokenError(
            f"the {what} file {path} can be read by others (mode {mode & 0o777:o}): "
            f"chmod 600 {path}"
        )
    if len(raw) > MAX_TOKEN_BYTES:
        raise TokenError(f"{not_one} (over {MAX_TOKEN_BYTES} bytes)")
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise TokenError(f"{not_one} (not ASCII)") from None
    if not token or any(c.isspace() for c in token):
        raise TokenError(f"{not_one} (one word expected)")
    return token
