"""What the loop-control tools answer (seeds 003, 004): one model per tool, camelCase on the wire.

The loop's controller returns these and the MCP layer serves them as they are, so the shape a
client sees does not depend on which process answers.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from ralph_desk.domain.enums import Verb
from ralph_desk.domain.item_errors import UNREADABLE, ItemErrorResult
from ralph_desk.domain.records import AgentSession, LoopRun, Signal
from ralph_desk.domain.timestamps import maybe_utc, utc

ErrorCode = Literal[
    "invalid_argument", "not_initialised", "already_running", "not_running", "execution_failed"
]
NOT_RUNNING = "not_running"
NOT_INITIALISED = "not a ralph-desk project yet: call ralph_init"
Progress = Callable[[float, float | None, str], None]
"""Tells a waiting tool's caller how far it is: done so far, the total if known, a message."""
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_WAITING = 3
"""A loop that stopped because only a person can make more work runnable (`ralph-desk run`'s code too)."""


class Sparse(BaseModel):
    """A seed 004 shape: camelCase keys on the wire, keys without a value left out."""

    model_config = ConfigDict(defer_build=True, validate_by_name=True, validate_by_alias=True)

    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if value is not None}


class LoopResult(Sparse):
    """Common shape of the loop-control results."""

    success: bool = Field(True, description="Whether the request did what was asked.")


class LoopErrorInfo(BaseModel):
    """A structured loop-control error (seed 003), sent as the JSON text of the tool error."""

    code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class RalphInitResult(LoopResult):
    """The project's .ralph/ folder was created or its configuration re-created."""

    task_count: int = Field(alias="taskCount")
    prd_path: str = Field(
        alias="prdPath", description="Where prd.json (the tasks as userStories) was written."
    )
    ralph_dir: str = Field(alias="ralphDir", description="The project's .ralph/ folder.")
    initialized: bool | None = None
    reinitialized: bool | None = None


class ValidationProblem(Sparse):
    """One thing missing or broken in the project folder."""

    path: str
    message: str


class RalphValidateResult(LoopResult):
    """What is missing or broken in the project folder (nothing when valid)."""

    valid: bool
    problems: list[ValidationProblem] = Field(default_factory=list)


class LoopRunInfo(Sparse):
    """A loop run as reported by status and history."""

    loop_id: int = Field(alias="loopId")
    status: str
    agent: str
    started_at: datetime = Field(alias="startedAt")
    ended_at: datetime | None = Field(None, alias="endedAt")
    iterations: int
    max_iterations: int | None = Field(None, alias="maxIterations")
    cost_usd: float = Field(alias="costUsd")
    stop_reason: str | None = Field(None, alias="stopReason")
    allow_edits: bool = Field(alias="allowEdits")

    @classmethod
    def of(cls, run: LoopRun) -> LoopRunInfo:
        """The report of a loop-run record."""
        return cls(
            loop_id=run.id,
            status=run.state,
            agent=run.agent,
            started_at=utc(run.started_at),
            ended_at=maybe_utc(run.ended_at),
            iterations=run.iterations,
            max_iterations=run.max_iterations,
            cost_usd=run.cost_usd,
            stop_reason=run.stop_reason,
            allow_edits=run.allow_edits,
        )


class TaskToAttempt(Sparse):
    """A task a dry run says the loop would attempt, in order."""

    id: int
    title: str
    priority: str


class LoopSummary(Sparse):
    """How one loop run went (seed 003's summary): counts, exit code, files changed, log, cost."""

    loop_id: int = Field(alias="loopId")
    status: str = Field(description="running, or once ended completed, stopped or failed.")
    stop_reason: str | None = Field(None, alias="stopReason")
    sessions_run: int = Field(alias="sessionsRun")
    tasks_completed: int = Field(alias="tasksCompleted", description="Tasks it worked on that are done.")
    tasks_failed: int = Field(alias="tasksFailed", description="Tasks it worked on that failed.")
    tasks_waiting: int = Field(
        alias="tasksWaiting",
        description="Tasks it worked on that wait for a person: an answer, a review or a blocker.",
    )
    exit_code: int | None = Field(
        None,
        alias="exitCode",
        description=f"Once ended: {EXIT_OK} as asked, {EXIT_WAITING} tasks wait for a person, "
        f"{EXIT_FAILED} the loop failed (as `ralph-desk run` exits).",
    )
    files_changed: list[str] = Field(alias="filesChanged", description="Files its sessions changed.")
    files_put_aside: list[str] = Field(
        default_factory=list,
        alias="filesPutAside",
        description="Files changed while edits were not allowed, undone (put aside in a git stash).",
    )
    cost_usd: float = Field(alias="costUsd")
    log_path: str | None = Field(
        None, alias="logPath", description="The log of the ralph_run that started it."
    )


