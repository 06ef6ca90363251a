"""What the page may do to the loop that runs in this process: see it, pause, resume and stop it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class LoopView:
    """The loop as the page shows it."""

    state: str
    detail: str = ""
    running: bool = False
    paused: bool = False
    current_task_id: int | None = None


NO_LOOP = LoopView("not running here", "no loop runs in the process that serves this page")


class LoopSwitch(Protocol):
    """The loop of the serving process (the window's, `ralph-desk run`'s); called on its asyncio thread."""

    def view(self) -> LoopView: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def stop(self) -> None: ...
