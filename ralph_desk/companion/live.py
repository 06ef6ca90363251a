"""Live updates for open pages: one poll of the database's change log, fanned out as server-sent events."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio.to_thread

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.records import Change
from ralph_desk.store.database import Database

log = logging.getLogger("ralph_desk.companion")

POLL_S = 0.5
HEARTBEAT_S = 15.0
UNSHOWN = frozenset({ChangeTopic.COMPANION.value})
"""Topics no page shows: a device's last use is written as the page is used, and must not reload it."""


class ChangeStream:
    """Follows the change log while a page listens; each listener gets the topics that changed."""

    def __init__(self, db: Database, poll_s: float = POLL_S) -> None:
        self.db = db
        self.poll_s = poll_s
        self._listeners: set[asyncio.Queue[list[str] | None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def _follow(self, since: int) -> None:
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        # A write in this process (the window's, its agents') is heard at once; other processes' at the poll.
        def heard(_changes: list[Change]) -> None:
            loop.call_soon_threadsafe(wake.set)

        unsubscribe = self.db.subscribe(heard)
        try:
            await self._poll(since, wake)
        finally:
            unsubscribe()
            self._task = None

    async def _poll(self, since: int, wake: asyncio.Event) -> None:
        while self._listeners:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=self.poll_s)
            wake.clear()
            try:
                since, changes = await anyio.to_thread.run_sync(self.db.changes_since, since)
            except Exception:  # the top of a poll: logged, and polling goes on
                log.warning("the companion's change poll failed", exc_info=True)
                continue
            topics = sorted({str(change.topic) for change in changes})
            if topics:
                for listener in self._listeners:
                    listener.put_nowait(topics)

    async def events(self, still_paired: Callable[[], Awaitable[bool]]) -> AsyncIterator[str]:
        """Server-sent events for one page: `changed` with the topics, and a comment now and then.

        The stream ends at the first heartbeat or change after its device is revoked."""
        queue: asyncio.Queue[list[str] | None] = asyncio.Queue()
        if self._closed:
            return
        if self._task is None:  # the starting point is read before the page hears it is connected
            since = await anyio.to_thread.run_sync(self.db.latest_change_id)
            if self._task is None:
                self._task = asyncio.create_task(self._follow(since), name="ralph-companion-changes")
        self._listeners.add(queue)
        try:
            yield "retry: 3000\n\n"
            while True:
                try:
                    topics = await asyncio.wait_for(queue.get(), timeout=HEARTBEAT_S)
                except TimeoutError:
                    topics = []
                if topics is None or not await still_paired():
                    return
                if not topics:
                    yield ": still here\n\n"
                    continue
                shown = [topic for topic in topics if topic not in UNSHOWN]
                if shown:
                    yield f"event: changed\ndata: {json.dumps({'topics': shown})}\n\n"
        finally:
            self._listeners.discard(queue)

    async def close(self) -> None:
        """End every open stream (the server is stopping) and the poll."""
        self._closed = True
        for listener in self._listeners:
            listener.put_nowait(None)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
