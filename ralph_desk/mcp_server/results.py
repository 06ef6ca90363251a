"""The structured results tools return; each model is also the tool's output schema.

Lists carry briefs, single reads carry the full record (DESIGN §2.4: results are structured and
short). The loop-control results use seed 004's camelCase keys on the wire.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.records import Discipline, Feature, FeatureLearning, LoopRun, TaskSummary

BRIEF_TEXT = 280


def utc(moment: datetime) -> datetime:
    """A stored timestamp (naive UTC) as an aware UTC one, so the wire says which zone it is."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def maybe_utc(moment: datetime | None) -> datetime | None:
    """`utc` for an optional timestamp."""
    return None if moment is None else utc(moment)


def brief_text(text: str | None) -> str | None:
    """The start of a long text, for lists (the full text comes with the single read)."""
    if text is None or len(text) <= BRIEF_TEXT:
        return text
    return text[: BRIEF_TEXT - 1].rstrip() + "…"


UtcTime = Annotated[datetime, AfterValidator(utc)]
MaybeUtcTime = Annotated[datetime | None, AfterValidator(maybe_utc)]
Brief = Annotated[str | None, AfterValidator(brief_text)]
SortedNames = Annotated[list[str], BeforeValidator(sorted)]


class ResultModel(BaseModel):
    """A tool result; its validator is built on first use, so start-up pays only for the tools served."""

    model_config = ConfigDict(defer_build=True)


class RecordResult(ResultModel):
    """A result read from a domain record's attributes (`model_validate(record)`), not copied by hand."""

    model_config = ConfigDict(from_attributes=True)


class SignalRecorded(ResultModel):
    """A verb was stored for the session's task."""

    signal_id: int = Field(description="Id of the stored signal.")
    verb: str = Field(description="The verb that was recorded.")
    task_id: int = Field(description="The task the session serves.")
    session_id: str | None = Field(None, description="The session that sent it.")
    next: str = Field(description="What to do next.")


# --- tasks and comments --------------------------------------------------------------------------


class TaskBrief(RecordResult):
    """A task as listed: enough to choose one and read it with get_task."""

    id: int = Field(description="Task id.")
    title: str
    status: TaskStatus
    priority: Priority
    feature: str = Field(description="Name of its feature.")
    discipline: str = Field(description="Name of its discipline.")
    origin: TaskOrigin = Field(description="Who created it: human, agent or import.")


class TaskList(ResultModel):
    """Tasks, as briefs, in id order (search: title matches first)."""

    tasks: list[TaskBrief]
    count: int = Field(description="How many tasks the list holds.")

    @classmethod
    def of(cls, tasks: Sequence[TaskSummary]) -> TaskList:
        """The list of some task summaries."""
        return cls(tasks=[TaskBrief.model_validate(task) for task in tasks], count=len(tasks))


class CommentResult(RecordResult):
    """A comment on a task."""

    id: int = Field(description="Comment id.")
    task_id: int
    author: str
    body: str
    discipline: str | None = None
    priority: str | None = None
    created_at: UtcTime
    updated_at: UtcTime


class TaskDetail(RecordResult):
    """A task with every field, the ids it depends on and its comments."""

    id: int = Field(description="Task id.")
    title: str
    description: str | None = None
    status: TaskStatus
    priority: Priority
    feature: str
    discipline: str
    origin: TaskOrigin
    acceptance_criteria: list[str]
    tags: list[str]
    context_files: list[str]
    output_artifacts: list[str]
    hints: str | None = None
    estimated_turns: int | None = None
    pseudocode: str | None = None
    stuck_count: int = Field(description="Sessions in a row that ended stuck.")
    depends_on: list[int] = Field(description="Ids of the tasks that must be done first.")
    created_at: UtcTime
    updated_at: UtcTime
    started_at: MaybeUtcTime = None
    completed_at: MaybeUtcTime = None
    comments: list[CommentResult] = Field(description="Its comments, oldest first.")


class ContextFiles(ResultModel):
    """A file was registered as context of a task or feature (once: registering it again changes nothing)."""

    kind: Literal["task", "feature"] = Field(description="What the file was registered on.")
    key: int | str = Field(description="The task id or feature name.")
    file_path: str = Field(description="The path as stored, relative to the project root.")
    context_files: list[str] = Field(description="Every context file it now has.")


class Deleted(ResultModel):
    """Something was deleted."""

    kind: Literal["task", "comment", "feature", "discipline"]
    key: int | str = Field(description="The id or name of what was deleted.")


