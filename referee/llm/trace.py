"""A model seat's trace: one JSON line per action it sent, bound to the signed log.

Each line holds what led to one action: every call to the model since the seat's last
action (the prompt or its hash, the answer, the reasoning the endpoint returned, token
counts, latency, how the answer was read, the provider's failures), the action itself
and whether it was the model's or the seat's fallback. The seat sends the SHA-256 of the
line's bytes with the action (``Action.trace_sha256``) and the referee logs it in the
action's command, so the file is bound to the log line by line: ``referee.log.traces`` (what
``referee verify`` runs) finds a line changed, added, dropped or reordered.

The file is private (0600) and written where no bot and no spectator looks
(``pending_path``) until its deal group is over; ``release`` then moves it beside the
log (``trace_path``), where ``referee view`` and ``referee verify`` find it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from referee.files import create_private_file
from referee.log.traces import line_sha256, trace_path

PENDING_DIR = ".traces-pending"
"""Beside the logs: the traces of matches whose deal group is not over yet (0700)."""


def pending_path(log_path: Path, seat: int) -> Path:
    """Where a trace is written while its deal group plays: a private folder beside the
    logs that the viewer, the verifier and every jail leave alone."""
    return log_path.parent / PENDING_DIR / trace_path(log_path, seat).name


class TraceWriter:
    """Appends lines to a new private file; ``write`` returns each line's SHA-256."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        create_private_file(path, b"")
        self.lines = 0

    @staticmethod
    def encode(record: Mapping[str, Any]) -> tuple[bytes, str]:
        """A record's line (compact JSON, UTF-8) and its SHA-256, which the action
        carries: the line is written once the action is sent (``append``)."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        return line, line_sha256(line)

    def append(self, line: bytes) -> None:
        with self.path.open("ab") as out:
            out.write(line + b"\n")
            out.flush()
            os.fsync(out.fileno())
        self.lines += 1

    def write(self, record: Mapping[str, Any]) -> str:
        """Encode and append a record at once; its line's SHA-256."""
        line, digest = self.encode(record)
        self.append(line)
        return digest


def release(pending: Path, final: Path) -> Path | None:
    """Move a finished trace beside its log (its deal group is over); None when there is
    none (the seat never acted)."""
    if not pending.exists():
        return None
    final.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.replace(pending, final)
    with contextlib.suppress(OSError):
        pending.parent.rmdir()  # the last pending trace of this folder: leave no litter
    return final


def release_all(log_path: Path) -> list[Path]:
    """Release every pending trace of a log's match (its deal group is over)."""
    out = []
    for seat in range(4):
        moved = release(pending_path(log_path, seat), trace_path(log_path, seat))
        if moved is not None:
            out.append(moved)
    return out


class _Result(Protocol):
    @property
    def group(self) -> int: ...
    @property
    def log(self) -> str: ...


def release_group(
    folder: Path, results: Iterable[_Result], group: int, sizes: Mapping[int, int]
) -> None:
    """A tournament's hook: once every match of ``group`` has its result, release the
    traces of its matches' logs (``log`` relative to ``folder``). Until then they stay
    private: the rotations of a duplicate deal run at once, with the same cards."""
    done = [r for r in results if r.group == group]
    if len(done) >= sizes.get(group, 0):
        for r in done:
            if r.log:
                release_all(folder / r.log)
