"""Worker processes for CPU work (verifying logs), which end with the process that made
them, and leave Ctrl-C to it.

A ``ProcessPoolExecutor``'s workers wait on its queues, whose write ends every worker
holds too: when the process that made the pool is killed outright (SIGKILL, the OOM
killer), they would wait forever. Each worker here watches its parent and ends when it
is gone, whichever thread made it (unlike PR_SET_PDEATHSIG, which follows the thread).

A terminal's Ctrl-C is a SIGINT to the whole process group, workers included: each would
print its own ``KeyboardInterrupt`` traceback under the parent's orderly "Stopped after
N of M matches". The parent alone decides what Ctrl-C does (it shuts the pool down), so a
worker ignores SIGINT. A worker is started with SIGINT blocked (the mask of the thread
that starts it, which the process inherits through exec) until its initializer has
set it ignored, so a Ctrl-C while it starts is dropped too, not turned into a traceback
of Python's start-up.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import ParamSpec, TypeVar

PARENT_CHECK_S = 1.0
"""How often a worker looks whether its parent is still there."""

P = ParamSpec("P")
T = TypeVar("T")


def _start_worker(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a SIGINT pending since its start is dropped
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    if os.getppid() != parent:  # gone before the worker started
        os._exit(1)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class _Pool(ProcessPoolExecutor):
    """Starts its workers (on ``submit``, as they are needed) with SIGINT blocked."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return super().submit(fn, *args, **kwargs)
        finally:  # a Ctrl-C that came meanwhile is delivered now, to this process
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, started fresh ("spawn": never fork a process that
    runs gRPC threads), that end within a second or so of this process's death and
    ignore Ctrl-C (the process that made them handles it)."""
    pool: ProcessPoolExecutor = _Pool(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )
    return pool
