"""What the Loop pane shows of the loop's state, and which buttons each state allows (Qt-free)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
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
class Backlog:
    """How many tasks wait, and on what (from the task statuses)."""

    runnable: int = 0
    needs_input: int = 0
    drafts: int = 0
    blocked: int = 0
    failed: int = 0
    in_review: int = 0
    finished: int = 0

    @classmethod
    def of(cls, statuses: Iterable[TaskStatus]) -> Backlog:
        """Count tasks by what they wait on."""
        counts = Counter(statuses)
        return cls(
            runnable=counts[TaskStatus.PENDING] + counts[TaskStatus.IN_PROGRESS],
            needs_input=counts[TaskStatus.NEEDS_INPUT],
            drafts=counts[TaskStatus.DRAFT],
            blocked=counts[TaskStatus.BLOCKED],
            failed=counts[TaskStatus.FAILED],
            in_review=counts[TaskStatus.IN_REVIEW],
            finished=counts[TaskStatus.DONE] + counts[TaskStatus.SKIPPED],
        )

    @property
    def all_done(self) -> bool:
        """Every task is done or skipped (and there is at least one)."""
        return self.finished > 0 and not (
            self.runnable or self.needs_input or self.drafts or self.blocked or self.failed or self.in_review
        )

    @property
    def waiting_on(self) -> str:
        """What the person can do so work goes on ("2 questions to answer · 1 failed task")."""
        parts = [
            (self.needs_input, "task needs an answer", "tasks need answers"),
            (self.drafts, "suggested task awaits approval", "suggested tasks await approval"),
            (self.in_review, "task awaits review", "tasks await review"),
            (self.failed, "task failed", "tasks failed"),
            (self.blocked, "task is blocked", "tasks are blocked"),
        ]
        return " · ".join(f"{n} {one if n == 1 else many}" for n, one, many in parts if n)


@dataclass(frozen=True)
class LoopView:
    """Everything the pane's status line shows."""

    phase: Phase = Phase.IDLE
    reason: str = ""
    task: str = ""
    iteration: int = 0
    cost_usd: float = 0.0
    resumes_at: datetime | None = None
    backlog: Backlog = Backlog()

    @property
    def all_done(self) -> bool:
        """The loop has nothing left to do and nothing waits on the person."""
        return self.phase in (Phase.WAITING, Phase.IDLE, Phase.COMPLETED) and self.backlog.all_done

    @property
    def label(self) -> str:
        """The state in a few words ("rate-limited until 14:05")."""
        if self.all_done and self.phase is not Phase.COMPLETED:
            return "all work done"
        if self.phase is Phase.RATE_LIMITED and self.resumes_at is not None:
            return f"rate-limited until {fmt.local(self.resumes_at):%H:%M}"
        return LABELS[self.phase]

    @property
    def detail(self) -> str:
        """What the loop does now, or why it stopped."""
        if self.phase in (Phase.RUNNING, Phase.PAUSING, Phase.STOPPING) and self.task:
            return f"working on {self.task}"
        if self.all_done:
            done = fmt.plural(self.backlog.finished, "task")
            then = "the loop waits for new tasks" if self.phase is Phase.WAITING else "add tasks, then Start"
            return f"all {done} are done or skipped — {then}"
        waiting = self.backlog.waiting_on
        if self.phase is Phase.WAITING:
            return f"nothing is runnable — {waiting or 'waiting for new tasks'}; see the Inbox"
        if self.phase is Phase.PAUSING:
            return "pauses once the current session ends"
        if self.phase is Phase.IDLE:
            if not self.backlog.runnable and waiting:
                return f"nothing is runnable — {waiting}; see the Inbox"
            return "press Start to work through the pending tasks"
        return self.reason

    @property
    def figures(self) -> str:
        """Iterations and cost of the run."""
        if self.phase is Phase.IDLE:
            return ""
        return f"{fmt.plural(self.iteration, 'iteration')} · {fmt.money(self.cost_usd)} this run"
