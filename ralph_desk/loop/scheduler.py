"""The one loop driver (DESIGN §7, §12): up to `parallel` sessions at once, within limits of all.

`parallel = 1` is one slot. Each session runs in its task's worktree with its own credential on the one
embedded server. The limits hold across sessions: max iterations counts sessions, the budget keeps room
for what the running sessions are expected to cost, a rate limit holds new starts (the running ones go
on), Pause lets the running sessions finish, Stop ends every agent. A review takes a slot like any
session. A session that fails never stops the others; the run then ends with its error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime

from ralph_desk.domain.enums import LoopState, Recipe, SessionOutcome, TaskStatus
from ralph_desk.loop import branches
from ralph_desk.loop.apply import unblock_ready
from ralph_desk.loop.idle import idle_report
from ralph_desk.loop.model import ALL_DONE, FINISHED, IDLE_POLL_S, NOTHING_RUNNABLE, SessionPlan
from ralph_desk.loop.planner import plan_next_task, plan_recipe_session
from ralph_desk.loop.run_parts import RunParts
from ralph_desk.loop.session import SessionRunner
from ralph_desk.loop.session_end import SessionResult

log = logging.getLogger("ralph_desk.loop.scheduler")

Running = dict[asyncio.Task[SessionResult | None], SessionPlan | None]


class Scheduler:
    """Starts sessions into free slots, takes in those that end, waits when nothing may start."""

    def __init__(self, parts: RunParts, sessions: SessionRunner, exit_when_idle: bool) -> None:
        self.parts = parts
        self.state = parts.state
        self.sessions = sessions
        self.exit_when_idle = exit_when_idle
        self.running: Running = {}  # a review's plan is None: it counts as no iteration
        self.costs: list[float] = []
        self.idle = False  # the last look for work found nothing runnable (beside the running sessions)
        self.failure: BaseException | None = None
        self.looked = 0  # the newest change when the scheduler last looked for work

    async def drive(self) -> None:
        """Run sessions until a limit, a stop or idleness; every agent ended and recorded on the way out."""
        try:
            while True:
                await self._fill()
                if self.running:
                    self.state.resume_if_due()
                    await self._wait_any()
                elif not await self._idle_turn():
                    return
        except asyncio.CancelledError:
            for task in self.running:  # each session records itself as cancelled, its agent ended
                task.cancel()
            raise
        finally:
            await self._settle()

    @property
    def expected_cost(self) -> float:
        """What a session is expected to cost: the average of this run's sessions so far."""
        return sum(self.costs) / len(self.costs) if self.costs else 0.0

    def hold_reason(self) -> str | None:
        """Why no new session may start now; None when one may."""
        settings, status = self.parts.settings, self.state.status
        if self.failure is not None:
            return "a session failed"
        if self.state.ending or self.state.pause_requested:
            return "stopping or paused"
        if status.resumes_at is not None and status.resumes_at > datetime.now(UTC):
            return "rate-limited"
        if len(self.running) >= settings.parallel:
            return "every slot is busy"
        sessions = sum(1 for plan in self.running.values() if plan is not None)
        if settings.max_iterations and status.iteration + sessions >= settings.max_iterations:
            return "the running sessions reach max iterations"
        if settings.max_cost_usd is not None:
            left = settings.max_cost_usd - status.cost_usd - self.expected_cost * sessions
            if left <= 0 or left < self.expected_cost:
                return "the budget left would not cover one more session"
        return None

    async def _fill(self) -> None:
        """Start sessions until a limit, a full set of slots or nothing runnable."""
        self.state.resume_if_due()
        while self.hold_reason() is None:
            number = self.state.status.iteration + len(self.running) + 1
            plan = await asyncio.to_thread(self._next_plan, number)
            self.idle = plan is None
            if plan is None:
                return
            if self.state.status.state is LoopState.WAITING:
                self.state.running_again()
            session = asyncio.create_task(self.sessions.run(plan), name=f"ralph-{plan.session_id}")
            self.running[session] = plan

    def _next_plan(self, iteration: int) -> SessionPlan | None:
        """Unblock what is ready and plan the next session (database work: run off the event loop)."""
        services = self.parts.services
        self.looked = services.db.latest_change_id()  # a change after this one may make work runnable
        unblock_ready(services)
        loop_run_id = self.state.status.loop_run_id
        return plan_next_task(services, self.parts.settings, loop_run_id=loop_run_id, iteration=iteration)

    async def _wait_any(self) -> None:
        """Until a session ends, the person asks for something, or it is time to look for work again."""
        wake = self.state.wake
        waker = asyncio.create_task(wake.wait())
        timeout = IDLE_POLL_S if self.hold_reason() is None or self.state.status.resumes_at else None
        try:
            await asyncio.wait([*self.running, waker], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waker
        wake.clear()
        for task in [task for task in self.running if task.done()]:
            await self._ended(task, self.running.pop(task))

    async def _ended(self, task: asyncio.Task[SessionResult | None], plan: SessionPlan | None) -> None:
        """Take in one ended session (or review)."""
        state = self.state
        try:
            result = task.result()
        except Exception as error:
            # Logged in full where it ends the run; the others in the slots are ended and recorded first.
            log.warning("session %s failed: %s", plan.session_id if plan else "review", error)
            self.failure = self.failure or error
            return
        if result is None:
            return
        if result.outcome is SessionOutcome.RATE_LIMITED:
            state.hold_for_rate_limit(result.summary)
            return
        state.backoff.reset()
        self.costs.append(result.summary.cost_usd)
        state.status.iteration += 1
        if not state.ending:
            state.set_state(LoopState.RATE_LIMITED if state.status.resumes_at else LoopState.RUNNING)
        finished = result.decision is not None and result.decision.status in FINISHED
        if plan is not None and finished and self._reviews_on:
            self.running[asyncio.create_task(self._review(plan))] = None

    @property
    def _reviews_on(self) -> bool:
        """Whether finished work may call for a review (the reviewer agent, or a periodic one)."""
        return self.parts.review.reviewer_agent or self.parts.settings.opus_review_every > 0

    async def _idle_turn(self) -> bool:
        """Nothing runs: wait for whatever holds new starts; False when the loop is over."""
        state = self.state
        limit = state.limit_reached()
        if limit is not None:
            state.set_state(LoopState.STOPPED if state.ending else LoopState.COMPLETED, limit)
            return False
        if self.failure is not None:
            raise self.failure
        if state.pause_requested:
            await state.wait_paused()
        elif state.status.resumes_at is not None:
            await state.wait_for_resume()
        elif self.hold_reason() is not None:
            reason = (
                f"reached the cost budget of ${self.parts.settings.max_cost_usd:.2f} for one more session"
            )
            state.set_state(LoopState.COMPLETED, reason)
            return False
        elif self.idle:
            if self.exit_when_idle:
                state.set_state(LoopState.COMPLETED, NOTHING_RUNNABLE)
                return False
            report = await asyncio.to_thread(idle_report, self.parts.services)
            if report.all_done and self.parts.settings.when_all_done == "stop":
                state.set_state(LoopState.COMPLETED, ALL_DONE)
                return False
            await state.wait_for_work(report.reason, self.looked)
        return True

    async def _settle(self) -> None:
        """The loop ends (a failure, a cancel): every agent is ended and every session recorded."""
        if not self.running:
            return
        self.parts.processes.terminate()
        await asyncio.gather(*self.running, return_exceptions=True)
        self.running.clear()

    async def _review(self, plan: SessionPlan) -> SessionResult | None:
        """The reviewer agent's look at the work, and the periodic review of its feature when one is due."""
        await self._review_by_agent(plan)
        services, every = self.parts.services, self.parts.settings.opus_review_every
        if every <= 0 or plan.feature is None:
            return None
        done = services.tasks.count_by_feature().get(plan.feature.name, {}).get(TaskStatus.DONE.value, 0)
        if done and done % every == 0:
            review = plan_recipe_session(services, Recipe.OPUS_REVIEW, feature=plan.feature.name)
            await self.sessions.run(review)
        return None

    async def _review_by_agent(self, plan: SessionPlan) -> None:
        """With `reviewer_agent` on, an opus_review session reads the diff of work that went to review."""
        services = self.parts.services
        prepared = await asyncio.to_thread(branches.reviewer_session, services, self.parts.review, plan)
        if prepared is None or plan.task is None:
            return
        review, known = prepared
        await self.sessions.run(review)
        await asyncio.to_thread(branches.take_reviewer_comments, services, plan.task.id, known)
