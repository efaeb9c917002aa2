"""Worker processes for CPU work (verifying logs), which end with the process that made
them.

A ``ProcessPoolExecutor``'s workers wait on its queues, whose write ends every worker
holds too: when the process that made the pool is killed outright (SIGKILL, the OOM
killer), they would wait forever. Each worker here watches its parent and ends when it
is gone, whichever thread made it (unlike PR_SET_PDEATHSIG, which follows the thread).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PARENT_CHECK_S = 1.0
"""How often a worker looks whether its parent is still there."""


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    if os.getppid() != parent:  # gone before the worker started
        os._exit(1)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, started fresh ("spawn": never fork a process that
    runs gRPC threads), that end within a second or so of this process's death."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )
