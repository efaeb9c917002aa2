"""Why a log does not verify: the line and what is wrong with it."""

from __future__ import annotations


class VerifyError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message
