"""The loop: plan a session, start the agent, read its stream, apply its signals, repeat — within limits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from ralph_desk.domain.endpoints import EndpointIssuer, SessionEndpoint
from ralph_desk.domain.enums import LoopState, Recipe, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.postprocess import Decision, decide
from ralph_desk.domain.tools import MAX_TEXT
from ralph_desk.loop import branches, git, guard
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.agents.base import AgentAdapter
from ralph_desk.loop.apply import apply_decision, unblock_ready
from ralph_desk.loop.fingerprint import project_fingerprint
from ralph_desk.loop.gather import gather_inputs
from ralph_desk.loop.limits import Backoff
from ralph_desk.loop.lines import MAX_LINE, lines_of
from ralph_desk.loop.lock import project_lock
from ralph_desk.loop.model import (
    FINISHED,
    IDLE_POLL_S,
    NOTHING_RUNNABLE,
    AgentCommand,
    EventKind,
    LiveEvent,
    LoopSettings,
    SessionLaunch,
    SessionPlan,
    StreamSummary,
)
from ralph_desk.loop.planner import plan_next_task, plan_recipe_session
from ralph_desk.loop.pool import run_pool
from ralph_desk.loop.processes import own_group, stop_tree
from ralph_desk.loop.prompt import render_prompt
from ralph_desk.loop.streams import StreamParser
from ralph_desk.loop.transcript import Transcript
from ralph_desk.loop.trust_check import require_trusted_servers
from ralph_desk.project import ProjectError, contained
from ralph_desk.project.contained import PRIVATE_DIR_MODE
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ServiceError
from ralph_desk.services.sessions import LOOP_RUN_LEASE_S
from ralph_desk.services.workspaces import NoBaseBranchError

T = TypeVar("T")
log = logging.getLogger("ralph_desk.loop")

PROMPT_FILE_NAME = "prompt.md"
KILL_GRACE_S = 5.0
HEARTBEAT_S = LOOP_RUN_LEASE_S / 4
MAX_PATHS_NAMED = 20
RESUME_CHECK_S = 0.5  # how soon a session held by a rate limit notices a stop

# The loop runs of this process whose runner is alive: recovery on this host tells them from dead ones.
_RUNNING_HERE: set[int] = set()

EventListener = Callable[[LiveEvent], None]


@dataclass
class SessionResult:
    """What one agent session came to."""

    plan: SessionPlan
    summary: StreamSummary
    exit_code: int | None
    decision: Decision | None
    outcome: SessionOutcome
    changed_files: list[str] = field(default_factory=list)
    timed_out: bool = False
    stopped: bool = False


@dataclass(frozen=True)
class _Ending:
    """How a session ended once its agent had: the result, the task branch's tip, why its work was lost."""

    result: SessionResult
    head_after: str | None
    lost: str | None = None


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