# --- features ------------------------------------------------------------------------------------


class FeatureBrief(RecordResult):
    """A feature as listed."""

    name: str
    display_name: str
    acronym: str | None = None
    description: Brief = Field(
        None, description=f"The first {BRIEF_TEXT} characters; get_feature has all of it."
    )


class FeatureList(ResultModel):
    """Features, as briefs, by name."""

    features: list[FeatureBrief]
    count: int

    @classmethod
    def of(cls, features: Sequence[Feature]) -> FeatureList:
        """The list of some feature records."""
        return cls(
            features=[FeatureBrief.model_validate(feature) for feature in features], count=len(features)
        )


class LearningResult(RecordResult):
    """A learning kept on a feature."""

    id: int = Field(description="Learning id.")
    text: str
    source: str = Field(description="Who found it: auto, agent or human.")
    reason: str | None = None
    task_id: int | None = None
    hit_count: int = Field(description="How often it was recorded (near duplicates raise it).")
    created_at: UtcTime


class FeatureDetail(RecordResult):
    """A feature with every field and its learnings."""

    name: str
    display_name: str
    acronym: str | None = None
    description: str | None = None
    architecture: str | None = None
    boundaries: str | None = None
    knowledge_paths: list[str]
    context_files: list[str]
    dependencies: list[str] = Field(description="Names of the features it builds on.")
    created_at: UtcTime
    learnings: list[LearningResult]


class LearningAdded(ResultModel):
    """A learning was recorded on a feature, or merged into a near duplicate."""

    learning_id: int
    feature_name: str
    text: str = Field(description="The learning as kept (the existing one when merged).")
    hit_count: int
    duplicate: bool = Field(description="True when it matched an existing learning, whose hit count rose.")

    @classmethod
    def of(cls, learning: FeatureLearning, is_new: bool) -> LearningAdded:
        """The result of appending a learning: the learning as kept, and whether it was a repeat."""
        return cls(
            learning_id=learning.id,
            feature_name=learning.feature_name,
            text=learning.text,
            hit_count=learning.hit_count,
            duplicate=not is_new,
        )


# --- disciplines ---------------------------------------------------------------------------------


class DisciplineBrief(RecordResult):
    """A discipline as listed."""

    name: str
    display_name: str
    icon: str
    color: str
    acronym: str | None = None


class DisciplineList(ResultModel):
    """Disciplines, as briefs, by name."""

    disciplines: list[DisciplineBrief]
    count: int

    @classmethod
    def of(cls, disciplines: Sequence[Discipline]) -> DisciplineList:
        """The list of some discipline records."""
        briefs = [DisciplineBrief.model_validate(discipline) for discipline in disciplines]
        return cls(disciplines=briefs, count=len(briefs))


class McpServerInfo(RecordResult):
    """An extra MCP server the discipline's sessions get; environment and header values are withheld."""

    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    url: str | None = None
    # Only the names: the values may hold credentials.
    env_names: SortedNames = Field(
        default_factory=list,
        validation_alias=AliasChoices("env_names", "env"),
        description="Names of its environment variables.",
    )
    header_names: SortedNames = Field(
        default_factory=list,
        validation_alias=AliasChoices("header_names", "headers"),
        description="Names of its HTTP headers.",
    )


class DisciplineDetail(RecordResult):
    """A discipline with its persona, conventions, disabled tools and extra MCP servers."""

    name: str
    display_name: str
    icon: str
    color: str
    acronym: str | None = None
    system_prompt: str | None = None
    skills: list[str]
    conventions: str | None = None
    disabled_tools: list[str] = Field(description="Tools its sessions never get, whatever the recipe.")
    mcp_servers: list[McpServerInfo]
    created_at: UtcTime


# --- project and state files ---------------------------------------------------------------------


class ProjectInfo(RecordResult):
    """The project's title, description and creation date."""

    title: str
    description: str
    created_at: UtcTime


class StatusCounts(ResultModel):
    """Task counts: total, done and per status (every status, zero included)."""

    total: int
    done: int
    by_status: dict[str, int]


class ProjectProgress(StatusCounts):
    """Task counts for the whole project and per feature."""

    percent_done: float = Field(description="Share of tasks done, 0 to 100.")
    by_feature: dict[str, StatusCounts] = Field(description="Counts per feature name.")


StateFileName = Literal["learnings.txt", "progress.txt"]


