"""structlog set-up: JSON lines by default, readable on a terminal, bound to match and seat."""

from __future__ import annotations

import logging
import sys
from typing import Literal, TextIO

import structlog

Format = Literal["json", "console", "auto"]


def configure_logging(
    fmt: Format = "auto", level: str = "info", stream: TextIO | None = None
) -> None:
    """Route structlog to stderr (or ``stream``); ``auto`` is console on a terminal and
    JSON elsewhere."""
    stream = stream or sys.stderr
    if fmt == "auto":
        fmt = "console" if stream.isatty() else "json"
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer() if fmt == "console" else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