class LoopRunner:
    """Runs sessions one after another in the running asyncio loop until a limit, a stop, or idleness."""

    def __init__(
        self,
        services: Services,
        issuer: EndpointIssuer,
        settings: LoopSettings,
        repo_root: Path | None = None,
        adapter: AgentAdapter | None = None,
        exit_when_idle: bool = False,
    ) -> None:
        self.services = services
        self.issuer = issuer
        self.settings = settings
        self.repo_root = repo_root or services.paths.root
        self.adapter = adapter or adapter_for(settings)
        self.exit_when_idle = exit_when_idle
        self.status = LoopStatus()
        self.results: list[SessionResult] = []
        self._listeners: list[EventListener] = []
        self._stop_requested = False
        self._stop_after_session = False
        self._pause_requested = False
        self._wake = asyncio.Event()
        self._processes: dict[str, asyncio.subprocess.Process] = {}
        self._killers: dict[str, asyncio.Task[None]] = {}
        # Git work of parallel sessions (worktrees, session commits, merges) goes one at a time.
        self._git = asyncio.Lock()
        self._heartbeat: asyncio.Task[None] | None = None
        self._lock = project_lock(services.paths.ralph)
        # The run's state is written off the event loop (the window's thread), in the order it changed.
        self._state_writer: ThreadPoolExecutor | None = None
        self._state_written: Future[None] | None = None
        self._backoff = Backoff(settings.rate_limit_wait_s, settings.rate_limit_max_wait_s)

    def subscribe(self, listener: EventListener) -> None:
        """Receive every live event (stream events, session starts and ends, state changes)."""
        self._listeners.append(listener)

    def _emit(self, event: LiveEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("loop event listener failed")

    def _set_state(self, state: LoopState, reason: str | None = None) -> None:
        self.status.state = state
        if reason is not None:
            self.status.stop_reason = reason
        resumes = self.status.resumes_at.isoformat() if self.status.resumes_at else None
        self._emit(LiveEvent(EventKind.LOOP_STATE, state.value, {"reason": reason, "resumes_at": resumes}))
        if self.status.loop_run_id is not None and self._state_writer is not None:
            self._state_written = self._state_writer.submit(
                self._write_state,
                self.status.loop_run_id,
                state.value,
                self.status.iteration,
                self.status.cost_usd,
                self.status.stop_reason,
            )

    def _write_state(
        self, loop_run_id: int, state: str, iterations: int, cost_usd: float, stop_reason: str | None
    ) -> None:
        """On the state writer's thread: record the run's state (a failure is logged; the next retries)."""
        try:
            self.services.sessions.update_loop_run(
                loop_run_id, state=state, iterations=iterations, cost_usd=cost_usd, stop_reason=stop_reason
            )
        except Exception:
            log.exception("could not record loop run %s as %s", loop_run_id, state)

    async def _states_recorded(self) -> None:
        """Wait until every state handed to the writer is in the database."""
        written = self._state_written
        if written is not None:
            await asyncio.wrap_future(written)

    def stop(self) -> None:
        """End the current agent (not counted as stuck) and stop the loop."""
        self._stop_requested = True
        self._wake.set()
        self._terminate()

    @property
    def _ending(self) -> bool:
        """Whether the person asked the loop to stop, now or after the session."""
        return self._stop_requested or self._stop_after_session

    def stop_after_session(self) -> None:
        """Let the current session end on its own, then stop the loop (at once when no session runs)."""
        self._stop_after_session = True
        self._wake.set()

    def pause(self) -> None:
        """Hold the loop after the current session until resume() or stop()."""
        self._pause_requested = True

    def resume(self) -> None:
        """Continue a paused loop."""
        self._pause_requested = False
        self._wake.set()

    def wake(self) -> None:
        """Look for runnable work now (an answer or an approval arrived)."""
        self._wake.set()

    async def run(self) -> LoopStatus:
        """Run until a limit, a stop, a pause or (when asked) idleness; one loop per project."""
        self._require_trusted_servers()
        self.adapter.check_available(self.settings)
        # A git project's tasks work on branches of its base: without one, nothing runs (not in the checkout).
        await asyncio.to_thread(self.services.workspaces.require_base)
        self._lock.acquire()
        self._state_writer = ThreadPoolExecutor(1, thread_name_prefix="ralph-loop-state")
        run_id: int | None = None
        try:
            self._recover_orphans()
            await asyncio.to_thread(self._merge_approved)
            run = self.services.sessions.start_loop_run(
                agent=self.adapter.name,
                max_iterations=self.settings.max_iterations,
                max_cost_usd=self.settings.max_cost_usd,
                allow_edits=self.settings.allow_edits,
                settings={
                    "session_timeout_s": self.settings.session_timeout_s,
                    "stuck_threshold": self.settings.stuck_threshold,
                    "max_turns": self.settings.max_turns,
                },
            )
            run_id = run.id
            _RUNNING_HERE.add(run_id)
            self._heartbeat = asyncio.get_running_loop().create_task(
                self._renew_lease(run.id), name="ralph-loop-heartbeat"
            )
            self.status = LoopStatus(loop_run_id=run.id)
            self._set_state(LoopState.RUNNING)
            await self._iterate()
        except NoBaseBranchError as error:  # the base branch went away while the loop ran
            log.error("the loop stopped: %s", error)
            self._set_state(LoopState.FAILED, f"the loop stopped: {error}")
            raise
        except Exception as error:
            log.exception("the loop failed")
            self._set_state(LoopState.FAILED, f"the loop failed: {error}")
            raise
        finally:
            await _cancel(self._heartbeat)
            for killer in list(self._killers.values()):
                await _cancel(killer)
            self._heartbeat = None
            self._killers.clear()
            if run_id is not None:
                _RUNNING_HERE.discard(run_id)
            await self._states_recorded()
            self._state_writer.shutdown(wait=False)
            self._state_writer = None
            self._lock.release()
        return self.status

    def _require_trusted_servers(self) -> None:
        # The database may have come with the folder: a server command in it runs only once allowed.
        require_trusted_servers(self.services.paths, self.services.disciplines.list())

    async def _renew_lease(self, loop_run_id: int) -> None:
        """Renew this run's lease while it runs, so that runners elsewhere leave its task alone."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await asyncio.to_thread(self.services.sessions.renew_lease, loop_run_id)
            except Exception:
                # A busy or unreachable database: the next beat tries again, well within the lease.
                log.warning("could not renew the lease of loop run %s", loop_run_id, exc_info=True)

    async def _iterate(self) -> None:
        if self.settings.parallel > 1:
            await run_pool(self)
            return
        while True:
            if self._pause_requested:
                await self._wait_paused()
            limit = self._limit_reached()
            if limit is not None:
                self._set_state(LoopState.STOPPED if self._ending else LoopState.COMPLETED, limit)
                return
            plan = await asyncio.to_thread(self._next_plan)
            if plan is None:
                if self.exit_when_idle:
                    self._set_state(LoopState.COMPLETED, NOTHING_RUNNABLE)
                    return
                await self._wait_for_work()
                continue
            result = await self.run_session(plan)
            if result.outcome is SessionOutcome.RATE_LIMITED:
                await self._wait_out_rate_limit(result.summary)
                continue
            self._backoff.reset()
            self.status.iteration += 1
            self._set_state(LoopState.RUNNING)
            if result.decision is not None and result.decision.status in FINISHED:
                await self._maybe_review(plan)

    def _limit_reached(self) -> str | None:
        if self._stop_requested:
            return "stopped by the human"
        if self._stop_after_session:
            return "stopped by the human after the session"
        settings = self.settings
        if settings.max_iterations and self.status.iteration >= settings.max_iterations:
            return f"reached the maximum of {settings.max_iterations} iterations"
        if settings.max_cost_usd is not None and self.status.cost_usd >= settings.max_cost_usd:
            return (
                f"reached the cost budget of ${settings.max_cost_usd:.2f} (spent ${self.status.cost_usd:.2f})"
            )
        return None

    async def _wait_paused(self) -> None:
        self._set_state(LoopState.PAUSED, "paused after the session")
        while self._pause_requested and not self._ending:
            self._wake.clear()
            await self._wake.wait()
        if not self._ending:
            self._set_state(LoopState.RUNNING)

    async def _wait_for_work(self) -> None:
        """Nothing runnable: wait for an answer, an approval or any change by another process."""
        self._set_state(LoopState.WAITING, "nothing is runnable: waiting for answers, approvals or new tasks")
        seen = self.services.db.latest_change_id()
        self._wake.clear()
        while not self._ending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=IDLE_POLL_S)
            if self._wake.is_set() or self.services.db.latest_change_id() != seen:
                break
        self._wake.clear()
        if not self._ending:
            self._set_state(LoopState.RUNNING)

    def _hold_for_rate_limit(self, summary: StreamSummary) -> float:
        """Set when new sessions may start again after a rate limit; the seconds until then."""
        now = datetime.now(UTC)
        # A reset time from the agent's stream wins over the loop's own doubling wait.
        resumes = summary.resets_at if summary.resets_at and summary.resets_at > now else None
        delay = (resumes - now).total_seconds() if resumes else self._backoff.next_wait()
        self.status.resumes_at = resumes or datetime.fromtimestamp(now.timestamp() + delay, UTC)
        self._set_state(
            LoopState.RATE_LIMITED,
            f"rate-limited until {self.status.resumes_at:%H:%M:%S} UTC (in {delay:.3g} s)",
        )
        return delay

    def _resume_if_due(self) -> None:
        """A rate limit whose time has come ends, and says so before any session starts again."""
        resumes = self.status.resumes_at
        if resumes is not None and resumes <= datetime.now(UTC):
            self.status.resumes_at = None
            if not self._ending:
                self._set_state(LoopState.RUNNING)

    async def _after_rate_limit(self) -> None:
        """A session prepared while a sibling met a rate limit starts once it has passed, with the rest."""
        while not self._ending and (resumes := self.status.resumes_at) is not None:
            delay = (resumes - datetime.now(UTC)).total_seconds()
            if delay > 0:
                await asyncio.sleep(min(delay, RESUME_CHECK_S))
            self._resume_if_due()

    async def _wait_out_rate_limit(self, summary: StreamSummary) -> None:
        delay = self._hold_for_rate_limit(summary)
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=max(0.0, delay))
        self._wake.clear()
        self.status.resumes_at = None
        if not self._ending:
            self._set_state(LoopState.RUNNING)

    def _next_plan(self, iteration: int | None = None) -> SessionPlan | None:
        """Unblock what is ready and plan the next session (database work: run off the event loop)."""
        unblock_ready(self.services)
        return plan_next_task(
            self.services,
            self.settings,
            loop_run_id=self.status.loop_run_id,
            iteration=iteration or self.status.iteration + 1,
        )

    def _recover_orphans(self) -> None:
        """Tasks and sessions left behind by a dead loop (any machine) go back to the queue (not stuck).

        A loop run is dead when it ended, when its lease lapsed, or when its process on this host is
        gone; work of a live run — another machine's, sharing a PostgreSQL database — is left alone.
        """
        orphans = self.services.sessions.orphans(running_here=_RUNNING_HERE)
        for task_id in orphans.task_ids:
            log.warning("recovering task #%s left in progress by a stopped loop", task_id)
            self.services.tasks.move(task_id, TaskStatus.PENDING, Mover.LOOP)
        for session_id in orphans.session_ids:
            self.services.sessions.finish_session(
                session_id,
                outcome=SessionOutcome.STOPPED.value,
                error="recovered: the loop stopped mid-session",
            )

    def _merge_approved(self) -> None:
        """Approvals whose process ended before their merge (a crash, a closed terminal) merge now, in order;
        the worktrees of deleted tasks and folders git forgot are cleaned away (unmerged work is kept)."""
        try:
            for task_id in self.services.reviews.queue_ungated():
                log.info("task #%s was done with the review gate off but not merged: queued", task_id)
            for task_id, outcome in self.services.reviews.merge_queued().items():
                log.info("approved task #%s from the merge queue: %s", task_id, outcome)
        except ServiceError:
            log.warning("the approved tasks waiting to merge could not be merged now", exc_info=True)
        for told in self.services.retiring.sweep():
            log.info("worktrees: %s", told)

    async def _maybe_review(self, plan: SessionPlan) -> None:
        await self._review_by_agent(plan)
        every = self.settings.opus_review_every
        if every <= 0 or plan.feature is None:
            return
        done = self.services.tasks.count_by_feature().get(plan.feature.name, {}).get(TaskStatus.DONE.value, 0)
        if done and done % every == 0:
            review = plan_recipe_session(self.services, Recipe.OPUS_REVIEW, feature=plan.feature.name)
            await self.run_session(review)

    async def _review_by_agent(self, plan: SessionPlan) -> None:
        """With `reviewer_agent` on, an opus_review session reads the diff of work that went to review."""
        prepared = await asyncio.to_thread(branches.reviewer_session, self.services, plan)
        if prepared is None or plan.task is None:
            return
        review, known = prepared
        await self.run_session(review)
        await asyncio.to_thread(branches.take_reviewer_comments, self.services, plan.task.id, known)

    async def run_session(self, plan: SessionPlan) -> SessionResult:
        """One agent session: endpoint, prompt, process, stream, post-processing, record."""
        self._require_trusted_servers()
        services, settings = self.services, self.settings
        self.status.current_task_id = plan.task.id if plan.task else None
        self.status.current_session_id = plan.session_id
        self.status.running[plan.session_id] = self.status.current_task_id
        read_only = not settings.allow_edits or plan.recipe is Recipe.UNDERSTAND or plan.read_only
        transcript = Transcript(services.paths.logs_dir, plan.session_id, root=services.paths.root)
        try:
            # A task's session works in the task's own worktree; the person's checkout is never touched.
            async with self._git:
                work = await _through(branches.prepare, services, plan, self.repo_root)
                place = await _through(branches.git_place, services, work)
        except BaseException as error:
            self._abandon(plan, transcript, error)
            raise
        root = work.root
        # Hashing files, git and the database block: they run off the event loop (and the window's thread).
        fingerprint_before = (
            await asyncio.to_thread(project_fingerprint, services, root) if plan.task else None
        )
        git_before = await asyncio.to_thread(git.state, place)
        endpoint = self.issuer.open_session(plan.context)
        summary = StreamSummary()
        exit_code: int | None = None
        timed_out = False
        try:
            await self._after_rate_limit()
            command = await _through(
                self._begin, plan, endpoint, root, read_only, transcript, git_before.head
            )
            self._emit(
                LiveEvent(
                    EventKind.SESSION_STARTED,
                    plan.task.title if plan.task else plan.recipe.value,
                    {
                        "task_id": plan.task.id if plan.task else None,
                        "recipe": plan.recipe.value,
                        "agent": self.adapter.name,
                        "model": settings.model_for(plan.recipe),
                    },
                    session_id=plan.session_id,
                )
            )
            parser = self.adapter.parser()
        except BaseException as error:
            self._abandon(plan, transcript, error)
            self.issuer.close_session(endpoint)
            raise
        try:
            try:
                exit_code, timed_out = await self._run_process(command, parser, transcript, plan.session_id)
                summary = parser.summary
            except OSError as error:
                # The agent could not even be started (a vanished binary, a bad working directory).
                summary.error = f"could not start the agent: {error}"
                transcript.note(summary.error)
            finally:
                self.issuer.close_session(endpoint)
            if plan.recipe is Recipe.UNDERSTAND and summary.result_text and not summary.is_error:
                # The understand run is read-only: the agent returns the map, the loop writes it.
                self._save_map(summary.result_text, summary, transcript)
            async with self._git:
                lost = await _through(branches.lost, services, work, plan)
            if lost is None:
                ending = await self._conclude(
                    plan,
                    summary,
                    exit_code,
                    timed_out,
                    work,
                    git_before,
                    fingerprint_before,
                    read_only,
                    transcript,
                )
            else:
                ending = await _through(self._conclude_lost, plan, summary, exit_code, timed_out, work, lost)
        except Exception as error:
            if not await _through(self._task_gone, plan):
                await self._end_abruptly(plan, transcript, summary, exit_code, error)
                raise
            # Deleted while its session ran (the window, a tool, another desk): what failed was the lookup.
            ending = await _through(
                self._conclude_lost, plan, summary, exit_code, timed_out, work, branches.deleted(plan)
            )
        except BaseException as error:  # the session still ends, recorded and announced; the error goes on
            await self._end_abruptly(plan, transcript, summary, exit_code, error)
            raise
        result = ending.result
        if ending.lost is not None:
            log.warning("session %s: %s", plan.session_id, ending.lost)
            transcript.note(ending.lost)
        decision = result.decision
        closing_verb = decision.closing_verb.value if decision and decision.closing_verb else None
        self.status.cost_usd += summary.cost_usd

        outcome = result.outcome.value

        def record_end() -> None:
            self._record_end(
                plan,
                transcript,
                summary,
                exit_code,
                outcome,
                closing_verb=closing_verb,
                changed_files=git.recordable(result.changed_files),
                head_after=ending.head_after,
                error=ending.lost or summary.error or ("timed out" if timed_out else None),
            )

        try:
            await _through(record_end)
        finally:
            self._ended(plan, outcome, summary, exit_code, closing_verb)
        if result.decision is not None and result.outcome is not SessionOutcome.REJECTED:
            if result.decision.status in FINISHED:
                self.status.completed += 1
            elif result.decision.status is TaskStatus.FAILED:
                self.status.failed += 1
        self.results.append(result)
        return result

    async def _conclude(
        self,
        plan: SessionPlan,
        summary: StreamSummary,
        exit_code: int | None,
        timed_out: bool,
        work: branches.SessionWork,
        git_before: git.GitState,
        fingerprint_before: str | None,
        read_only: bool,
        transcript: Transcript,
    ) -> _Ending:
        """After the agent: what it changed, its commit on the task branch, the decision, the review gate."""
        services, settings = self.services, self.settings
        try:
            # Through the git folder the desk made: an agent process still running cannot re-aim `.git` now.
            place = await _through(branches.git_place, services, work)
            git_after = await asyncio.to_thread(git.state, place)
            changed = await asyncio.to_thread(git.changed_files, place, git_before, git_after)
            escaped = guard.outside(settings.allowed_paths, changed) if plan.task and not read_only else []
            if escaped:
                await asyncio.to_thread(self._put_aside, plan, escaped, git_before, transcript, place)
            # The commit comes before the decision: a crash between them leaves the work on the task branch.
            async with self._git:
                committed = await asyncio.to_thread(branches.commit, services, work, plan, not read_only)
        except branches.UNCOMMITTABLE as error:  # the session ends; its task, the siblings and the loop go on
            log.warning("session %s: its work was not committed: %s", plan.session_id, error)
            lost = branches.not_committed(error)
            return await _through(self._conclude_lost, plan, summary, exit_code, timed_out, work, lost)
        result = await asyncio.to_thread(
            self._post_process, plan, summary, exit_code, timed_out, changed, fingerprint_before, work
        )
        stashed = (
            committed.stashed
            if committed is not None
            else read_only
            and bool(changed)
            and await asyncio.to_thread(
                git.stash_changes,
                place,
                f"ralph-desk: session {plan.session_id} made edits while edits were not allowed",
            )
        )
        if stashed:
            result.outcome = SessionOutcome.REJECTED
            if plan.task and result.decision and result.decision.status in FINISHED:
                services.tasks.move(plan.task.id, TaskStatus.PENDING, Mover.LOOP)
        elif result.decision is not None and plan.task is not None:
            async with self._git:
                await asyncio.to_thread(
                    branches.after_review_gate, services, plan, result.decision, committed
                )
        return _Ending(result, committed.after if committed is not None else git_after.head)

    def _conclude_lost(
        self,
        plan: SessionPlan,
        summary: StreamSummary,
        exit_code: int | None,
        timed_out: bool,
        work: branches.SessionWork,
        lost: branches.Lost,
    ) -> _Ending:
        """Off the event loop: a session whose task was deleted, or whose worktree was wrecked, under it.

        Nothing is committed. A deleted task's session only ends; a wrecked worktree is flagged, and its
        task goes back to `pending` (a `done` finished nothing a person could review).
        """
        stopped = self._stop_requested
        if lost.task_deleted or plan.task is None:
            return _Ending(
                SessionResult(plan, summary, exit_code, None, SessionOutcome.STOPPED, [], timed_out, stopped),
                None,
                lost.reason,
            )
        branches.flag_lost(self.services, plan, lost)
        result = self._post_process(plan, summary, exit_code, timed_out, [], None, work, lost)
        return _Ending(result, branches.tip(self.services, work), lost.reason)

    def _task_gone(self, plan: SessionPlan) -> bool:
        """Whether the session's task was deleted (a failed lookup says nothing: False)."""
        try:
            return branches.deleted_meanwhile(self.services, plan)
        except Exception as error:
            log.warning(
                "could not tell whether the task of session %s still exists: %s", plan.session_id, error
            )
            return False

    def _ended(
        self,
        plan: SessionPlan,
        outcome: str,
        summary: StreamSummary,
        exit_code: int | None,
        closing_verb: str | None,
    ) -> None:
        """Announce the session's end and take it off the running list."""
        self._emit(
            LiveEvent(
                EventKind.SESSION_ENDED,
                outcome,
                {
                    "task_id": plan.task.id if plan.task else None,
                    "cost_usd": summary.cost_usd,
                    "turns": summary.turns,
                    "exit_code": exit_code,
                    "closing_verb": closing_verb,
                },
                session_id=plan.session_id,
            )
        )
        self._forget(plan)

    async def _end_abruptly(
        self,
        plan: SessionPlan,
        transcript: Transcript,
        summary: StreamSummary,
        exit_code: int | None,
        error: BaseException,
    ) -> None:
        """The session failed or was cancelled after its agent started: record and announce its end."""
        cancelled = isinstance(error, asyncio.CancelledError)
        what = (
            "the session was cancelled"
            if cancelled
            else f"the session failed: {type(error).__name__}: {error}"
        )
        outcome = SessionOutcome.STOPPED.value if cancelled else SessionOutcome.FAILED.value
        if not cancelled:
            log.error("session %s failed after its agent ran", plan.session_id, exc_info=error)

        def record() -> None:
            transcript.note(what)
            with contextlib.suppress(ServiceError):
                self._record_end(plan, transcript, summary, exit_code, outcome, error=what[:MAX_TEXT])

        try:
            await _through(record)
        finally:
            self._ended(plan, outcome, summary, exit_code, None)

    def _record_end(
        self,
        plan: SessionPlan,
        transcript: Transcript,
        summary: StreamSummary,
        exit_code: int | None,
        outcome: str,
        **fields: object,
    ) -> None:
        """Off the event loop: close the transcript and record how the session ended."""
        transcript_path = transcript.close(summary=summary, exit_code=exit_code, outcome=outcome)
        self.services.sessions.finish_session(
            plan.session_id,
            exit_code=exit_code,
            outcome=outcome,
            cost_usd=summary.cost_usd,
            input_tokens=summary.input_tokens,
            output_tokens=summary.output_tokens,
            turns=summary.turns,
            transcript_path=str(transcript_path),
            **fields,
        )

    def _forget(self, plan: SessionPlan) -> None:
        """The session no longer runs: the status names the latest one still running, if any."""
        self.status.running.pop(plan.session_id, None)
        latest = next(reversed(self.status.running.items()), None)
        self.status.current_session_id, self.status.current_task_id = latest if latest else (None, None)

    def _save_map(self, text: str, summary: StreamSummary, transcript: Transcript) -> None:
        """Write the understand run's map into `.ralph/codebase_map.md` (never through a link)."""
        paths = self.services.paths
        try:
            contained.write_text(paths.root, paths.codebase_map, text.strip() + "\n")
        except ProjectError as error:
            summary.error = f"the codebase map was not saved: {error}"
            transcript.note(summary.error)
            log.warning("%s", summary.error)

    def _begin(
        self,
        plan: SessionPlan,
        endpoint: SessionEndpoint,
        root: Path,
        read_only: bool,
        transcript: Transcript,
        head_before: str | None,
    ) -> AgentCommand:
        """Off the event loop: the prompt, the agent's command and files, the transcript's head, the row."""
        services, settings = self.services, self.settings
        prompt = self._write_prompt(plan, root)
        paths = services.paths
        session_dir = contained.make_folder(paths.root, paths.sessions_dir, PRIVATE_DIR_MODE)
        command = self.adapter.build(
            SessionLaunch(plan, prompt, endpoint, settings, root, session_dir, read_only)
        )
        transcript.describe(
            plan,
            agent=self.adapter.name,
            model=settings.model_for(plan.recipe),
            command=command,
            prompt=prompt,
            endpoint=endpoint,
        )
        services.sessions.start_session(
            plan.session_id,
            task_id=plan.task.id if plan.task else None,
            recipe=plan.recipe.value,
            agent=self.adapter.name,
            model=settings.model_for(plan.recipe),
            loop_run_id=plan.loop_run_id,
            iteration=plan.iteration,
            discipline=plan.discipline.name if plan.discipline else None,
            feature=plan.feature.name if plan.feature else None,
            head_before=head_before,
            transcript_path=str(transcript.log_path),
        )
        return command

    def _write_prompt(self, plan: SessionPlan, root: Path) -> str:
        """Gather the session's inputs, render its prompt and keep a copy beside the MCP config."""
        inputs = gather_inputs(self.services, plan, root, self.settings.allowed_paths)
        prompt = render_prompt(inputs)
        paths = self.services.paths
        contained.write_text(paths.root, paths.mcp_dir / PROMPT_FILE_NAME, prompt)
        return prompt

    def _put_aside(
        self,
        plan: SessionPlan,
        paths: list[str],
        before: git.GitState,
        transcript: Transcript,
        place: git.Place,
    ) -> None:
        """Edits outside `allowed_paths` leave the tree (kept, never lost) and become a blocking flag."""
        assert plan.task is not None
        kept = guard.put_aside(place, self.services.paths.ralph, plan.session_id, paths, before)
        shown = ", ".join(paths[:MAX_PATHS_NAMED]) + (" …" if len(paths) > MAX_PATHS_NAMED else "")
        what = (
            f"The session edited files outside allowed_paths ({', '.join(self.settings.allowed_paths)}): "
            f"{shown}. They were put aside in {kept.where}."
        )
        if kept.left_in_tree:
            left = ", ".join(kept.left_in_tree)
            what += f" Still in the tree (committed by the session, or no older version outside git): {left}."
        what = what[:MAX_TEXT]
        transcript.note(what)
        self.services.signals.record(
            plan.task.id, plan.session_id, "flag", what=what, severity="blocking", category="security"
        )

    def _abandon(self, plan: SessionPlan, transcript: Transcript, error: BaseException) -> None:
        """A session that failed before its agent started: its task goes back to the queue, uncounted."""
        if isinstance(error, NoBaseBranchError):  # the project's state, said in full: no traceback to read
            log.error("session %s could not be prepared: %s", plan.session_id, error)
        else:
            log.exception("session %s could not be prepared", plan.session_id)
        transcript.note(f"the session could not be prepared: {error}")
        transcript.close(outcome=SessionOutcome.STOPPED.value, error=str(error))
        if plan.task is not None:
            self.services.tasks.move(plan.task.id, TaskStatus.PENDING, Mover.LOOP)
        with contextlib.suppress(ServiceError):
            self.services.sessions.finish_session(
                plan.session_id, outcome=SessionOutcome.STOPPED.value, error=f"not started: {error}"
            )
        self._forget(plan)

    def _post_process(
        self,
        plan: SessionPlan,
        summary: StreamSummary,
        exit_code: int | None,
        timed_out: bool,
        changed: list[str],
        fingerprint_before: str | None,
        work: branches.SessionWork,
        lost: branches.Lost | None = None,
    ) -> SessionResult:
        if plan.task is None:
            return SessionResult(plan, summary, exit_code, None, SessionOutcome.DONE, changed, timed_out)
        task = self.services.tasks.get(plan.task.id)
        signals = self.services.signals.for_session(plan.session_id)
        stagnant = (
            fingerprint_before is not None
            and not changed
            and (project_fingerprint(self.services, work.root) == fingerprint_before)
        )
        decision = decide(
            signals,
            stuck_count=task.stuck_count,
            stuck_threshold=self.settings.stuck_threshold,
            stopped_by_human=self._stop_requested,
            rate_limited=summary.rate_limited,
            stagnant=stagnant,
        )
        decision = branches.gate(self.services, work, plan, decision)
        if lost is not None:
            decision = branches.requeue(decision, lost)
        apply_decision(self.services, plan.task.id, plan.session_id, decision)
        return SessionResult(
            plan,
            summary,
            exit_code,
            decision,
            decision.outcome,
            changed,
            timed_out,
            stopped=self._stop_requested,
        )

    async def _run_process(
        self, command: AgentCommand, parser: StreamParser, transcript: Transcript, session_id: str
    ) -> tuple[int | None, bool]:
        env = {**os.environ, **command.env}
        process = self._processes[session_id] = await asyncio.create_subprocess_exec(
            *command.argv,
            stdin=asyncio.subprocess.PIPE if command.stdin_text is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=command.cwd or self.repo_root,
            env=env,
            limit=MAX_LINE,
            **own_group(),
        )
        if self._ending:  # a stop came while this session was being prepared: it ends with the others
            self._terminate(session_id)
        if command.stdin_text is not None and process.stdin is not None:
            try:
                process.stdin.write(command.stdin_text.encode())
                await asyncio.wait_for(process.stdin.drain(), timeout=self.settings.session_timeout_s)
                process.stdin.close()
            except (BrokenPipeError, ConnectionResetError, TimeoutError) as error:
                # An agent that exits before reading its prompt ends like any session without a closing verb.
                transcript.note(f"the agent did not take its prompt: {error!r}")

        async def read_stdout() -> None:
            assert process.stdout is not None
            async for raw in lines_of(process.stdout):
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                transcript.raw(line)
                for event in parser.feed(line):
                    stamped = LiveEvent(event.kind, event.text, event.data, session_id, event.at)
                    transcript.event(stamped)
                    self._emit(stamped)

        async def read_stderr() -> None:
            assert process.stderr is not None
            async for raw in lines_of(process.stderr):
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                transcript.raw(f"[stderr] {line}")

        timed_out = False
        readers = asyncio.gather(read_stdout(), read_stderr())
        try:
            try:
                await asyncio.wait_for(asyncio.shield(readers), timeout=self.settings.session_timeout_s)
            except TimeoutError:
                timed_out = True
                log.warning("session %s timed out after %ss", session_id, self.settings.session_timeout_s)
                self._terminate(session_id)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(readers, timeout=KILL_GRACE_S * 2)
            exit_code = await process.wait()
        finally:
            # Whatever ended the reading (an error, a cancelled loop), the agent never outlives its session.
            killer = self._killers.pop(session_id, None)
            if process.returncode is None and killer is None:
                await asyncio.shield(stop_tree(process, KILL_GRACE_S))
            readers.cancel()
            self._processes.pop(session_id, None)
            if killer is not None:
                await killer  # a stopped agent's leftovers are ended before the next session starts
        return exit_code, timed_out

    def _terminate(self, session_id: str | None = None) -> None:
        """End an agent's process tree (every agent's without `session_id`): politely, then by force."""
        chosen = [session_id] if session_id is not None else list(self._processes)
        for key in chosen:
            process = self._processes.get(key)
            if process is None or process.returncode is not None:
                continue
            killer = self._killers.get(key)
            if killer is not None and not killer.done():
                continue  # already ending: one request, one deadline
            self._killers[key] = asyncio.get_running_loop().create_task(
                stop_tree(process, KILL_GRACE_S), name=f"ralph-loop-killer-{key}"
            )


async def _through(work: Callable[..., T], *args: object) -> T:
    """`work(*args)` off the event loop; a cancel waits for it to end (its writes land first)."""
    running = asyncio.ensure_future(asyncio.to_thread(work, *args))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await running
        raise


async def _cancel(task: asyncio.Task[None] | None) -> None:
    """Cancel a helper task and wait for it, so that none is left pending when the event loop closes."""
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
