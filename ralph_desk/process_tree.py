"""Agent processes in a group of their own, so that stopping one stops everything it started.

POSIX: a new session (and process group) per agent; stopping sends SIGTERM to the group, then SIGKILL.
Windows: a new process group; stopping sends CTRL_BREAK to the group, then `taskkill /T /F` to the tree.
A stop signal (SIGINT, SIGTERM) reaches the event loop on both, with or without loop signal handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable
from typing import Any


def own_group() -> dict[str, Any]:
    """Keyword arguments for `asyncio.create_subprocess_exec` that start the process in a group of its own."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def signal_tree(pid: int, *, force: bool) -> None:
    """Ask the group led by `pid` to end (`force`: end it now); a group already gone is no error."""
    if sys.platform == "win32":
        if force:
            # A job object would also reach children whose parent is gone; taskkill needs no ctypes.
            with contextlib.suppress(OSError):
                subprocess.run(
                    ["taskkill", "/T", "/F", "/PID", str(pid)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                    creationflags=subprocess.CREATE_NO_WINDOW,
                )
        else:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.CTRL_BREAK_EVENT)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL if force else signal.SIGTERM)


async def stop_tree(process: asyncio.subprocess.Process, grace_s: float) -> None:
    """Ask the process and all it started to end; kill what is left once it exits or after `grace_s`."""
    if process.returncode is not None:
        return
    signal_tree(process.pid, force=False)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), timeout=grace_s)
    # Even when the leader obeyed, children it left behind in its group (MCP servers, shells) are ended.
    signal_tree(process.pid, force=True)


def on_stop_signals(
    loop: asyncio.AbstractEventLoop, stop: Callable[[], None], signals: Iterable[int]
) -> Callable[[], None]:
    """Call `stop` in `loop` when one of `signals` arrives; returns what puts the old handling back.

    POSIX: the loop's own signal handlers. Windows' event loops have none: `signal.signal`, handed over.
    """
    wanted = tuple(signals)
    try:
        for signum in wanted:
            loop.add_signal_handler(signum, stop)
    except NotImplementedError:
        previous = {
            signum: signal.signal(signum, lambda *_: loop.call_soon_threadsafe(stop)) for signum in wanted
        }

        def put_back() -> None:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

        return put_back

    def remove() -> None:
        for signum in wanted:
            loop.remove_signal_handler(signum)

    return remove
