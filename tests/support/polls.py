"""Bounded polls: wait for what a test expects to happen, up to a limit, instead of a
fixed sleep (too short on a loaded machine, wasted on an idle one)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def until(
    check: Callable[[], T | Awaitable[T]], what: str, timeout: float = 10.0, every: float = 0.02
) -> T:
    """``check()`` (awaited when it is a coroutine) until it is truthy; its value. Fails
    with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(every)


def until_sync(check: Callable[[], T], what: str, timeout: float = 10.0, every: float = 0.02) -> T:
    """``until`` for a test without an event loop."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(every)
