"""What the Loop pane shows of the loop's state, and which buttons each state allows (Qt-free)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from ralph_desk.domain.enums import LoopState, TaskStatus
from ralph_desk.gui import fmt


class Phase(StrEnum):
    """The loop as the window sees it: the runner's states, plus the moments between them."""

    IDLE = "idle"
    STARTING = "starting"
    RUNNING = "running"
    WAITING = "waiting"
    PAUSING = "pausing"
    PAUSED = "paused"
    RATE_LIMITED = "rate_limited"
    STOPPING = "stopping"
    STOPPED = "stopped"
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass(frozen=True)
class Buttons:
    """Which loop buttons can be pressed."""

    start: bool
    pause: bool
    resume: bool
    stop: bool


_IDLE = Buttons(start=True, pause=False, resume=False, stop=False)
_ACTIVE = Buttons(start=False, pause=True, resume=False, stop=True)
_HELD = Buttons(start=False, pause=False, resume=True, stop=True)
BUTTONS: dict[Phase, Buttons] = {
    Phase.IDLE: _IDLE,
    Phase.STARTING: Buttons(start=False, pause=False, resume=False, stop=True),
    Phase.RUNNING: _ACTIVE,
    Phase.WAITING: _ACTIVE,
    Phase.RATE_LIMITED: _ACTIVE,
    Phase.PAUSING: _HELD,
    Phase.PAUSED: _HELD,
    Phase.STOPPING: Buttons(start=False, pause=False, resume=False, stop=False),
    Phase.STOPPED: _IDLE,
    Phase.COMPLETED: _IDLE,
    Phase.FAILED: _IDLE,
}
LABELS: dict[Phase, str] = {
    Phase.IDLE: "not running",
    Phase.STARTING: "starting",
    Phase.RUNNING: "running",
    Phase.WAITING: "waiting for input",
    Phase.PAUSING: "pausing",
    Phase.PAUSED: "paused",
    Phase.RATE_LIMITED: "rate-limited",
    Phase.STOPPING: "stopping",
    Phase.STOPPED: "stopped",
    Phase.COMPLETED: "completed",
    Phase.FAILED: "failed",
}
# The task status whose colour each phase borrows.
COLORS: dict[Phase, TaskStatus] = {
    Phase.IDLE: TaskStatus.SKIPPED,
    Phase.STARTING: TaskStatus.PENDING,
    Phase.RUNNING: TaskStatus.IN_PROGRESS,
    Phase.WAITING: TaskStatus.NEEDS_INPUT,
    Phase.PAUSING: TaskStatus.PENDING,
    Phase.PAUSED: TaskStatus.PENDING,
    Phase.RATE_LIMITED: TaskStatus.BLOCKED,
    Phase.STOPPING: TaskStatus.SKIPPED,
    Phase.STOPPED: TaskStatus.SKIPPED,
    Phase.COMPLETED: TaskStatus.DONE,
    Phase.FAILED: TaskStatus.FAILED,
}
ACTIVE = frozenset(
    {
        Phase.STARTING,
        Phase.RUNNING,
        Phase.WAITING,
        Phase.PAUSING,
        Phase.PAUSED,
        Phase.RATE_LIMITED,
        Phase.STOPPING,
    }
)


def phase_of(state: LoopState) -> Phase:
    """The phase of a runner state."""
    return Phase(state.value)


@dataclass(frozen=True)
class LoopView:
    """Everything the pane's status line shows."""

    phase: Phase = Phase.IDLE
    reason: str = ""
    task: str = ""
    iteration: int = 0
    cost_usd: float = 0.0
    resumes_at: datetime | None = None

    @property
    def label(self) -> str:
        """The state in a few words ("rate-limited until 14:05")."""
        if self.phase is Phase.RATE_LIMITED and self.resumes_at is not None:
            return f"rate-limited until {fmt.local(self.resumes_at):%H:%M}"
        return LABELS[self.phase]

    @property
    def detail(self) -> str:
        """What the loop does now, or why it stopped."""
        if self.phase in (Phase.RUNNING, Phase.PAUSING, Phase.STOPPING) and self.task:
            return f"working on {self.task}"
        if self.phase is Phase.WAITING:
            return "nothing is runnable — answer questions or approve suggestions in the Inbox"
        if self.phase is Phase.PAUSING:
            return "pauses once the current session ends"
        if self.phase is Phase.IDLE:
            return "press Start to work through the pending tasks"
        return self.reason

    @property
    def figures(self) -> str:
        """Iterations and cost of the run."""
        if self.phase is Phase.IDLE:
            return ""
        return f"{fmt.plural(self.iteration, 'iteration')} · {fmt.money(self.cost_usd)} this run"
