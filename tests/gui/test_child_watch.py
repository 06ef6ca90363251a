"""The window's event loop learns of an agent's exit through a pidfd, starting no thread per child."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from ralph_desk.gui.child_watch import pidfd_child_watcher

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"),
    reason="Python 3.12 watches children by pidfd already; elsewhere there is no pidfd",
)


async def exit_code_and_threads(code: int) -> tuple[int, list[str]]:
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", f"raise SystemExit({code})")
    threads = [thread.name for thread in threading.enumerate()]
    return await process.wait(), threads


def test_the_window_loop_sees_a_child_exit_without_a_thread_and_gives_the_old_watcher_back(
    qapp: QApplication,
) -> None:
    before = asyncio.get_child_watcher()
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    try:
        with pidfd_child_watcher(loop):
            code, threads = loop.run_until_complete(exit_code_and_threads(7))
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    assert code == 7
    assert not [name for name in threads if "waitpid" in name], threads  # 3.11's default starts one
    assert asyncio.get_child_watcher() is before
    assert asyncio.run(exit_code_and_threads(3))[0] == 3  # a plain asyncio loop after it runs children too
