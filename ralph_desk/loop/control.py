"""Loop control for IDE clients (seeds 003, 004): the one implementation of the seven `ralph_*` tools.

The window's embedded server, `ralph-desk mcp` and `ralph-desk run` all serve a `LoopController`.
Built without an issuer (no loop can run in that process) it still answers init, validate, status
and history from the project folder and the database, and refuses run, stop and understand.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import anyio.from_thread

from ralph_desk import prd
from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import LoopState, Recipe, TaskStatus, Verb
from ralph_desk.domain.loop_results import (
    NOT_RUNNING,
    IterationDetail,
    IterationEntry,
    LearningEntry,
    LoopMetrics,
    LoopRunInfo,
    RalphHistoryResult,
    RalphInitResult,
    RalphRunResult,
    RalphStatusResult,
    RalphStopResult,
    RalphUnderstandResult,
    RalphValidateResult,
    TaskToAttempt,
    ValidationProblem,
)
from ralph_desk.domain.records import LoopRun
from ralph_desk.domain.timestamps import maybe_utc
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.agents.base import AgentUnavailableError
from ralph_desk.loop.lock import LoopAlreadyRunningError, project_lock
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.planner import describe_queue, plan_recipe_session
from ralph_desk.loop.preview import preview_next_session
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.loop.settings import load_settings
from ralph_desk.project import ProjectError, ProjectExistsError, init_project, validate_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ControlError, ServiceError

log = logging.getLogger("ralph_desk.loop")

IssuerFactory = Callable[[], Awaitable[EndpointIssuer]]
T = TypeVar("T")

NO_RUNNER = (
    "the loop runner is not available in this server (it serves the project's data only); "
    "start the loop from the ralph-desk window or with `ralph-desk run --root DIR`"
)
FINAL_STATES = frozenset({LoopState.COMPLETED.value, LoopState.STOPPED.value, LoopState.FAILED.value})
FINISHED_TASKS = frozenset({TaskStatus.DONE.value, TaskStatus.FAILED.value, TaskStatus.SKIPPED.value})
HISTORY_SCAN = 1_000
"""Most sessions read for one history page (the sessions service's own limit)."""
PREVIEW_TASKS = 20


def _on_loop_thread() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _shown_path(root: Path, path: Path | str) -> str:
    """A path relative to the project root when it is inside it (a database URL as it is)."""
    if isinstance(path, str):
        return path
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


class LoopController:
    """One project's loop as IDE tools see it; MCP-started runs make no edits unless allowed."""

    def __init__(self, services: Services, make_issuer: IssuerFactory | None = None) -> None:
        self.services = services
        self.make_issuer = make_issuer
        self.runner: LoopRunner | None = None
        self.task: asyncio.Task[Any] | None = None
        self.last_error: str | None = None

    # --- the loop of this process ---------------------------------------------------------------

    def issue_through(self, issuer: EndpointIssuer) -> None:
        """Run loops through `issuer`, a server that already runs (the one serving this controller)."""

        async def running() -> EndpointIssuer:
            return issuer

        self.make_issuer = running

    def follow(self, runner: LoopRunner, task: asyncio.Task[Any]) -> None:
        """Report on and stop a loop this process started elsewhere (a headless `ralph-desk run`)."""
        self.runner, self.task = runner, task

    def running(self) -> bool:
        """Whether a loop or understanding run of this process is going."""
        return self.task is not None and not self.task.done()

    def _call_in_loop(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the event loop thread (tool handlers run in worker threads)."""
        if _on_loop_thread():
            return fn()
        return anyio.from_thread.run_sync(fn)

    def _details(self, tool: str, **more: object) -> dict[str, object]:
        return {"tool": tool, **more}

    def _issuer(self, tool: str) -> IssuerFactory:
        if self.make_issuer is None:
            raise ControlError("execution_failed", NO_RUNNER, self._details(tool, reason="no_loop_runner"))
        return self.make_issuer

    def _check_agent(self, settings: LoopSettings, tool: str) -> None:
        try:
            adapter_for(settings).check_available(settings)
        except AgentUnavailableError as error:
            raise ControlError(
                "execution_failed", str(error), self._details(tool, agent=settings.agent)
            ) from None

    def _start(self, work: Callable[[], Coroutine[Any, Any, None]], name: str) -> None:
        def start() -> None:
            self.task = asyncio.get_running_loop().create_task(work(), name=name)

        self._call_in_loop(start)

    # --- the tools ------------------------------------------------------------------------------

    def init(self, force: bool) -> RalphInitResult:
        """Create or re-create `.ralph/` (keeping the database, progress and learnings) and write prd.json."""
        paths = self.services.paths
        existed = paths.ralph.is_dir()
        try:
            init_project(paths.root, force=force, db_url=self.services.db.url)
            prd.write(paths.prd_file, prd.export_document(self.services), root=paths.root)
        except ProjectExistsError as error:
            raise ControlError(
                "invalid_argument", str(error), self._details("ralph_init", force=force)
            ) from None
        except (ProjectError, ServiceError, OSError) as error:
            raise ControlError("execution_failed", str(error), self._log_details("ralph_init")) from None
        return RalphInitResult(
            task_count=sum(self.services.tasks.count_by_status().values()),
            prd_path=str(paths.prd_file),
            initialized=None if existed else True,
            reinitialized=True if existed else None,
        )

    def validate(self) -> RalphValidateResult:
        """What is missing or broken in the project folder, as data."""
        root = self.services.paths.root
        problems = validate_project(root, db_url=self.services.db.url)
        return RalphValidateResult(
            valid=not problems,
            problems=[
                ValidationProblem(path=_shown_path(root, item.path), message=item.message)
                for item in problems
            ],
        )

    def run(
        self, max_iterations: int | None, dry_run: bool, agent: str | None, allow_edits: bool
    ) -> RalphRunResult:
        """Start the loop in the background (returns at once), or preview it."""
        paths = self.services.paths
        try:
            settings = load_settings(
                paths, agent=agent, max_iterations=max_iterations or None, allow_edits=allow_edits
            )
        except ProjectError as error:
            raise ControlError("invalid_argument", str(error), self._details("ralph_run")) from None
        if dry_run:
            return self._preview(settings)
        make_issuer = self._issuer("ralph_run")
        if self.running():
            raise ControlError(
                "execution_failed",
                "a loop is already running in this server; ralph_status follows it, ralph_stop ends it",
                self._details("ralph_run", reason="already_running"),
            )
        self._check_no_loop_elsewhere()
        self._check_agent(settings, "ralph_run")

        async def run_loop() -> None:
            runner = LoopRunner(self.services, await make_issuer(), settings, exit_when_idle=True)
            await self._guarded(runner, runner.run)

        self.last_error = None
        self._start(run_loop, "ralph-loop")
        return RalphRunResult(status=LoopState.RUNNING.value, iteration_number=0)

    def _check_no_loop_elsewhere(self) -> None:
        """Refuse now, not in the background, when another process or the window holds the loop lock."""
        probe = project_lock(self.services.paths.ralph)
        try:
            probe.acquire()
        except LoopAlreadyRunningError as error:
            raise ControlError(
                "execution_failed", str(error), self._details("ralph_run", reason="already_running")
            ) from None
        probe.release()

    def _preview(self, settings: LoopSettings) -> RalphRunResult:
        queue = describe_queue(self.services, limit=PREVIEW_TASKS)
        preview = preview_next_session(self.services, settings, self.services.paths.root)
        return RalphRunResult(
            dry_run=True,
            tasks_to_attempt=[
                TaskToAttempt(id=t.id, title=t.title, priority=t.priority.value) for t in queue
            ],
            preview=preview.prompt if preview else "nothing is runnable",
            mcp_config=preview.mcp_config if preview else None,
            tools=sorted(preview.tools) if preview else [],
        )

    async def _guarded(self, runner: LoopRunner, work: Callable[[], Awaitable[object]]) -> None:
        """Run `work` of `runner` as this controller's loop; its failure becomes the status's lastError."""
        self.runner = runner
        try:
            await work()
        except LoopAlreadyRunningError as error:
            self.last_error = str(error)
        except Exception as error:  # the top of a background task: keep the reason for ralph_status
            log.exception("loop started by an MCP client failed")
            self.last_error = f"{type(error).__name__}: {error}"

    def status(self) -> RalphStatusResult:
        """The loop of this process as it runs, else a loop another process runs, else the last run."""
        run = self.services.sessions.latest_loop_run()
        last_run = None if run is None else LoopRunInfo.of(run)
        metrics = self._metrics()
        runner = self.runner
        if runner is not None and self.running():
            live = runner.status
            return RalphStatusResult(
                status=live.state.value,
                loop_id=live.loop_run_id,
                iteration_number=live.iteration,
                current_task=live.current_task_id,
                resumes_at=maybe_utc(live.resumes_at),
                metrics=metrics,
                last_run=last_run,
            )
        if run is not None and _still_going(run):
            return RalphStatusResult(
                status=run.state,
                loop_id=run.id,
                iteration_number=run.iterations,
                metrics=metrics,
                last_run=last_run,
            )
        return RalphStatusResult(
            status=NOT_RUNNING, last_error=self.last_error, metrics=metrics, last_run=last_run
        )

    def _metrics(self) -> LoopMetrics:
        counts = self.services.tasks.count_by_status()
        return LoopMetrics(
            tasks_completed=counts.get(TaskStatus.DONE.value, 0),
            tasks_failed=counts.get(TaskStatus.FAILED.value, 0),
            tasks_remaining=sum(count for status, count in counts.items() if status not in FINISHED_TASKS),
        )

    def stop(self) -> RalphStopResult:
        """Stop this process's loop (the current agent ends; that is not counted as stuck)."""
        self._issuer("ralph_stop")
        runner = self.runner
        if runner is None or not self.running():
            run = self.services.sessions.latest_loop_run()
            if run is not None and _still_going(run):
                raise ControlError(
                    "execution_failed",
                    f"loop run #{run.id} was not started by this server; stop it where it runs "
                    "(the window's Stop button, or Ctrl+C where `ralph-desk run` runs)",
                    self._details("ralph_stop", loopId=run.id, reason="not_started_here"),
                )
            return RalphStopResult(status=NOT_RUNNING)
        self._call_in_loop(runner.stop)
        return RalphStopResult(status=LoopState.STOPPED.value, loop_id=runner.status.loop_run_id)

    def history(self, limit: int, offset: int, iteration: int | None, kind: str) -> RalphHistoryResult:
        """A page of past iterations, one iteration in full, or the learnings agents recorded."""
        if kind == "learnings":
            return self._learnings(limit, offset)
        if iteration is not None:
            return self._iteration(iteration)
        sessions = self.services.sessions.list(limit=HISTORY_SCAN)
        page = sessions[offset : offset + limit]
        return RalphHistoryResult(
            iterations=[IterationEntry.of(session) for session in page],
            total=len(sessions),
            has_more=offset + len(page) < len(sessions),
        )

    def _iteration(self, number: int) -> RalphHistoryResult:
        run = self.services.sessions.latest_loop_run()
        sessions = [] if run is None else self.services.sessions.list(loop_run_id=run.id, limit=HISTORY_SCAN)
        found = [session for session in sessions if session.iteration == number]
        if not found:
            known = sorted({session.iteration for session in sessions if session.iteration is not None})
            where = (
                "no loop has run yet"
                if run is None
                else f"the last loop run (#{run.id}) has iterations {known}"
            )
            raise ControlError(
                "invalid_argument",
                f"no iteration {number}: {where}",
                self._details("ralph_history", iteration=number, known=known),
            )
        session = found[0]
        learned = [
            signal.text or ""
            for signal in self.services.signals.for_session(session.id)
            if signal.verb is Verb.LEARNED
        ]
        return RalphHistoryResult(iteration=IterationDetail.of_session(session, learned))

    def _learnings(self, limit: int, offset: int) -> RalphHistoryResult:
        signals = list(reversed(self.services.signals.learnings()))
        iterations = {
            session.id: session.iteration for session in self.services.sessions.list(limit=HISTORY_SCAN)
        }
        page = signals[offset : offset + limit]
        return RalphHistoryResult(
            learnings=[
                LearningEntry(
                    text=signal.text or "",
                    iteration_number=iterations.get(signal.session_id) if signal.session_id else None,
                    tags=[tag for tag in (signal.kind, signal.scope) if tag],
                    task_id=signal.task_id,
                    session_id=signal.session_id,
                    timestamp=maybe_utc(signal.created),
                )
                for signal in page
            ],
            total=len(signals),
            has_more=offset + len(page) < len(signals),
        )

    def understand(self) -> RalphUnderstandResult:
        """Start a read-only session that maps the codebase into `.ralph/codebase_map.md`."""
        make_issuer = self._issuer("ralph_understand")
        if self.running():
            raise ControlError(
                "execution_failed",
                "a loop is running in this server; stop it (ralph_stop) before the understanding run",
                self._details("ralph_understand", reason="already_running"),
            )
        paths = self.services.paths
        settings = load_settings(paths, allow_edits=False)
        self._check_agent(settings, "ralph_understand")

        async def understand_run() -> None:
            runner = LoopRunner(self.services, await make_issuer(), settings)
            plan = plan_recipe_session(self.services, Recipe.UNDERSTAND)
            await self._guarded(runner, lambda: runner.run_session(plan))

        self._start(understand_run, "ralph-understand")
        return RalphUnderstandResult(status=LoopState.RUNNING.value, map_path=str(paths.codebase_map))

    def _log_details(self, tool: str) -> dict[str, object]:
        return self._details(tool, logDir=str(self.services.paths.logs_dir))


def _still_going(run: LoopRun) -> bool:
    """Whether a loop run recorded in the database (by any process) has not ended."""
    return run.ended_at is None and run.state not in FINAL_STATES
