"""A loop control built on its first use, so that a server that never needs one does not load the loop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ralph_desk.domain.loop_results import (
        Progress,
        RalphHistoryResult,
        RalphInitResult,
        RalphRunResult,
        RalphStatusResult,
        RalphStopResult,
        RalphUnderstandResult,
        RalphValidateResult,
    )
    from ralph_desk.mcp_server.binding import LoopControl


class DeferredLoopControl:
    """A `LoopControl` built on its first use.

    The loop runner and the agents' adapters take ~50 ms to import; a server whose session never
    calls a loop-control tool (most stdio ones) should not pay that before its first answer.
    """

    def __init__(self, build: Callable[[], LoopControl]) -> None:
        self._build = build
        self._built: LoopControl | None = None
        self._lock = threading.Lock()

    @property
    def control(self) -> LoopControl:
        """The loop control, built now if this is the first use."""
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built

    def init(self, force: bool) -> RalphInitResult:
        return self.control.init(force)

    def validate(self) -> RalphValidateResult:
        return self.control.validate()

    def run(
        self,
        max_iterations: int | None,
        dry_run: bool,
        agent: str | None,
        allow_edits: bool,
        parallel: int | None = None,
        allowed_paths: list[str] | None = None,
        wait: bool = False,
        progress: Progress | None = None,
    ) -> RalphRunResult:
        return self.control.run(
            max_iterations, dry_run, agent, allow_edits, parallel, allowed_paths, wait, progress
        )

    def status(self, loop_id: int | None = None) -> RalphStatusResult:
        return self.control.status(loop_id)

    def stop(self) -> RalphStopResult:
        return self.control.stop()

    def history(
        self, limit: int, offset: int, iteration: int | None, kind: str, loop_id: int | None = None
    ) -> RalphHistoryResult:
        return self.control.history(limit, offset, iteration, kind, loop_id)

    def understand(self) -> RalphUnderstandResult:
        return self.control.understand()

    async def client_gone(self, now: bool = False) -> None:
        """A loop control never built has no loop to end."""
        with self._lock:
            built = self._built
        if built is not None:
            await built.client_gone(now)
