"""Append-only writer of a match's event log, one hash-chained JSON line per event.

A decision's entries are written with one ``write`` and reach the OS before ``append``
returns; the fsync policy says when they are also forced to the disk. A write that fails
(a full disk) is cut back off the file, so the log never ends in a torn line it wrote.

A log is created private (mode 0600, whatever the umask and the folder's mode): from its
first event it holds all four hands, and a bot that could read it would know every card.
``publish()`` opens it to every local user (0644) once its match is over, when asked for
(``referee serve --publish-logs``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import enum
import hashlib
import os
from collections.abc import Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import BinaryIO

from referee.files import create_private_file
from referee.log.fastjson import timestamp_json, to_json
from referee.protocol import LOG_SCHEMA_VERSION, common


class FsyncPolicy(enum.StrEnum):
    """When the log is forced to the disk (it always reaches the OS at once, so a killed
    referee loses nothing; fsync protects against a lost machine)."""

    EVERY_EVENT = "every-event"
    EVERY_HAND = "every-hand"
    NEVER = "never"
    """Only when the log is closed."""


class LogWriteError(OSError):
    """The log could not be written (the disk is full or gone); the match cannot go on."""


def entry_to_line(entry: common.LogEntry) -> str:
    """The log line of an entry: compact JSON, proto field names, no newline."""
    return to_json(entry)


_syncer: concurrent.futures.ThreadPoolExecutor | None = None


def _fsync_later(fd: int) -> None:
    """fsync and close ``fd`` on the syncing thread (its pending work is finished at
    interpreter exit, so a stopped server still forces every closed log to disk)."""
    global _syncer
    if _syncer is None:
        _syncer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="log-fsync")
    _syncer.submit(_fsync_and_close, fd)


def _fsync_and_close(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def line_hash(line: str | bytes) -> str:
    """The hash chain's link: SHA-256 (hex) of a line's UTF-8 bytes, without its newline."""
    return hashlib.sha256(line.encode("utf-8") if isinstance(line, str) else line).hexdigest()


_HAND_BOUNDARIES = ("hand_ended", "match_ended")


class EventLogWriter:
    """Writes a match's entries in order; ``create`` a new log or ``resume`` one."""

    def __init__(
        self,
        path: Path,
        match_id: str,
        file: BinaryIO,
        seq: int,
        prev_hash: str,
        size: int,
        fsync: FsyncPolicy,
    ) -> None:
        self.path = path
        self.match_id = match_id
        self._file = file
        self._fd = file.fileno()
        self._seq = seq
        self._prev_hash = prev_hash
        self.size = size
        """Bytes in the file."""
        self.fsync = fsync
        self.closed = False
        # The line of a LogEntry in its fields' order (match_id, seq, time, prev_hash,
        # schema_version, event, command), as entry_to_line writes it, without the entry.
        self._head = ('{"match_id":' + encode_basestring(match_id) + ",") if match_id else "{"
        self._version = f',"schema_version":{LOG_SCHEMA_VERSION}' if LOG_SCHEMA_VERSION else ""

    @classmethod
    def create(
        cls, path: Path, match_id: str, fsync: FsyncPolicy = FsyncPolicy.NEVER
    ) -> EventLogWriter:
        """A new, empty log (mode 0600); FileExistsError when one is there."""
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not create_private_file(path, b"", sync=False):
            raise FileExistsError(f"a log is already at {path}")
        file = open(path, "r+b")  # noqa: SIM115
        return cls(path, match_id, file, 0, "", 0, fsync)

    @classmethod
    def resume(
        cls,
        path: Path,
        match_id: str,
        seq: int,
        last_line: str,
        size: int,
        fsync: FsyncPolicy = FsyncPolicy.NEVER,
    ) -> EventLogWriter:
        """Continue a log whose whole lines end at byte ``size`` (anything after is cut)."""
        file = open(path, "r+b")  # noqa: SIM115
        file.truncate(size)
        file.seek(size)
        return cls(
            path, match_id, file, seq, line_hash(last_line) if last_line else "", size, fsync
        )

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def last_hash(self) -> str:
        """SHA-256 of the last line written (the log's final hash once it is closed)."""
        return self._prev_hash

    def append(
        self,
        events: Sequence[common.Event],
        at: int,
        command: common.Command | None = None,
    ) -> None:
        """Write one decision: its events at time ``at`` (µs), the command on the first.

        Raises LogWriteError and leaves the file as it was when the write fails.
        """
        if self.closed:
            raise LogWriteError(f"the log of match {self.match_id} is closed")
        if not events:
            return
        seconds, micros = divmod(at, 1_000_000)
        when = '","time":"' + timestamp_json(seconds, micros * 1000) + '"'
        head, version = self._head, self._version
        first_end = "}" if command is None else ',"command":' + to_json(command) + "}"
        lines: list[bytes] = []
        prev = self._prev_hash
        seq = self._seq
        for event in events:
            seq += 1
            line = (
                f'{head}"seq":"{seq}{when}'
                + (f',"prev_hash":"{prev}"' if prev else "")
                + f'{version},"event":{to_json(event)}'
                + (first_end if not lines else "}")
            ).encode("utf-8")
            prev = line_hash(line)
            lines.append(line)
        data = b"\n".join(lines) + b"\n"
        try:
            written = os.write(self._fd, data)
            while written < len(data):
                written += os.write(self._fd, data[written:])
            if self.fsync is FsyncPolicy.EVERY_EVENT or (
                self.fsync is FsyncPolicy.EVERY_HAND
                and any(e.WhichOneof("kind") in _HAND_BOUNDARIES for e in events)
            ):
                os.fsync(self._fd)
        except OSError as exc:
            self._cut_back()
            raise LogWriteError(f"cannot write the log of match {self.match_id}: {exc}") from exc
        self._seq = seq
        self._prev_hash = prev
        self.size += len(data)

    def _cut_back(self) -> None:
        try:
            os.ftruncate(self._fd, self.size)
            os.lseek(self._fd, self.size, os.SEEK_SET)
        except OSError:
            pass  # the disk is gone: a restart cuts the torn line when it reads the log

    def write_trailer(self, line: str) -> None:
        """Append a line outside the hash chain (the signature trailer)."""
        data = (line + "\n").encode("utf-8")
        try:
            os.write(self._fd, data)
        except OSError as exc:
            self._cut_back()
            raise LogWriteError(f"cannot write the log of match {self.match_id}: {exc}") from exc
        self.size += len(data)

    def publish(self) -> None:
        """Let every local user read the log (its match is over: nothing in it is secret
        any more). Best effort: a log that cannot be changed stays private."""
        with contextlib.suppress(OSError):
            os.fchmod(self._fd, 0o644)

    def close(self) -> None:
        """Close the file; its fsync runs on a thread of its own (readers see every line
        at once: the fsync only guards against losing the machine), so a server's event
        loop never waits on the disk when a match ends."""
        if self.closed:
            return
        self.closed = True
        try:
            fd = os.dup(self._fd)
        except OSError:
            fd = -1
        self._file.close()
        if fd >= 0:
            _fsync_later(fd)
