"""Many sessions at once (DESIGN §12): the loop keeps up to `parallel` sessions running, within limits of all.

Each session runs in its task's worktree with its own credential on the one embedded server. The
limits hold across sessions: max iterations counts sessions, the budget keeps room for what the running
sessions are expected to cost, a rate limit holds new starts (the running ones go on), Pause lets the
running sessions finish, Stop ends every agent. A session that fails never stops the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ralph_desk.domain.enums import LoopState, SessionOutcome
from ralph_desk.loop.model import FINISHED, IDLE_POLL_S, NOTHING_RUNNABLE, SessionPlan

if TYPE_CHECKING:
    from ralph_desk.loop.runner import LoopRunner, SessionResult

log = logging.getLogger("ralph_desk.loop.pool")


@dataclass
class _Pool:
    """The sessions one parallel loop runs, and what it learned from those that ended."""

    runner: LoopRunner
    running: dict[asyncio.Task[SessionResult | None], SessionPlan | None] = field(default_factory=dict)
    costs: list[float] = field(default_factory=list)
    idle: bool = False  # the last look for work found nothing runnable (beside the running sessions)
    failure: BaseException | None = None

    @property
    def expected_cost(self) -> float:
        """What a session is expected to cost: the average of this run's sessions so far."""
        return sum(self.costs) / len(self.costs) if self.costs else 0.0

    def hold_reason(self) -> str | None:
        """Why no new session may start now; None when one may."""
        runner, settings = self.runner, self.runner.settings
        status = runner.status
        if self.failure is not None:
            return "a session failed"
        if runner._ending or runner._pause_requested:
            return "stopping or paused"
        if status.resumes_at is not None and status.resumes_at > datetime.now(UTC):
            return "rate-limited"
        sessions = [plan for plan in self.running.values() if plan is not None]
        if len(sessions) >= settings.parallel:
            return "every slot is busy"
        if settings.max_iterations and status.iteration + len(sessions) >= settings.max_iterations:
            return "the running sessions reach max iterations"
        if settings.max_cost_usd is not None:
            left = settings.max_cost_usd - status.cost_usd - self.expected_cost * len(sessions)
            if left <= 0 or left < self.expected_cost:
                return "the budget left would not cover one more session"
        return None

    async def fill(self) -> None:
        """Start sessions until a limit, a full pool or nothing runnable."""
        runner = self.runner
        self.runner._resume_if_due()
        while self.hold_reason() is None:
            number = runner.status.iteration + len(self.running) + 1
            plan = await asyncio.to_thread(runner._next_plan, number)
            self.idle = plan is None
            if plan is None:
                return
            session = asyncio.create_task(runner.run_session(plan), name=f"ralph-{plan.session_id}")
            self.running[session] = plan

    async def wait_any(self) -> None:
        """Until a session ends, the person asks for something, or it is time to look for work again."""
        waker = asyncio.create_task(self.runner._wake.wait())
        timeout = IDLE_POLL_S if self.hold_reason() is None or self.runner.status.resumes_at else None
        try:
            await asyncio.wait([*self.running, waker], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waker
        self.runner._wake.clear()
        for task in [task for task in self.running if task.done()]:
            await self.ended(task, self.running.pop(task))

    async def ended(self, task: asyncio.Task[SessionResult | None], plan: SessionPlan | None) -> None:
        """Take in one ended session (or review)."""
        runner = self.runner
        try:
            result = task.result()
        except Exception as error:
            log.error("session %s failed", plan.session_id if plan else "review", exc_info=error)
            self.failure = self.failure or error
            return
        if result is None:
            return
        if result.outcome is SessionOutcome.RATE_LIMITED:
            runner._hold_for_rate_limit(result.summary)
            return
        runner._backoff.reset()
        self.costs.append(result.summary.cost_usd)
        runner.status.iteration += 1
        if not runner._ending:
            runner._set_state(LoopState.RATE_LIMITED if runner.status.resumes_at else LoopState.RUNNING)
        if plan is not None and result.decision is not None and result.decision.status in FINISHED:
            self.running[asyncio.create_task(_review(runner, plan))] = None

    async def idle_turn(self) -> bool:
        """Nothing runs: wait for whatever holds new starts; False when the loop is over."""
        runner = self.runner
        status = runner.status
        limit = runner._limit_reached()
        if limit is not None:
            runner._set_state(LoopState.STOPPED if runner._ending else LoopState.COMPLETED, limit)
            return False
        if self.failure is not None:
            raise self.failure
        if runner._pause_requested:
            await runner._wait_paused()
        elif status.resumes_at is not None:
            await self._wait_for_resume()
        elif self.hold_reason() is not None:
            reason = f"reached the cost budget of ${runner.settings.max_cost_usd:.2f} for one more session"
            runner._set_state(LoopState.COMPLETED, reason)
            return False
        elif self.idle:
            if runner.exit_when_idle:
                runner._set_state(LoopState.COMPLETED, NOTHING_RUNNABLE)
                return False
            await runner._wait_for_work()
        return True

    async def _wait_for_resume(self) -> None:
        """A rate limit: new sessions start together once its time has come (or on a wake)."""
        runner = self.runner
        resumes = runner.status.resumes_at
        assert resumes is not None
        runner._wake.clear()
        with contextlib.suppress(TimeoutError):
            delay = max(0.0, (resumes - datetime.now(UTC)).total_seconds())
            await asyncio.wait_for(runner._wake.wait(), timeout=delay)
        runner._wake.clear()
        runner.status.resumes_at = None
        if not runner._ending:
            runner._set_state(LoopState.RUNNING)

    async def settle(self) -> None:
        """The loop ends (a failure, a cancel): every agent is ended and every session recorded."""
        if not self.running:
            return
        self.runner._terminate()
        await asyncio.gather(*self.running, return_exceptions=True)
        self.running.clear()


async def _review(runner: LoopRunner, plan: SessionPlan) -> SessionResult | None:
    """The periodic review of the feature a session finished in, when one is due."""
    await runner._maybe_review(plan)
    return None


async def run_pool(runner: LoopRunner) -> None:
    """Run up to `runner.settings.parallel` sessions at once until a limit, a stop or idleness."""
    pool = _Pool(runner)
    try:
        while True:
            await pool.fill()
            if pool.running:
                pool.runner._resume_if_due()
                await pool.wait_any()
            elif not await pool.idle_turn():
                return
    finally:
        await pool.settle()
