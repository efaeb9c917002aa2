"""Read a whole match log for the viewer: bounded in size, lenient line by line."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path

from referee.view.fold import Folder, Op, text, unix_us, whole

MAX_LOG_BYTES = 50 * 1024 * 1024
"""Logs above this size are refused: a page holding them would not be usable."""


class LogTooLarge(ValueError):
    """The log is larger than the viewer opens."""


@dataclasses.dataclass(frozen=True, slots=True)
class FoldedLog:
    match_id: str
    ops: list[Op]
    lines: int
    truncated: bool
    raw: bytes
    times: list[int | None] = dataclasses.field(default_factory=list)
    """When each op's event was decided (µs since the epoch; None when unknown)."""


def check_size(path: Path, limit: int = MAX_LOG_BYTES) -> int:
    """The log's size; LogTooLarge past ``limit``, OSError when it cannot be read."""
    size = Path(path).stat().st_size
    if size > limit:
        raise LogTooLarge(
            f"{path} is {size / 2**20:.1f} MB; the viewer opens logs up to "
            f"{limit / 2**20:.0f} MB (use `referee replay` for a text replay of any size)"
        )
    return size


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def fold_log(path: Path, limit: int = MAX_LOG_BYTES) -> FoldedLog:
    """Every line of a log as ops. Lines that are not entries become ``bad`` ops."""
    check_size(path, limit)
    raw = Path(path).read_bytes()
    if len(raw) > limit:  # grew since the check
        raise LogTooLarge(f"{path} grew past {limit / 2**20:.0f} MB while being read")
    parts = raw.split(b"\n")
    tail = parts.pop()
    truncated = bool(tail)
    folder = Folder()
    ops: list[Op] = []
    times: list[int | None] = []
    for number, line in enumerate(parts, start=1):
        try:
            entry = json.loads(line, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            ops.append({"t": "bad", "seq": number, "problem": text(f"not JSON ({exc})")})
            continue
        if not isinstance(entry, Mapping):
            ops.append({"t": "bad", "seq": number, "problem": "not a log entry"})
            continue
        trailer = entry.get("trailer")
        if isinstance(trailer, Mapping) and "event" not in entry:
            ops.append(
                {
                    "t": "trailer",
                    "seq": number,
                    "algorithm": text(trailer.get("algorithm", ""), 40),
                    "key": text(trailer.get("public_key", ""), 200),
                    "lines": whole(trailer.get("lines")),
                    "final_hash": text(trailer.get("final_hash", ""), 128),
                }
            )
            continue
        if number == 1:
            folder.match_id = text(entry.get("match_id", ""), 100)
        times += [None] * (len(ops) - len(times))
        ops.append(folder.feed(number, entry.get("event")))
        times.append(unix_us(entry.get("time")))
    if truncated:
        ops.append(
            {
                "t": "bad",
                "seq": len(parts) + 1,
                "problem": "the last line is cut short (the log is incomplete)",
            }
        )
    times += [None] * (len(ops) - len(times))
    return FoldedLog(folder.match_id, ops, len(parts), truncated, raw, times)
