"""Start-up without the cyclic garbage collector: the objects start-up makes live as long as the process.

Importing the SDK, pydantic and SQLAlchemy and building the tool table makes ~130,000 long-lived
objects and almost no garbage, yet the collector walks them again and again while they are made: a
third of a second of CPU on a 2-core machine, a quarter of `ralph-desk mcp`'s time to its first
answer. So the collector is paused while the server is built, and what was built is frozen (moved
out of every later collection) when it resumes: once the store is open over stdio (whose handshake
is answered before), when serving starts over HTTP, and at the latest when `run_mcp` returns.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("ralph_desk.mcp")

_lock = threading.Lock()
_paused = False


@contextmanager
def paused_while_starting() -> Iterator[None]:
    """Pause the collector for the block, unless it was off already; it resumes at `resume()` or the end.

    A block that ends before `resume()` (a refused start, a client gone before the store opened)
    turns the collector back on without freezing anything: nothing is left to serve.
    """
    global _paused
    with _lock:
        pausing = gc.isenabled() and not _paused
        if pausing:
            gc.disable()
            _paused = True
    try:
        yield
    finally:
        if pausing:
            with _lock:
                if _paused:
                    _paused = False
                    gc.enable()


def resume() -> None:
    """Freeze what start-up made and collect again from here on (nothing if this module did not pause)."""
    global _paused
    with _lock:
        if _paused:
            _paused = False
            gc.freeze()
            gc.enable()
            log.info("start-up over: %d objects frozen, garbage collection on", gc.get_freeze_count())
