"""Loop tools for IDE clients (seed 003, 004): init, validate, run, status, stop, history, understand.

With a loop runner (`call.loop`) each tool asks it. Without one, init, validate, status and history
work from the project folder and the database; run, stop and understand are refused. Failures are
tool errors whose text is seed 003's structured error: `{"code", "message", "details"}`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ralph_desk import prd
from ralph_desk.domain.enums import LoopState, TaskStatus
from ralph_desk.domain.records import AgentSession
from ralph_desk.mcp_server.binding import LoopControl, StructuredToolError, ToolCall, handles
from ralph_desk.mcp_server.results import (
    IterationEntry,
    LearningEntry,
    LoopResult,
    LoopRunInfo,
    RalphHistoryResult,
    RalphInitResult,
    RalphRunResult,
    RalphStatusResult,
    RalphStopResult,
    RalphUnderstandResult,
    RalphValidateResult,
    ValidationProblem,
    utc,
)
from ralph_desk.project import ProjectError, ProjectExistsError, init_project, validate_project
from ralph_desk.services.errors import InvalidValueError, ServiceError

log = logging.getLogger("ralph_desk.mcp")

ResultT = TypeVar("ResultT", bound=LoopResult)

NO_RUNNER = (
    "the loop runner is not available in this server (it serves the project's data only); "
    "start the loop from the ralph-desk window or with `ralph-desk run --root DIR`"
)
FINAL_STATES = frozenset({LoopState.COMPLETED.value, LoopState.STOPPED.value, LoopState.FAILED.value})
HISTORY_SCAN = 1_000
"""Most sessions read for one history page (the sessions service's own limit)."""


class LoopToolError(StructuredToolError):
    """A loop-control failure, sent as seed 003's structured error."""


def _log_details(call: ToolCall[Any], tool: str) -> dict[str, Any]:
    return {"tool": tool, "logDir": str(call.services.paths.logs_dir)}


def _runner(call: ToolCall[Any], tool: str) -> LoopControl:
    if call.loop is None:
        raise LoopToolError("execution_failed", NO_RUNNER, {"tool": tool, "reason": "no_loop_runner"})
    return call.loop


def _ask(
    call: ToolCall[Any], tool: str, model: type[ResultT], request: Callable[[], dict[str, Any]]
) -> ResultT:
    """Ask the loop runner, mapping whatever it raises onto a structured error."""
    try:
        payload = request()
    except StructuredToolError:
        raise
    except (InvalidValueError, ValueError) as error:
        raise LoopToolError("invalid_argument", str(error), {"tool": tool}) from None
    except ServiceError as error:
        raise LoopToolError("execution_failed", str(error), _log_details(call, tool)) from None
    except Exception as error:  # the top of a request: report, never a traceback to the client
        log.exception("loop runner failed in %s", tool)
        raise LoopToolError(
            "execution_failed",
            f"the loop runner failed: {type(error).__name__}: {error}",
            _log_details(call, tool),
        ) from None
    try:
        return model.model_validate(payload)
    except ValidationError:
        log.exception("loop runner returned an unexpected %s result: %r", tool, payload)
        raise LoopToolError(
            "execution_failed",
            f"the loop runner returned a {tool} result of an unexpected shape",
            {"tool": tool},
        ) from None


def _shown_path(root: Path, path: Path | str) -> str:
    """A path relative to the project root when it is inside it (a database URL as it is)."""
    if isinstance(path, str):
        return path
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _metrics(call: ToolCall[Any]) -> dict[str, int]:
    counts = call.services.tasks.count_by_status()
    finished = {TaskStatus.DONE.value, TaskStatus.FAILED.value, TaskStatus.SKIPPED.value}
    return {
        "tasksCompleted": counts[TaskStatus.DONE.value],
        "tasksFailed": counts[TaskStatus.FAILED.value],
        "tasksRemaining": sum(count for status, count in counts.items() if status not in finished),
    }


@handles("ralph_init")
def ralph_init(call: ToolCall[Any]) -> RalphInitResult:
    """Create the .ralph/ folder (or, with force, re-create its configuration) and write prd.json."""
    force = bool(call.args.force)
    if call.loop is not None:
        loop = call.loop
        return _ask(call, "ralph_init", RalphInitResult, lambda: loop.init(force))
    paths = call.services.paths
    existed = paths.ralph.is_dir()
    try:
        init_project(paths.root, force=force, db_url=call.services.db.url)
        prd.write(paths.prd_file, prd.export_document(call.services))
    except ProjectExistsError as error:
        raise LoopToolError("invalid_argument", str(error), {"tool": "ralph_init", "force": force}) from None
    except (ProjectError, ServiceError, OSError) as error:
        raise LoopToolError("execution_failed", str(error), _log_details(call, "ralph_init")) from None
    return RalphInitResult(
        success=True,
        task_count=sum(call.services.tasks.count_by_status().values()),
        prd_path=str(paths.prd_file),
        initialized=None if existed else True,
        reinitialized=True if existed else None,
    )


@handles("ralph_validate")
def ralph_validate(call: ToolCall[Any]) -> RalphValidateResult:
    """What is missing or broken in the project folder."""
    if call.loop is not None:
        loop = call.loop
        return _ask(call, "ralph_validate", RalphValidateResult, loop.validate)
    root = call.services.paths.root
    problems = validate_project(root, db_url=call.services.db.url)
    return RalphValidateResult(
        success=True,
        valid=not problems,
        problems=[
            ValidationProblem(path=_shown_path(root, item.path), message=item.message) for item in problems
        ],
    )


@handles("ralph_run")
def ralph_run(call: ToolCall[Any]) -> RalphRunResult:
    """Start the loop (it runs on) or preview it."""
    loop = _runner(call, "ralph_run")
    args = call.args
    return _ask(
        call,
        "ralph_run",
        RalphRunResult,
        lambda: loop.run(args.max_iterations, args.dry_run, args.agent, args.allow_edits),
    )


@handles("ralph_status")
def ralph_status(call: ToolCall[Any]) -> RalphStatusResult:
    """Whether the loop runs, where it is, and task counts."""
    if call.loop is not None:
        loop = call.loop
        return _ask(call, "ralph_status", RalphStatusResult, loop.status)
    run = call.services.sessions.latest_loop_run()
    metrics = _metrics(call)
    if run is None or run.ended_at is not None or run.state in FINAL_STATES:
        last = None if run is None else LoopRunInfo.of(run)
        return RalphStatusResult(success=True, status="not_running", last_run=last, metrics=metrics)
    # A loop of another process (a headless `ralph-desk run`) is still going: report it from the database.
    return RalphStatusResult(
        success=True,
        status=run.state,
        loop_id=run.id,
        iteration_number=run.iterations,
        last_run=LoopRunInfo.of(run),
        metrics=metrics,
    )


@handles("ralph_stop")
def ralph_stop(call: ToolCall[Any]) -> RalphStopResult:
    """Ask the running loop to stop."""
    loop = _runner(call, "ralph_stop")
    return _ask(call, "ralph_stop", RalphStopResult, loop.stop)


@handles("ralph_understand")
def ralph_understand(call: ToolCall[Any]) -> RalphUnderstandResult:
    """Start the read-only run that writes .ralph/codebase_map.md."""
    loop = _runner(call, "ralph_understand")
    return _ask(call, "ralph_understand", RalphUnderstandResult, loop.understand)


@handles("ralph_history")
def ralph_history(call: ToolCall[Any]) -> RalphHistoryResult:
    """A page of past iterations, one iteration in full, or the learnings agents recorded."""
    args = call.args
    if call.loop is not None:
        loop = call.loop
        return _ask(
            call,
            "ralph_history",
            RalphHistoryResult,
            lambda: loop.history(args.limit, args.offset, args.iteration, args.type),
        )
    if args.type == "learnings":
        return _learnings(call, args.limit, args.offset)
    if args.iteration is not None:
        return _iteration(call, args.iteration)
    sessions = call.services.sessions.list(limit=HISTORY_SCAN)
    page = sessions[args.offset : args.offset + args.limit]
    return RalphHistoryResult(
        success=True,
        iterations=[_entry(session) for session in page],
        total=len(sessions),
        has_more=args.offset + len(page) < len(sessions),
    )


def _duration(session: AgentSession) -> float | None:
    if session.ended_at is None:
        return None
    return round((session.ended_at - session.started_at).total_seconds(), 3)


def _entry(session: AgentSession) -> IterationEntry:
    return IterationEntry(
        iteration_number=session.iteration,
        timestamp=utc(session.started_at),
        task_attempted=session.task_id,
        result=session.outcome,
        quality_metrics={
            "closingVerb": session.closing_verb,
            "exitCode": session.exit_code,
            "costUsd": session.cost_usd,
            "turns": session.turns,
            "inputTokens": session.input_tokens,
            "outputTokens": session.output_tokens,
            "changedFiles": len(session.changed_files),
        },
        duration=_duration(session),
        session_id=session.id,
        loop_id=session.loop_run_id,
    )


def _iteration(call: ToolCall[Any], number: int) -> RalphHistoryResult:
    run = call.services.sessions.latest_loop_run()
    sessions = [] if run is None else call.services.sessions.list(loop_run_id=run.id, limit=HISTORY_SCAN)
    found = [session for session in sessions if session.iteration == number]
    if not found:
        known = sorted({session.iteration for session in sessions if session.iteration is not None})
        where = (
            "no loop has run yet" if run is None else f"the last loop run (#{run.id}) has iterations {known}"
        )
        raise LoopToolError(
            "invalid_argument",
            f"no iteration {number}: {where}",
            {"tool": "ralph_history", "iteration": number, "known": known},
        )
    session = found[0]
    learned = [
        signal.text for signal in call.services.signals.for_session(session.id) if signal.verb == "learned"
    ]
    entry = _entry(session).model_dump(by_alias=True)
    entry.update(
        agent=session.agent,
        model=session.model,
        recipe=session.recipe,
        endedAt=None if session.ended_at is None else utc(session.ended_at),
        commitBefore=session.head_before,
        commitHash=session.head_after,
        changedFiles=list(session.changed_files),
        transcriptPath=session.transcript_path,
        error=session.error,
        learnings=learned,
    )
    return RalphHistoryResult(success=True, iteration=IterationEntry.model_validate(entry))


def _learnings(call: ToolCall[Any], limit: int, offset: int) -> RalphHistoryResult:
    signals = list(reversed(call.services.signals.learnings()))
    iterations = {
        session.id: session.iteration for session in call.services.sessions.list(limit=HISTORY_SCAN)
    }
    page = signals[offset : offset + limit]
    return RalphHistoryResult(
        success=True,
        learnings=[
            LearningEntry(
                text=signal.text,
                iteration_number=iterations.get(signal.session_id) if signal.session_id else None,
                tags=[tag for tag in (signal.kind, signal.scope) if tag],
                task_id=signal.task_id,
                session_id=signal.session_id,
                timestamp=_stamp(signal.created),
            )
            for signal in page
        ],
        total=len(signals),
        has_more=offset + len(page) < len(signals),
    )


def _stamp(moment: datetime | None) -> datetime | None:
    return None if moment is None else utc(moment)
