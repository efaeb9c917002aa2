"""The event log: the source of truth for replay, verification and spectating.

One append-only JSON Lines file per match; each line is a ``LogEntry`` in the protobuf
JSON mapping, chained to the previous line by its SHA-256.
"""

from referee.log.reader import LogFormatError, LogLine, LogRead, read_log, read_log_lines
from referee.log.writer import EventLogWriter, entry_to_line

__all__ = [
    "EventLogWriter",
    "LogFormatError",
    "LogLine",
    "LogRead",
    "entry_to_line",
    "read_log",
    "read_log_lines",
]