class StateFileText(ResultModel):
    """The whole text of a state file (empty when nothing was written yet)."""

    file: StateFileName
    text: str


class Appended(ResultModel):
    """An entry was appended to a state file."""

    file: StateFileName
    entry: str = Field(description="The entry as written, with its timestamp heading.")


# --- loop control (seeds 003 and 004) ------------------------------------------------------------


class Sparse(ResultModel):
    """A seed 004 shape: camelCase keys on the wire, unset (None) keys left out, a runner may add keys."""

    model_config = ConfigDict(extra="allow", validate_by_name=True, validate_by_alias=True)

    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if value is not None}


class LoopResult(Sparse):
    """Common shape of the loop-control results."""

    success: bool = Field(description="Whether the request did what was asked.")


ErrorCode = Literal["invalid_argument", "execution_failed"]


class LoopErrorInfo(ResultModel):
    """A structured loop-control error (seed 003), sent as the JSON text of the tool error."""

    code: ErrorCode
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class RalphInitResult(LoopResult):
    """The project's .ralph/ folder was created or its configuration re-created."""

    task_count: int | None = Field(None, alias="taskCount")
    prd_path: str | None = Field(None, alias="prdPath")
    initialized: bool | None = None
    reinitialized: bool | None = None


class ValidationProblem(ResultModel):
    """One thing missing or broken in the project folder."""

    path: str
    message: str


class RalphValidateResult(LoopResult):
    """What is missing or broken in the project folder (nothing when valid)."""

    valid: bool | None = None
    problems: list[ValidationProblem] = Field(default_factory=list)


class LoopRunInfo(Sparse):
    """A loop run as reported by status and history."""

    loop_id: int | str | None = Field(None, alias="loopId")
    status: str | None = None
    agent: str | None = None
    started_at: datetime | None = Field(None, alias="startedAt")
    ended_at: datetime | None = Field(None, alias="endedAt")
    iterations: int | None = None
    max_iterations: int | None = Field(None, alias="maxIterations")
    cost_usd: float | None = Field(None, alias="costUsd")
    stop_reason: str | None = Field(None, alias="stopReason")
    allow_edits: bool | None = Field(None, alias="allowEdits")

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


class RalphRunResult(LoopResult):
    """The loop started (it runs on; ralph_status follows it), or a dry run's preview."""

    loop_id: int | str | None = Field(None, alias="loopId")
    status: str | None = None
    iteration_number: int | None = Field(None, alias="iterationNumber")
    current_task: Any = Field(None, alias="currentTask")
    dry_run: bool | None = Field(None, alias="dryRun")
    tasks_to_attempt: list[Any] | None = Field(None, alias="tasksToAttempt")
    preview: str | None = None


class RalphStatusResult(LoopResult):
    """Whether the loop runs, where it is, and the last run when none does."""

    status: str = Field(description="running, paused, waiting, … or not_running.")
    loop_id: int | str | None = Field(None, alias="loopId")
    iteration_number: int | None = Field(None, alias="iterationNumber")
    current_task: Any = Field(None, alias="currentTask")
    loop_status: dict[str, Any] | None = Field(None, alias="loopStatus")
    metrics: dict[str, Any] | None = None
    last_run: LoopRunInfo | None = Field(None, alias="lastRun")


class RalphStopResult(LoopResult):
    """The loop was asked to stop (or was not running)."""

    status: str | None = None
    loop_id: int | str | None = Field(None, alias="loopId")


class IterationEntry(Sparse):
    """One loop iteration: one agent session on one task."""

    iteration_number: int | None = Field(None, alias="iterationNumber")
    timestamp: datetime | None = None
    task_attempted: int | None = Field(None, alias="taskAttempted")
    result: str | None = Field(None, description="The session's outcome.")
    quality_metrics: dict[str, Any] = Field(default_factory=dict, alias="qualityMetrics")
    duration: float | None = Field(None, description="Seconds the session took.")
    session_id: str | None = Field(None, alias="sessionId")
    loop_id: int | str | None = Field(None, alias="loopId")


class LearningEntry(Sparse):
    """A learning an agent recorded with the `learned` verb."""

    text: str | None = None
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
    iteration: IterationEntry | None = None
    learnings: list[LearningEntry] | None = None


class RalphUnderstandResult(LoopResult):
    """The read-only understanding run started."""

    loop_id: int | str | None = Field(None, alias="loopId")
    status: str | None = None
    map_path: str | None = Field(None, alias="mapPath")
