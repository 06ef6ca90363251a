"""Loop control for IDE clients (seeds 003, 004): init, validate, background runs, status, stop, history."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any

import anyio.from_thread

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import LoopState, Recipe, TaskStatus, Verb
from ralph_desk.loop.agents import adapter_for
from ralph_desk.loop.agents.base import AgentUnavailableError
from ralph_desk.loop.lock import LoopAlreadyRunningError
from ralph_desk.loop.planner import describe_queue, plan_recipe_session
from ralph_desk.loop.preview import preview_next_session
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.loop.settings import load_settings
from ralph_desk.project import ProjectError, init_project, validate_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ControlError

log = logging.getLogger("ralph_desk.loop")

IssuerFactory = Callable[[], Awaitable[EndpointIssuer]]


def _on_loop_thread() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LoopController:
    """One project's loop as IDE tools see it; MCP-started runs make no edits unless allowed."""

    def __init__(self, services: Services, make_issuer: IssuerFactory) -> None:
        self.services = services
        self.make_issuer = make_issuer
        self.runner: LoopRunner | None = None
        self.task: asyncio.Task[Any] | None = None
        self.last_error: str | None = None

    def _call_in_loop(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the event loop thread (handlers run in worker threads)."""
        if _on_loop_thread():
            return fn()
        return anyio.from_thread.run_sync(fn)

    def init(self, force: bool) -> dict[str, Any]:
        """Create or re-create `.ralph/` (keeping the database, progress and learnings)."""
        paths = self.services.paths
        existed = paths.ralph.is_dir()
        try:
            init_project(paths.root, force=force)
        except ProjectError as error:
            raise ControlError("invalid_argument", str(error), {"force": force}) from None
        total = sum(self.services.tasks.count_by_status().values())
        result = {"success": True, "taskCount": total, "prdPath": str(paths.prd_file)}
        result["reinitialized" if existed else "initialized"] = True
        return result

    def validate(self) -> dict[str, Any]:
        """Check the project folder."""
        problems = validate_project(self.services.paths.root)
        return {"success": not problems, "problems": [str(problem) for problem in problems]}

    def run(
        self, max_iterations: int | None, dry_run: bool, agent: str | None, allow_edits: bool
    ) -> dict[str, Any]:
        """Start the loop in the background (returns at once), or preview it."""
        paths = self.services.paths
        try:
            settings = load_settings(
                paths, agent=agent, max_iterations=max_iterations or None, allow_edits=allow_edits
            )
        except ProjectError as error:
            raise ControlError("invalid_argument", str(error)) from None
        if dry_run:
            queue = describe_queue(self.services, limit=20)
            preview = preview_next_session(self.services, settings, paths.root)
            return {
                "success": True,
                "dryRun": True,
                "tasksToAttempt": [
                    {"id": t.id, "title": t.title, "priority": t.priority.value} for t in queue
                ],
                "preview": preview.prompt if preview else "nothing is runnable",
                "mcpConfig": preview.mcp_config if preview else None,
                "tools": sorted(preview.tools) if preview else [],
            }
        if self.task is not None and not self.task.done():
            raise ControlError("execution_failed", "a loop is already running in this server", self.status())
        try:
            adapter_for(settings).check_available(settings)
        except AgentUnavailableError as error:
            raise ControlError("execution_failed", str(error), {"agent": settings.agent}) from None

        def start() -> None:
            self.task = asyncio.get_running_loop().create_task(self._run(settings), name="ralph-loop")

        self._call_in_loop(start)
        return {
            "success": True,
            "loopId": None,
            "iterationNumber": 0,
            "currentTask": None,
            "status": "running",
        }

    async def _run(self, settings: Any) -> None:
        issuer = await self.make_issuer()
        self.runner = LoopRunner(self.services, issuer, settings, exit_when_idle=True)
        try:
            await self.runner.run()
        except LoopAlreadyRunningError as error:
            self.last_error = str(error)
        except Exception as error:
            log.exception("loop started by an MCP client failed")
            self.last_error = str(error)

    def status(self) -> dict[str, Any]:
        """The running loop's state and metrics, or the last run's."""
        counts = self.services.tasks.count_by_status()
        remaining = sum(
            counts.get(status.value, 0) for status in (TaskStatus.PENDING, TaskStatus.IN_PROGRESS)
        )
        runner = self.runner
        if runner is not None and self.task is not None and not self.task.done():
            state = runner.status
            return {
                "success": True,
                "loopStatus": {
                    "loopId": state.loop_run_id,
                    "iterationNumber": state.iteration,
                    "currentTask": state.current_task_id,
                    "status": state.state.value,
                    "resumesAt": state.resumes_at.isoformat() if state.resumes_at else None,
                },
                "metrics": {
                    "tasksCompleted": state.completed,
                    "tasksFailed": state.failed,
                    "tasksRemaining": remaining,
                    "costUsd": round(state.cost_usd, 6),
                },
            }
        last = self.services.sessions.latest_loop_run()
        return {
            "success": True,
            "status": "not_running",
            "lastError": self.last_error,
            "lastRun": json.loads(json.dumps(asdict(last), default=str)) if last else None,
            "metrics": {"tasksDone": counts.get(TaskStatus.DONE.value, 0), "tasksRemaining": remaining},
        }

    def stop(self) -> dict[str, Any]:
        """Stop the running loop (the current agent ends; that is not counted as stuck)."""
        runner = self.runner
        if runner is None or self.task is None or self.task.done():
            return {"success": True, "status": "not_running"}
        self._call_in_loop(runner.stop)
        return {"success": True, "status": LoopState.STOPPED.value}

    def history(self, limit: int, offset: int, iteration: int | None, kind: str) -> dict[str, Any]:
        """Past iterations (paginated), one iteration in full, or the learnings recorded."""
        if kind == "learnings":
            learnings = self.services.signals.learnings()
            return {
                "success": True,
                "learnings": [
                    {
                        "text": s.text,
                        "kind": s.kind,
                        "scope": s.scope,
                        "taskId": s.task_id,
                        "session": s.session_id,
                    }
                    for s in learnings
                ],
            }
        sessions = self.services.sessions.list(limit=1000)
        if iteration is not None:
            match = [s for s in sessions if s.iteration == iteration]
            if not match:
                raise ControlError("invalid_argument", f"no iteration {iteration}", {"iteration": iteration})
            session = match[0]
            signals = self.services.signals.for_session(session.id)
            return {
                "success": True,
                "iteration": {
                    **json.loads(json.dumps(asdict(session), default=str)),
                    "signals": [
                        {"verb": s.verb.value, "summary": s.summary or s.what or s.text or s.question}
                        for s in signals
                    ],
                    "learnings": [s.text for s in signals if s.verb is Verb.LEARNED],
                },
            }
        page = sessions[offset : offset + limit]
        return {
            "success": True,
            "iterations": [
                {
                    "iterationNumber": s.iteration,
                    "sessionId": s.id,
                    "timestamp": s.started_at.isoformat(),
                    "taskAttempted": s.task_id,
                    "result": s.outcome,
                    "closingVerb": s.closing_verb,
                    "costUsd": s.cost_usd,
                    "turns": s.turns,
                    "duration": (s.ended_at - s.started_at).total_seconds() if s.ended_at else None,
                }
                for s in page
            ],
            "total": len(sessions),
            "hasMore": offset + limit < len(sessions),
        }

    def understand(self) -> dict[str, Any]:
        """Start a read-only session that maps the codebase into `.ralph/codebase_map.md`."""
        paths = self.services.paths
        settings = load_settings(paths, allow_edits=False)
        try:
            adapter_for(settings).check_available(settings)
        except AgentUnavailableError as error:
            raise ControlError("execution_failed", str(error), {"agent": settings.agent}) from None

        async def understand_run() -> None:
            issuer = await self.make_issuer()
            runner = LoopRunner(self.services, issuer, settings)
            plan = plan_recipe_session(self.services, Recipe.UNDERSTAND)
            await runner.run_session(plan)

        def start() -> None:
            self.task = asyncio.get_running_loop().create_task(understand_run(), name="ralph-understand")

        self._call_in_loop(start)
        return {"success": True, "status": "running", "mapPath": str(paths.codebase_map)}
