"""Where a running ``referee serve`` listens, as it records it in its state folder.

The server writes the record when it starts and removes it at exit
(``referee.server.secrets``); a client on the same machine reads it to find the referee,
its organiser address, its TLS and its token file without flags (``find_target``). The
record is read within a bound and refused whole unless it has exactly its fields, each
of its type: a folder anyone could have written into is no reason to trust a field.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

SERVING_FILE = "serving.json"
MAX_SERVING_BYTES = 4096


class ServingError(ValueError):
    """A record that cannot be read or is not one; the message says which."""


@dataclasses.dataclass(frozen=True, slots=True)
class Serving:
    """What ``referee serve`` records in its state folder while it runs."""

    address: str
    """The bots' listener, as a local client reaches it (a wildcard host as loopback)."""
    organiser_address: str
    """Where the organiser's calls are served (``address`` unless separate)."""
    tls: str
    """``off``, ``on`` or ``mutual``."""
    token_file: str
    """The organiser's token file, an absolute path."""
    pid: int

    def running(self) -> bool:
        """Whether the process that wrote the record still runs (else it was killed)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process of that number
            return True
        return True


def read_serving(state_dir: Path) -> Serving | None:
    """The record of ``state_dir`` (None: there is none); ServingError when it cannot be
    read or is not one."""
    path = state_dir / SERVING_FILE
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_SERVING_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ServingError(f"cannot read {path}: {exc.strerror}") from None
    try:
        if len(raw) > MAX_SERVING_BYTES:
            raise ValueError("too long")
        data = json.loads(raw)
        fields = {f.name: f.type for f in dataclasses.fields(Serving)}
        if not isinstance(data, dict) or set(data) != set(fields):
            raise ValueError("not its fields")
        serving = Serving(**data)
        if not all(
            isinstance(getattr(serving, name), int if kind == "int" else str)
            for name, kind in fields.items()
        ) or serving.tls not in ("off", "on", "mutual"):
            raise ValueError("a field of the wrong type")
    except (ValueError, TypeError):
        raise ServingError(f"{path} is not a record of referee serve") from None
    return serving