def exit_code(state: str, waiting: bool) -> int:
    """The exit code of a loop that ended in `state`, some tasks waiting for a person or not."""
    if state == "failed":
        return EXIT_FAILED
    return EXIT_WAITING if waiting else EXIT_OK


class RalphRunResult(LoopResult):
    """The loop started (it runs on; ralph_status follows it), or a dry run's preview."""

    status: str | None = Field(None, description="running once started; absent for a dry run.")
    loop_id: int | None = Field(
        None, alias="loopId", description="The loop run started (ralph_status follows it)."
    )
    iteration_number: int | None = Field(None, alias="iterationNumber")
    current_task: int | None = Field(None, alias="currentTask", description="The task it starts on.")
    dry_run: bool | None = Field(None, alias="dryRun")
    tasks_to_attempt: list[TaskToAttempt] | None = Field(None, alias="tasksToAttempt")
    preview: str | None = Field(None, description="The first session's prompt.")
    mcp_config: dict[str, Any] | None = Field(None, alias="mcpConfig")
    tools: list[str] | None = Field(None, description="The first session's tools.")
    summary: LoopSummary | None = Field(None, description="With wait: how the loop run went.")
    log_path: str | None = Field(
        None, alias="logPath", description="This call's log; its JSON summary lies beside it (.json)."
    )


class LoopMetrics(Sparse):
    """Task counts of the project."""

    tasks_completed: int = Field(alias="tasksCompleted")
    tasks_failed: int = Field(alias="tasksFailed")
    tasks_remaining: int = Field(alias="tasksRemaining", description="Tasks not done, failed or skipped.")
    tasks_needing_input: int = Field(
        alias="tasksNeedingInput", description="Tasks waiting for a human's answer (needs_input)."
    )


class RunningSession(Sparse):
    """One agent session the loop runs now."""

    session_id: str = Field(alias="sessionId")
    task_id: int | None = Field(None, alias="taskId")


class RalphStatusResult(LoopResult):
    """Whether a loop runs (in this process or another), where it is, and the last run."""

    status: str = Field(
        description="running, paused, waiting, rate_limited; once ended completed, stopped or failed; "
        "not_running when no loop has run."
    )
    running: bool = Field(False, description="Whether a loop runs now (in this process or another).")
    loop_id: int | None = Field(None, alias="loopId")
    iteration_number: int | None = Field(None, alias="iterationNumber")
    current_task: int | None = Field(None, alias="currentTask")
    running_sessions: list[RunningSession] = Field(
        default_factory=list,
        alias="runningSessions",
        description="Every agent session running now (several with the parallel setting), oldest first.",
    )
    last_activity: datetime | None = Field(
        None, alias="lastActivity", description="When the loop or an agent session last did something."
    )
    resumes_at: datetime | None = Field(None, alias="resumesAt")
    last_error: str | None = Field(None, alias="lastError")
    metrics: LoopMetrics
    quality_metrics: QualityMetrics | None = Field(
        None, alias="qualityMetrics", description="How the last finished iteration went."
    )
    last_run: LoopRunInfo | None = Field(None, alias="lastRun")
    loop_status: LoopStatusInfo | None = Field(
        None, alias="loopStatus", description="Seed 004's state: loopId, iterationNumber, currentTask, status"
    )
    summary: LoopSummary | None = Field(
        None, description="How the loop run asked about (else the last one) went, once it has ended."
    )


class LoopStatusInfo(Sparse):
    """Seed 004's `loopStatus`: where the loop is."""

    loop_id: int | None = Field(None, alias="loopId")
    iteration_number: int | None = Field(None, alias="iterationNumber")
    current_task: int | None = Field(None, alias="currentTask")
    status: str


class RalphStopResult(LoopResult):
    """The loop stopped (or was not running: stopping twice is no error)."""

    status: str
    loop_id: int | None = Field(None, alias="loopId")
    returned_task: int | None = Field(
        None, alias="returnedTask", description="The task whose session was ended, back in the queue."
    )


class QualityMetrics(Sparse):
    """How one session went."""

    closing_verb: str | None = Field(None, alias="closingVerb")
    exit_code: int | None = Field(None, alias="exitCode")
    cost_usd: float = Field(alias="costUsd")
    turns: int
    input_tokens: int = Field(alias="inputTokens")
    output_tokens: int = Field(alias="outputTokens")
    changed_files: int = Field(alias="changedFiles", description="How many files it changed.")
    duration: float | None = Field(None, description="Seconds the session took.")

    @classmethod
    def of(cls, session: AgentSession) -> QualityMetrics:
        """How a session record went."""
        return cls(
            closing_verb=session.closing_verb,
            exit_code=session.exit_code,
            cost_usd=session.cost_usd,
            turns=session.turns,
            input_tokens=session.input_tokens,
            output_tokens=session.output_tokens,
            changed_files=len(session.changed_files),
            duration=_duration(session),
        )


