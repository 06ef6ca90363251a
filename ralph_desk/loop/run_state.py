"""A loop run's state: its status, the person's requests, its listeners, its limits and waits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ralph_desk.checks.runner import Stop
from ralph_desk.domain.enums import ChangeTopic, LoopState
from ralph_desk.loop.limits import Backoff
from ralph_desk.loop.model import IDLE_POLL_S, EventKind, LiveEvent, LoopSettings, SessionPlan, StreamSummary
from ralph_desk.services.container import Services

log = logging.getLogger("ralph_desk.loop")

# Changes that may make work runnable; the loop's own records (its run, its sessions) are not among them.
WORK_TOPICS = frozenset(
    {
        ChangeTopic.TASKS,
        ChangeTopic.DEPENDENCIES,
        ChangeTopic.SIGNALS,
        ChangeTopic.INBOX,
        ChangeTopic.REVIEWS,
        ChangeTopic.MERGES,
    }
)
RESUME_CHECK_S = 0.5  # how soon a session held by a rate limit notices a stop

EventListener = Callable[[LiveEvent], None]


@dataclass
class LoopStatus:
    """The loop's state as the window, the CLI and `ralph_status` show it."""

    state: LoopState = LoopState.STOPPED
    loop_run_id: int | None = None
    iteration: int = 0
    cost_usd: float = 0.0
    current_task_id: int | None = None
    current_session_id: str | None = None
    resumes_at: datetime | None = None
    stop_reason: str | None = None
    completed: int = 0
    failed: int = 0
    running: dict[str, int | None] = field(default_factory=dict)  # session id → task id, in start order


