"""Append-only writer of a match's event log, one hash-chained JSON line per event."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from google.protobuf import json_format

from referee.protocol import LOG_SCHEMA_VERSION, common


def entry_to_line(entry: common.LogEntry) -> str:
    """The log line of an entry: compact JSON, proto field names, no newline."""
    data = json_format.MessageToDict(entry, preserving_proto_field_name=True)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


class EventLogWriter:
    """Writes events in order; each ``append`` reaches the OS before it returns."""

    def __init__(self, path: Path, match_id: str) -> None:
        self.path = path
        self.match_id = match_id
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "x", encoding="utf-8", newline="\n")  # noqa: SIM115
        self._seq = 0
        self._prev_hash = ""
        self.closed = False

    @property
    def seq(self) -> int:
        return self._seq

    def append(self, event: common.Event, when: datetime | None = None) -> common.LogEntry:
        if self.closed:
            raise ValueError(f"log {self.path} is closed")
        entry = common.LogEntry(
            match_id=self.match_id,
            seq=self._seq + 1,
            prev_hash=self._prev_hash,
            schema_version=LOG_SCHEMA_VERSION,
            event=event,
        )
        entry.time.FromDatetime(when or datetime.now(UTC))
        line = entry_to_line(entry)
        self._file.write(line + "\n")
        self._file.flush()
        self._seq += 1
        self._prev_hash = line_hash(line)
        return entry

    def close(self) -> None:
        if self.closed:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self.closed = True