class IterationEntry(Sparse):
    """One loop iteration: one agent session on one task."""

    iteration_number: int | None = Field(None, alias="iterationNumber")
    timestamp: datetime
    task_attempted: int | None = Field(None, alias="taskAttempted")
    result: str | None = Field(None, description="The session's outcome.")
    quality_metrics: QualityMetrics = Field(alias="qualityMetrics")
    duration: float | None = Field(None, description="Seconds the session took.")
    session_id: str = Field(alias="sessionId")
    loop_id: int | None = Field(None, alias="loopId")

    @classmethod
    def of(cls, session: AgentSession) -> IterationEntry:
        """The entry of a session record."""
        return cls(**_entry_fields(session))


class SignalEntry(Sparse):
    """A verb an agent called in a session, with what it said."""

    verb: str
    timestamp: datetime
    summary: str | None = None
    remaining: str | None = None
    reason: str | None = None
    question: str | None = None
    answer: str | None = None
    what: str | None = None
    severity: str | None = None
    text: str | None = None
    detail: str | None = None

    @classmethod
    def of(cls, signal: Signal) -> SignalEntry:
        """The entry of a signal record."""
        return cls(
            verb=signal.verb.value,
            timestamp=utc(signal.created),
            summary=signal.summary,
            remaining=signal.remaining,
            reason=signal.reason,
            question=signal.question,
            answer=signal.answer,
            what=signal.what,
            severity=signal.severity,
            text=signal.text,
            detail=signal.detail,
        )


class IterationDetail(IterationEntry):
    """One iteration in full: the entry, how the session ran, what the agent said and learned."""

    agent: str
    model: str | None = None
    recipe: str
    ended_at: datetime | None = Field(None, alias="endedAt")
    commit_before: str | None = Field(None, alias="commitBefore")
    commit_hash: str | None = Field(None, alias="commitHash")
    changed_files: list[str] = Field(alias="changedFiles")
    transcript_path: str | None = Field(None, alias="transcriptPath")
    error: str | None = None
    summary: str | None = Field(None, description="The agent's summary with its closing verb.")
    final_text: str | None = Field(
        None, alias="finalText", description="The agent's last words: the final text of its output."
    )
    signals: list[SignalEntry] = Field(description="The verbs it called, in order (at most `limit`).")
    signals_total: int = Field(alias="signalsTotal", description="How many verbs it called in all.")
    learnings: list[str]

    @classmethod
    def of_session(
        cls, session: AgentSession, signals: list[Signal], limit: int, final_text: str | None = None
    ) -> IterationDetail:
        """A session record in full: its signals (the first `limit` listed) and its last words."""
        closing = [signal for signal in signals if signal.verb.value == session.closing_verb]
        return cls(
            **_entry_fields(session),
            agent=session.agent,
            model=session.model,
            recipe=session.recipe,
            ended_at=maybe_utc(session.ended_at),
            commit_before=session.head_before,
            commit_hash=session.head_after,
            changed_files=list(session.changed_files),
            transcript_path=session.transcript_path,
            error=session.error,
            summary=closing[-1].summary if closing else None,
            final_text=final_text,
            signals=[SignalEntry.of(signal) for signal in signals[:limit]],
            signals_total=len(signals),
            learnings=[signal.text or "" for signal in signals if signal.verb is Verb.LEARNED][:limit],
        )


def _duration(session: AgentSession) -> float | None:
    if session.ended_at is None:
        return None
    return round((session.ended_at - session.started_at).total_seconds(), 3)


def _entry_fields(session: AgentSession) -> dict[str, Any]:
    return {
        "iteration_number": session.iteration,
        "timestamp": utc(session.started_at),
        "task_attempted": session.task_id,
        "result": session.outcome,
        "quality_metrics": QualityMetrics.of(session),
        "duration": _duration(session),
        "session_id": session.id,
        "loop_id": session.loop_run_id,
    }


class LearningEntry(Sparse):
    """A learning an agent recorded with the `learned` verb."""

    text: str
    iteration_number: int | None = Field(None, alias="iterationNumber")
    tags: list[str] = Field(default_factory=list, description="Its kind and scope.")
    task_id: int | None = Field(None, alias="taskId")
    session_id: str | None = Field(None, alias="sessionId")
    timestamp: datetime | None = None


class RalphHistoryResult(LoopResult):
    """Past iterations (a page, or one in full), or the learnings recorded."""

    iterations: list[IterationEntry] | None = None
    total: int | None = None
    has_more: bool | None = Field(None, alias="hasMore")
    iteration: IterationDetail | None = None
    learnings: list[LearningEntry] | None = None
    errors: list[ItemErrorResult] | None = Field(None, description=UNREADABLE)


class RalphUnderstandResult(LoopResult):
    """The read-only understanding run started."""

    status: str
    map_path: str = Field(alias="mapPath")
    log_path: str | None = Field(
        None, alias="logPath", description="This run's log; its JSON summary lies beside it (.json)."
    )
