"""Asyncio helpers of the loop: blocking work off the event loop, helper tasks ended cleanly."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def through(work: Callable[..., T], *args: object) -> T:
    """`work(*args)` off the event loop; a cancel waits for it to end (its writes land first)."""
    running = asyncio.ensure_future(asyncio.to_thread(work, *args))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await running
        raise


async def cancel(task: asyncio.Task[None] | None) -> None:
    """Cancel a helper task and wait for it, so that none is left pending when the event loop closes."""
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
