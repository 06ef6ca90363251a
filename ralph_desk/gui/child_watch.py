"""Agents' exits reach the window's event loop through a pidfd, not a thread started per child."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def pidfd_child_watcher(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While inside, child processes' exits reach `loop` through a pidfd; the previous watcher after.

    Python 3.11's default watcher starts a thread for every child and waits until it runs: on the GUI
    thread, with the GIL busy, that wait held the window up to ~50 ms per agent started. Python 3.12
    watches by pidfd already, and without pidfds (not Linux) nothing changes.
    """
    if sys.platform == "win32" or sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        yield
        return
    previous = asyncio.get_child_watcher()
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(loop)
    asyncio.set_child_watcher(watcher)
    try:
        yield
    finally:
        asyncio.set_child_watcher(previous)
