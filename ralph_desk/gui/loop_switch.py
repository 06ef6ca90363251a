"""The window's loop as the companion page sees it: its state, and the Loop pane's pause, resume and stop."""

from __future__ import annotations

from collections.abc import Callable

from ralph_desk.companion.switch import LoopView
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.gui.panes.loop.wiring import LoopWiring

HELD = frozenset({Phase.PAUSING, Phase.PAUSED})


class WindowLoopSwitch:
    """A `LoopSwitch` over the Loop pane's wiring (called on the window's event loop: the GUI thread)."""

    def __init__(self, wiring: Callable[[], LoopWiring | None]) -> None:
        self._wiring = wiring

    def view(self) -> LoopView:
        """The loop as the Loop pane shows it."""
        wiring = self._wiring()
        if wiring is None:
            return LoopView("not running", "the window's Loop pane is not ready")
        shown = wiring.view
        runner = wiring.runner
        return LoopView(
            state=shown.label,
            detail=" · ".join(part for part in (shown.task, shown.reason) if part),
            running=wiring.running,
            paused=shown.phase in HELD,
            current_task_id=runner.status.current_task_id if runner is not None else None,
        )

    def pause(self) -> None:
        """As the Pause button: hold the loop after the current session."""
        wiring = self._wiring()
        if wiring is not None:
            wiring.pause()

    def resume(self) -> None:
        """As the Resume button."""
        wiring = self._wiring()
        if wiring is not None:
            wiring.resume()

    def stop(self) -> None:
        """Stop now (the window's "Stop now"): nobody is at the window to answer its question."""
        wiring = self._wiring()
        if wiring is not None:
            wiring.stop_now()
