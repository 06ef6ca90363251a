"""Loop control for IDE clients (seeds 003, 004): the one implementation of the seven `ralph_*` tools.

The window's embedded server, `ralph-desk mcp` and `ralph-desk run` all serve a `LoopController`.
Built without an issuer (no loop can run in that process) it still answers init, validate, status
and history from the project folder and the database, and refuses run, stop and understand.
Refusals are `ControlError`s with seed 003's codes; execution errors name the log file.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.from_thread

from ralph_desk import prd
from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import LoopState, Recipe, TaskStatus
from ralph_desk.domain.item_errors import item_errors
from ralph_desk.domain.loop_results import (
    NOT_INITIALISED,
    NOT_RUNNING,
    IterationDetail,
    IterationEntry,
    LearningEntry,
    LoopMetrics,
    LoopRunInfo,
    LoopStatusInfo,
    LoopSummary,
    Progress,
    QualityMetrics,
    RalphHistoryResult,
    RalphInitResult,
    RalphRunResult,
    RalphStatusResult,
    RalphStopResult,
    RalphUnderstandResult,
    RalphValidateResult,
    RunningSession,
    TaskToAttempt,
    ValidationProblem,
)
from ralph_desk.domain.records import AgentSession, LoopRun
from ralph_desk.domain.timestamps import maybe_utc, utc
from ralph_desk.loop import guard
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.agents.base import AgentUnavailableError
from ralph_desk.loop.build import RunOptions, build_runner
from ralph_desk.loop.lock import LoopAlreadyRunningError, project_lock
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.planner import describe_queue, peek_next_task, plan_recipe_session
from ralph_desk.loop.preview import preview_next_session
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.loop.session import PROMPT_FILE_NAME
from ralph_desk.loop.settings import RunOverrides, load_checked
from ralph_desk.loop.summary import final_text, loop_summary
from ralph_desk.loop.tool_log import ToolRunLog
from ralph_desk.loop.trust_check import TRUST_HINT, UntrustedCommandError
from ralph_desk.project import (
    ProjectError,
    ProjectExistsError,
    ProjectPaths,
    contained,
    init_project,
    read_config,
    validate_project,
)
from ralph_desk.project.config import problem
from ralph_desk.project.logs import log_details
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ControlError, NotFoundError, ServiceError
from ralph_desk.services.opening import ServicesOnFirstUse

log = logging.getLogger("ralph_desk.loop")

IssuerFactory = Callable[[], Awaitable[EndpointIssuer]]
Watcher = Callable[[LiveEvent | None], None]
"""Sees each live event of this controller's loop, then None once the loop has ended and is recorded."""
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
RECENT_SESSIONS = 20
START_WAIT_S = 60.0
"""Longest ralph_run waits for the loop to record its run (an answer then names the loop id)."""
STOP_WAIT_S = 30.0
"""Longest ralph_stop waits for the agent to end and its task to return to the queue."""


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
    """One project's loop as IDE tools see it; MCP-started runs make no edits unless allowed.

    Built over services opened on first use, it answers ralph_init and ralph_validate on a folder
    that is no project yet, and every other tool there with `not_initialised`.
    """

    def __init__(
        self, services: Services | ServicesOnFirstUse, make_issuer: IssuerFactory | None = None
    ) -> None:
        self.paths: ProjectPaths = services.paths
        if isinstance(services, Services):
            opened = services
            self.db_url: str | None = services.db.url
            self._open: Callable[[], Services] = lambda: opened
        else:
            self.db_url = services.db_url
            self._open = services
        self.make_issuer = make_issuer
        self.runner: LoopRunner | None = None
        self.task: asyncio.Task[Any] | None = None
        self.last_error: str | None = None
        self.last_activity: datetime | None = None
        self._loop_started = threading.Event()
        self._loop_ended = threading.Event()
        self._followed = False
        self._watchers: list[Watcher] = []
        self._run_logs: dict[int, str] = {}  # loop id -> the log of the ralph_run that started it
        self.release: Callable[[], Awaitable[None]] | None = None
        """Stops what this controller started to serve its agents (the stdio server's own HTTP host)."""

    @property
    def services(self) -> Services:
        """The project's services; `not_initialised` while the folder has no `.ralph/`."""
        if not self.paths.ralph.is_dir():
            raise ControlError("not_initialised", NOT_INITIALISED, {"root": str(self.paths.root)})
        return self._open()

    # --- the loop of this process ---------------------------------------------------------------

    def issue_through(self, issuer: EndpointIssuer) -> None:
        """Run loops through `issuer`, a server that already runs (the one serving this controller)."""

        async def running() -> EndpointIssuer:
            return issuer

        self.make_issuer = running

    def follow(self, runner: LoopRunner, task: asyncio.Task[Any]) -> None:
        """Report on and stop a loop this process started elsewhere (a headless `ralph-desk run`)."""
        self._loop_started.clear()
        self._loop_ended.clear()
        self.runner, self.task = runner, task
        self._followed = True
        runner.subscribe(self._seen)

    def running(self) -> bool:
        """Whether a loop or understanding run of this process is going."""
        return self.task is not None and not self.task.done()

    async def client_gone(self, now: bool = False) -> None:
        """The IDE client went away: end this process's loop as the project's `ide_disconnect` says.

        `finish` (the default) lets the current agent session end and stops the loop after it; `stop`,
        or `now` (a stop signal arrived), ends the agent at once and puts its task back in the queue.
        Returns once the loop has ended and recorded that.
        """
        runner, task = self.runner, self.task
        if runner is not None and task is not None and not task.done():
            choice = "stop" if now else self._disconnect_choice()
            log.info("the IDE client went away: the loop stops (ide_disconnect: %s)", choice)
            if choice == "stop":
                runner.stop()
            else:
                runner.stop_after_session()
            await asyncio.wait({task})
        if self.release is not None:
            # Stopped here, whole (a stop signal cancels the rest of the server meanwhile), not cancelled
            # with the event loop: a server cancelled that way prints a traceback.
            release, self.release = self.release, None
            with anyio.CancelScope(shield=True):
                await release()

    def _disconnect_choice(self) -> str:
        try:
            return read_config(self.paths).ide_disconnect
        except ProjectError:
            return "stop"  # a broken config: never leave a loop nobody follows

    def _call_in_loop(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the event loop thread (tool handlers run in worker threads)."""
        if _on_loop_thread():
            return fn()
        return anyio.from_thread.run_sync(fn)

    def _details(self, tool: str, **more: object) -> dict[str, object]:
        return {"tool": tool, **more}

    def _refusal(self, tool: str, error: ProjectError) -> dict[str, object]:
        """The details of refused settings: an untrusted program is named, with how to allow it."""
        if not isinstance(error, UntrustedCommandError):
            return self._details(tool)
        found = error.untrusted
        return self._details(
            tool, reason="untrusted_command", setting=found.setting, command=found.command, allow=TRUST_HINT
        )

    def _log_details(self, tool: str, **more: object) -> dict[str, object]:
        return {**log_details(self.paths.logs_dir, tool), **more}

    def _issuer(self, tool: str) -> IssuerFactory:
        if self.make_issuer is None:
            raise ControlError("execution_failed", NO_RUNNER, self._details(tool, reason="no_loop_runner"))
        return self.make_issuer

    def _check_agent(self, settings: LoopSettings, tool: str) -> None:
        try:
            adapter_for(settings).check_available(settings)
        except AgentUnavailableError as error:
            raise ControlError(
                "execution_failed", str(error), self._log_details(tool, agent=settings.agent)
            ) from None

    def _start(self, work: Callable[[], Coroutine[Any, Any, None]], name: str) -> None:
        self._loop_started.clear()
        self._loop_ended.clear()
        self._followed = False

        def start() -> None:
            self.task = asyncio.get_running_loop().create_task(work(), name=name)

        self._call_in_loop(start)

    def _wait(self, event: threading.Event, timeout_s: float) -> None:
        """Wait, bounded, for the loop to reach `event` (not on the event loop's own thread)."""
        if not _on_loop_thread():
            event.wait(timeout_s)

    def _refuse_while_running(self, tool: str, what: str) -> None:
        if not self.running():
            return
        loop_id = self.runner.status.loop_run_id if self.runner is not None else None
        raise ControlError(
            "already_running",
            f"a loop is already running in this server{f' (loop run #{loop_id})' if loop_id else ''}; {what}",
            self._details(tool, reason="already_running", loopId=loop_id),
        )

    # --- the tools ------------------------------------------------------------------------------

    def init(self, force: bool) -> RalphInitResult:
        """Create or re-create `.ralph/` (keeping the database, progress and learnings) and write prd.json."""
        paths = self.paths
        existed = paths.ralph.is_dir()
        try:
            init_project(paths.root, force=force, db_url=self.db_url)
            services = self.services
            prd.write(paths.prd_file, prd.export_document(services), root=paths.root)
        except ProjectExistsError:
            raise ControlError(
                "invalid_argument",
                f"{paths.ralph} already exists; call ralph_init with force=true to re-create its "
                "configuration (the database, progress.txt and learnings.txt are kept)",
                self._details("ralph_init", force=force),
            ) from None
        except (ProjectError, ServiceError, OSError) as error:
            raise ControlError("execution_failed", str(error), self._log_details("ralph_init")) from None
        return RalphInitResult(
            task_count=sum(services.tasks.count_by_status().values()),
            prd_path=str(paths.prd_file),
            ralph_dir=str(paths.ralph),
            initialized=None if existed else True,
            reinitialized=True if existed else None,
        )

    def validate(self) -> RalphValidateResult:
        """What is missing or broken in the project folder, as data (also where there is no project yet)."""
        root = self.paths.root
        problems = validate_project(root, db_url=self.db_url)
        return RalphValidateResult(
            valid=not problems,
            problems=[
                ValidationProblem(path=_shown_path(root, item.path), message=item.message)
                for item in problems
            ],
        )

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
        """Start the loop in the background (returns once it has started, or with `wait` once it has ended).

        Every call has its log, named in the result and in an execution error; a loop's log follows
        it to its end, where its summary is written beside it.
        """
        services = self.services
        arguments: dict[str, Any] = {
            "max_iterations": max_iterations,
            "dry_run": dry_run,
            "agent": agent,
            "allow_edits": allow_edits,
            "parallel": parallel,
            "allowed_paths": allowed_paths,
            "wait": wait,
        }
        run_log = self._open_log("ralph_run", arguments)
        try:
            result = self._run(services, arguments, run_log, progress)
        except ControlError as error:
            run_log.close("refused" if error.code != "execution_failed" else "failed", error.message)
            details = {**error.details, "logPath": str(run_log.path)}
            raise ControlError(error.code, error.message, details) from None
        if result.dry_run:
            run_log.close("ok", result=result.model_dump(mode="json", by_alias=True))
        return result.model_copy(update={"log_path": str(run_log.path)})

    def _open_log(self, tool: str, arguments: dict[str, Any]) -> ToolRunLog:
        try:
            return ToolRunLog(self.paths, tool, arguments)
        except (OSError, ProjectError) as error:
            raise ControlError(
                "execution_failed", f"could not write the log of {tool}: {error}", self._log_details(tool)
            ) from None

    def _run(
        self, services: Services, arguments: dict[str, Any], run_log: ToolRunLog, progress: Progress | None
    ) -> RalphRunResult:
        allowed_paths = arguments["allowed_paths"]
        if allowed_paths is not None and (refused := problem("allowed_paths", allowed_paths)) is not None:
            raise ControlError("invalid_argument", refused, self._details("ralph_run", field="allowed_paths"))
        try:
            overrides = RunOverrides(
                agent=arguments["agent"],
                max_iterations=arguments["max_iterations"] or None,
                allow_edits=arguments["allow_edits"],
                parallel=arguments["parallel"],
                allowed_paths=tuple(allowed_paths) if allowed_paths is not None else None,
            )
            settings = load_checked(self.services, overrides)
        except ProjectError as error:
            raise ControlError("invalid_argument", str(error), self._refusal("ralph_run", error)) from None
        if arguments["dry_run"]:
            return self._preview(services, settings)
        try:
            services.workspaces.require_base()
        except ProjectError as error:
            details = self._details("ralph_run", reason="no_base_branch")
            raise ControlError("invalid_argument", str(error), details) from None
        make_issuer = self._issuer("ralph_run")
        self._refuse_while_running("ralph_run", "ralph_status follows it, ralph_stop ends it")
        self._check_no_loop_elsewhere("ralph_run")
        self._check_agent(settings, "ralph_run")
        try:
            guard.check_read_only_held(settings.agent, settings.allow_edits, self.paths.root)
        except guard.EditsNotHeldError as error:
            details = self._details("ralph_run", reason="edits_not_held")
            raise ControlError("invalid_argument", str(error), details) from None
        first = peek_next_task(services)
        ended: queue.SimpleQueue[LiveEvent | None] = queue.SimpleQueue()

        async def run_loop() -> None:
            runner = build_runner(services, await make_issuer(), settings, RunOptions(exit_when_idle=True))
            await self._guarded(runner, runner.run, run_log)

        self.last_error = None
        self._watchers = [run_log.event, *([self._ended_watcher(ended)] if arguments["wait"] else [])]
        self._start(run_loop, "ralph-loop")
        self._wait(self._loop_started, START_WAIT_S)
        if self.last_error is not None:
            raise ControlError(
                "execution_failed",
                f"the loop did not start: {self.last_error}",
                self._log_details("ralph_run"),
            )
        live = self.runner.status if self.runner is not None else None
        loop_id = live.loop_run_id if live else None
        if not arguments["wait"] or loop_id is None or _on_loop_thread():
            return RalphRunResult(
                status=live.state.value if live and live.loop_run_id else LoopState.RUNNING.value,
                loop_id=loop_id,
                iteration_number=0,
                current_task=first.task.id if first is not None and first.task is not None else None,
            )
        self._follow_to_end(ended, settings.max_iterations, progress)
        summary = self._summary_of(loop_id)
        return RalphRunResult(
            status=summary.status,
            loop_id=loop_id,
            iteration_number=summary.sessions_run,
            current_task=first.task.id if first is not None and first.task is not None else None,
            summary=summary,
        )

    def _ended_watcher(self, ended: queue.SimpleQueue[LiveEvent | None]) -> Watcher:
        """A watcher passing each session's end, and the loop's, to a waiting tool's thread."""

        def watch(event: LiveEvent | None) -> None:
            if event is None or event.kind is EventKind.SESSION_ENDED:
                ended.put(event)

        return watch

    def _follow_to_end(
        self, ended: queue.SimpleQueue[LiveEvent | None], total: int | None, progress: Progress | None
    ) -> None:
        """Wait for the loop's end (its limits bound it), reporting each session's end as progress."""
        done = 0
        while (event := ended.get()) is not None:
            done += 1
            if progress is not None:
                task = event.data.get("task_id")
                what = f"task #{task}" if task is not None else "a session"
                progress(done, float(total) if total else None, f"session {done} ended: {what} {event.text}")

    def _summary_of(self, loop_id: int) -> LoopSummary:
        services = self.services
        run = services.sessions.get_loop_run(loop_id)
        return loop_summary(services, run, self._run_logs.get(loop_id))

    def _check_no_loop_elsewhere(self, tool: str) -> None:
        """Refuse now, not in the background, when another process or the window holds the loop lock."""
        probe = project_lock(self.paths.ralph)
        try:
            probe.acquire()
        except LoopAlreadyRunningError as error:
            raise ControlError(
                "already_running", str(error), self._details(tool, reason="already_running")
            ) from None
        probe.release()

    def _preview(self, services: Services, settings: LoopSettings) -> RalphRunResult:
        """The tasks the loop would attempt and its first prompt, which `ralph://prompt` then serves."""
        queue = describe_queue(services, limit=PREVIEW_TASKS)
        preview = preview_next_session(services, settings, self.paths.root)
        if preview is not None:
            contained.write_text(self.paths.root, self.paths.mcp_dir / PROMPT_FILE_NAME, preview.prompt)
        return RalphRunResult(
            dry_run=True,
            tasks_to_attempt=[
                TaskToAttempt(id=t.id, title=t.title, priority=t.priority.value) for t in queue
            ],
            preview=preview.prompt if preview else "nothing is runnable",
            mcp_config=preview.mcp_config if preview else None,
            tools=sorted(preview.tools) if preview else [],
        )

    async def _guarded(
        self,
        runner: LoopRunner,
        work: Callable[[], Awaitable[object]],
        run_log: ToolRunLog | None = None,
    ) -> None:
        """Run `work` of `runner` as this controller's loop; its failure becomes the status's lastError.

        Once it has ended, its log gets the run's summary and its watchers hear that it has ended.
        """
        self.runner = runner
        runner.subscribe(self._seen)
        try:
            await work()
        except LoopAlreadyRunningError as error:
            self.last_error = str(error)
        except Exception as error:  # the top of a background task: keep the reason for ralph_status
            log.exception("loop started by an MCP client failed")
            self.last_error = f"{type(error).__name__}: {error}"
        finally:
            self._loop_started.set()
            try:
                if run_log is not None:
                    await asyncio.to_thread(self._close_run_log, run_log, runner.status.loop_run_id)
            finally:  # a waiting ralph_run hears of the end whatever became of the log
                watchers, self._watchers = self._watchers, []
                for watcher in watchers:
                    watcher(None)
                self._loop_ended.set()

    def _close_run_log(self, run_log: ToolRunLog, loop_id: int | None) -> None:
        """Off the event loop: write the ended loop's summary into its log and beside it."""
        if loop_id is None:  # the understanding run (no loop run), or a loop that never started
            run_log.close("failed" if self.last_error else "ok", self.last_error)
            return
        self._run_logs[loop_id] = str(run_log.path)
        try:
            summary = self._summary_of(loop_id).model_dump(mode="json", by_alias=True)
        except Exception as error:  # the loop's end is still told, without its figures
            log.exception("could not summarise loop run #%s", loop_id)
            run_log.close("failed", f"could not summarise the run: {error}")
            return
        run_log.close("failed" if self.last_error else "ok", self.last_error, loop_summary=summary)

    def _seen(self, event: LiveEvent) -> None:
        """Note the loop's activity; its first state change means its run is recorded, a final one its end."""
        self.last_activity = datetime.now(UTC)
        if self.runner is not None and self.runner.status.loop_run_id is not None:
            self._loop_started.set()
        for watcher in self._watchers:
            watcher(event)
        if event.kind is EventKind.LOOP_STATE and event.text in FINAL_STATES:
            self._loop_ended.set()

    def status(self, loop_id: int | None = None) -> RalphStatusResult:
        """The loop of this process as it runs, else a loop another process runs, else the last run.

        With `loop_id`, that run's summary once it has ended (else the last run's).
        """
        services = self.services
        latest = services.sessions.latest_loop_run()
        asked = latest if loop_id is None else self._loop_run(services, loop_id, "ralph_status")
        recent = services.sessions.list(limit=RECENT_SESSIONS)
        finished = next((session for session in recent if session.ended_at is not None), None)
        common: dict[str, Any] = {
            "metrics": self._metrics(services),
            "quality_metrics": QualityMetrics.of(finished) if finished else None,
            "last_run": None if latest is None else LoopRunInfo.of(latest),
            "last_activity": self._last_activity(latest, recent),
            "summary": (
                None
                if asked is None or _still_going(asked)
                else loop_summary(services, asked, self._run_logs.get(asked.id))
            ),
        }
        runner = self.runner
        if runner is not None and self.running():
            live = runner.status
            return _with_loop_status(
                RalphStatusResult(
                    status=live.state.value,
                    running=True,
                    loop_id=live.loop_run_id,
                    iteration_number=live.iteration,
                    current_task=live.current_task_id,
                    running_sessions=[
                        RunningSession(session_id=session, task_id=task)
                        for session, task in live.running.items()
                    ],
                    resumes_at=maybe_utc(live.resumes_at),
                    **common,
                )
            )
        if latest is not None and _still_going(latest):
            return _with_loop_status(
                RalphStatusResult(
                    status=latest.state,
                    running=True,
                    loop_id=latest.id,
                    iteration_number=latest.iterations,
                    **common,
                )
            )
        return _with_loop_status(
            RalphStatusResult(
                status=latest.state if latest is not None else NOT_RUNNING,
                loop_id=latest.id if latest is not None else None,
                iteration_number=latest.iterations if latest is not None else None,
                last_error=self.last_error,
                **common,
            )
        )

    def _loop_run(self, services: Services, loop_id: int, tool: str) -> LoopRun:
        """Loop run `loop_id`, refused naming the last one when there is no such run."""
        try:
            return services.sessions.get_loop_run(loop_id)
        except NotFoundError:
            latest = services.sessions.latest_loop_run()
            known = f"loop runs are numbered 1 to {latest.id}" if latest else "no loop has run yet"
            raise ControlError(
                "invalid_argument", f"no loop run #{loop_id}: {known}", self._details(tool, loopId=loop_id)
            ) from None

    def _last_activity(self, run: LoopRun | None, recent: list[AgentSession]) -> datetime | None:
        """The latest moment the loop or a session did something that is known here."""
        moments = [self.last_activity] if self.last_activity else []
        for session in recent[:1]:
            moments.append(utc(session.ended_at or session.started_at))
        if run is not None:
            moments.append(utc(run.ended_at or run.started_at))
        return max(moments, default=None)

    def _metrics(self, services: Services) -> LoopMetrics:
        counts = services.tasks.count_by_status()
        return LoopMetrics(
            tasks_completed=counts.get(TaskStatus.DONE.value, 0),
            tasks_failed=counts.get(TaskStatus.FAILED.value, 0),
            tasks_remaining=sum(count for status, count in counts.items() if status not in FINISHED_TASKS),
            tasks_needing_input=counts.get(TaskStatus.NEEDS_INPUT.value, 0),
        )

    def stop(self) -> RalphStopResult:
        """Stop this process's loop: its agent's process group ends, its task goes back to pending."""
        services = self.services
        self._issuer("ralph_stop")
        runner = self.runner
        if runner is None or not self.running():
            run = services.sessions.latest_loop_run()
            if run is not None and _still_going(run):
                raise ControlError(
                    "execution_failed",
                    f"loop run #{run.id} was not started by this server; stop it where it runs "
                    "(the window's Stop button, or Ctrl+C where `ralph-desk run` runs)",
                    self._details("ralph_stop", loopId=run.id, reason="not_started_here"),
                )
            return RalphStopResult(status=NOT_RUNNING)
        task_id = runner.status.current_task_id
        self._call_in_loop(runner.stop)
        if not self._followed:  # a followed loop's process ends with it, this server too: answer now
            self._wait(self._loop_ended, STOP_WAIT_S)
        return RalphStopResult(
            status=LoopState.STOPPED.value, loop_id=runner.status.loop_run_id, returned_task=task_id
        )

    def history(
        self, limit: int, offset: int, iteration: int | None, kind: str, loop_id: int | None = None
    ) -> RalphHistoryResult:
        """A page of past iterations, one iteration (of the last loop run or of `loop_id`) in full, or the
        learnings agents recorded."""
        if kind == "learnings":
            return self._learnings(limit, offset)
        if iteration is not None:
            return self._iteration(iteration, limit, loop_id)
        sessions = self.services.sessions.list(limit=HISTORY_SCAN)
        page = sessions[offset : offset + limit]
        return RalphHistoryResult(
            iterations=[IterationEntry.of(session) for session in page],
            total=len(sessions),
            has_more=offset + len(page) < len(sessions),
            errors=item_errors(sessions) or None,
        )

    def _iteration(self, number: int, limit: int, loop_id: int | None) -> RalphHistoryResult:
        services = self.services
        run = (
            services.sessions.latest_loop_run()
            if loop_id is None
            else self._loop_run(services, loop_id, "ralph_history")
        )
        sessions = [] if run is None else services.sessions.list(loop_run_id=run.id, limit=HISTORY_SCAN)
        found = [session for session in sessions if session.iteration == number]
        if not found:
            known = sorted({session.iteration for session in sessions if session.iteration is not None})
            which = "the last loop run" if loop_id is None else "loop run"
            where = "no loop has run yet" if run is None else f"{which} (#{run.id}) has iterations {known}"
            raise ControlError(
                "invalid_argument",
                f"no iteration {number}: {where}",
                self._details("ralph_history", iteration=number, known=known),
            )
        session = found[0]
        signals = services.signals.for_session(session.id)
        return RalphHistoryResult(
            iteration=IterationDetail.of_session(session, signals, limit, final_text(self.paths, session)),
            errors=item_errors(sessions, signals) or None,
        )

    def _learnings(self, limit: int, offset: int) -> RalphHistoryResult:
        learned = self.services.signals.learnings()
        signals = list(reversed(learned))
        sessions = self.services.sessions.list(limit=HISTORY_SCAN)
        iterations = {session.id: session.iteration for session in sessions}
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
            errors=item_errors(learned, sessions) or None,
        )

    def understand(self) -> RalphUnderstandResult:
        """Start a read-only session that maps the codebase into `.ralph/codebase_map.md`."""
        services = self.services
        make_issuer = self._issuer("ralph_understand")
        self._refuse_while_running(
            "ralph_understand",
            "the understanding run starts only while no loop runs: stop it with ralph_stop, "
            "or wait until ralph_status says it is no longer running",
        )
        self._check_no_loop_elsewhere("ralph_understand")
        try:
            settings = load_checked(self.services, RunOverrides(allow_edits=False))
            guard.check_read_only_held(settings.agent, settings.allow_edits, self.paths.root)
        except ProjectError as error:
            raise ControlError(
                "invalid_argument", str(error), self._refusal("ralph_understand", error)
            ) from None
        self._check_agent(settings, "ralph_understand")

        run_log = self._open_log("ralph_understand", {})

        async def understand_run() -> None:
            runner = build_runner(services, await make_issuer(), settings)
            plan = plan_recipe_session(services, Recipe.UNDERSTAND)
            await self._guarded(runner, lambda: runner.run_session(plan), run_log)

        self._watchers = [run_log.event]
        self._start(understand_run, "ralph-understand")
        return RalphUnderstandResult(
            status=LoopState.RUNNING.value, map_path=str(self.paths.codebase_map), log_path=str(run_log.path)
        )


def _with_loop_status(result: RalphStatusResult) -> RalphStatusResult:
    """The result with seed 004's `loopStatus` object, the same facts as its top-level keys."""
    shown = LoopStatusInfo(
        loop_id=result.loop_id,
        iteration_number=result.iteration_number,
        current_task=result.current_task,
        status=result.status,
    )
    return result.model_copy(update={"loop_status": shown})


def _still_going(run: LoopRun) -> bool:
    """Whether a loop run recorded in the database (by any process) has not ended."""
    return run.ended_at is None and run.state not in FINAL_STATES