class RunState:
    """What one loop run knows and was asked: shared by its scheduler and its sessions."""

    def __init__(self, services: Services, settings: LoopSettings) -> None:
        self.services = services
        self.settings = settings
        self.status = LoopStatus()
        self.listeners: list[EventListener] = []
        self.stop_requested = False
        self.stop_after_session = False
        self.pause_requested = False
        self.wake = asyncio.Event()
        self.checks_stop = Stop()  # a stop ends the checks running now too
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.backoff = Backoff(settings.rate_limit_wait_s, settings.rate_limit_max_wait_s)
        # The run's state is written off the event loop (the window's thread), in the order it changed.
        self._writer: ThreadPoolExecutor | None = None
        self._written: Future[None] | None = None

    @property
    def ending(self) -> bool:
        """Whether the person asked the loop to stop, now or after the session."""
        return self.stop_requested or self.stop_after_session

    def emit(self, event: LiveEvent) -> None:
        """Hand an event to every listener (a failing listener is logged, the others still hear it)."""
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                log.exception("loop event listener failed")

    def emit_from_thread(self, event: LiveEvent) -> None:
        """Hand an event from another thread to the listeners, on the event loop (dropped without one)."""
        if self.event_loop is not None and not self.event_loop.is_closed():
            self.event_loop.call_soon_threadsafe(self.emit, event)

    def open_record(self) -> None:
        """Start the thread that writes the run's state into the database."""
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ralph-loop-state")

    async def close_record(self) -> None:
        """Wait until every state handed to the writer is in the database, then end its thread."""
        if self._written is not None:
            await asyncio.wrap_future(self._written)
        if self._writer is not None:
            self._writer.shutdown(wait=False)
        self._writer = None

    def set_state(self, state: LoopState, reason: str | None = None) -> None:
        """Change the run's state: announced at once, recorded off the event loop."""
        self.status.state = state
        if reason is not None:
            self.status.stop_reason = reason
        resumes = self.status.resumes_at.isoformat() if self.status.resumes_at else None
        self.emit(LiveEvent(EventKind.LOOP_STATE, state.value, {"reason": reason, "resumes_at": resumes}))
        status = self.status
        if status.loop_run_id is not None and self._writer is not None:
            self._written = self._writer.submit(
                self._write,
                status.loop_run_id,
                state.value,
                status.iteration,
                status.cost_usd,
                status.stop_reason,
            )

    def _write(
        self, loop_run_id: int, state: str, iterations: int, cost_usd: float, stop_reason: str | None
    ) -> None:
        """On the writer's thread: record the run's state (a failure is logged; the next retries)."""
        try:
            self.services.sessions.update_loop_run(
                loop_run_id, state=state, iterations=iterations, cost_usd=cost_usd, stop_reason=stop_reason
            )
        except Exception:
            log.exception("could not record loop run %s as %s", loop_run_id, state)

    def running_again(self) -> None:
        """Back to running unless the person asked the loop to stop."""
        if not self.ending:
            self.set_state(LoopState.RUNNING)

    def session_started(self, plan: SessionPlan) -> None:
        """The session runs: the status names it as the current one."""
        self.status.current_task_id = plan.task.id if plan.task else None
        self.status.current_session_id = plan.session_id
        self.status.running[plan.session_id] = self.status.current_task_id

    def forget(self, plan: SessionPlan) -> None:
        """The session no longer runs: the status names the latest one still running, if any."""
        self.status.running.pop(plan.session_id, None)
        latest = next(reversed(self.status.running.items()), None)
        self.status.current_session_id, self.status.current_task_id = latest if latest else (None, None)

    def limit_reached(self) -> str | None:
        """Why the run must end now (a stop, max iterations, the budget); None when it may go on."""
        if self.stop_requested:
            return "stopped by the human"
        if self.stop_after_session:
            return "stopped by the human after the session"
        settings, status = self.settings, self.status
        if settings.max_iterations and status.iteration >= settings.max_iterations:
            return f"reached the maximum of {settings.max_iterations} iterations"
        if settings.max_cost_usd is not None and status.cost_usd >= settings.max_cost_usd:
            return f"reached the cost budget of ${settings.max_cost_usd:.2f} (spent ${status.cost_usd:.2f})"
        return None

    def hold_for_rate_limit(self, summary: StreamSummary) -> float:
        """Set when new sessions may start again after a rate limit; the seconds until then."""
        now = datetime.now(UTC)
        # A reset time from the agent's stream wins over the loop's own doubling wait.
        resumes = summary.resets_at if summary.resets_at and summary.resets_at > now else None
        delay = (resumes - now).total_seconds() if resumes else self.backoff.next_wait()
        self.status.resumes_at = resumes or datetime.fromtimestamp(now.timestamp() + delay, UTC)
        self.set_state(
            LoopState.RATE_LIMITED,
            f"rate-limited until {self.status.resumes_at:%H:%M:%S} UTC (in {delay:.3g} s)",
        )
        return delay

    def resume_if_due(self) -> None:
        """A rate limit whose time has come ends, and says so before any session starts again."""
        resumes = self.status.resumes_at
        if resumes is not None and resumes <= datetime.now(UTC):
            self.status.resumes_at = None
            self.running_again()

    async def after_rate_limit(self) -> None:
        """A session prepared while a sibling met a rate limit starts once it has passed, with the rest."""
        while not self.ending and (resumes := self.status.resumes_at) is not None:
            delay = (resumes - datetime.now(UTC)).total_seconds()
            if delay > 0:
                await asyncio.sleep(min(delay, RESUME_CHECK_S))
            self.resume_if_due()

    async def wait_for_resume(self) -> None:
        """A rate limit: new sessions start together once its time has come (or on a wake)."""
        resumes = self.status.resumes_at
        assert resumes is not None
        self.wake.clear()
        with contextlib.suppress(TimeoutError):
            delay = max(0.0, (resumes - datetime.now(UTC)).total_seconds())
            await asyncio.wait_for(self.wake.wait(), timeout=delay)
        self.wake.clear()
        self.status.resumes_at = None
        self.running_again()

    async def wait_paused(self) -> None:
        """Hold until the person resumes or stops the loop."""
        self.set_state(LoopState.PAUSED, "paused after the session")
        while self.pause_requested and not self.ending:
            self.wake.clear()
            await self.wake.wait()
        self.running_again()

    async def wait_for_work(self, reason: str, seen: int) -> None:
        """Nothing runnable: say why (once per reason), then wait for a wake or a change to the work after
        change `seen` (read before the reason was)."""
        if self.status.state is not LoopState.WAITING or self.status.stop_reason != reason:
            self.set_state(LoopState.WAITING, reason)
        while not self.ending and not self.wake.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=IDLE_POLL_S)
            seen, changes = self.services.db.changes_since(seen)
            if any(change.topic in WORK_TOPICS for change in changes):
                break
        self.wake.clear()
