"""The structured results tools return; each model is also the tool's output schema.

Lists carry briefs, single reads carry the full record (DESIGN §2.4: results are structured and
short). The loop-control results are in `ralph_desk.domain.loop_results`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
)

from ralph_desk.domain import totals
from ralph_desk.domain.checks import CheckPurpose, CheckStatus, Verdict
from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.item_errors import UNREADABLE, ItemErrorResult, item_errors
from ralph_desk.domain.records import Discipline, Feature, FeatureLearning, TaskSummary
from ralph_desk.domain.timestamps import maybe_utc, utc

BRIEF_TEXT = 280


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
    errors: list[ItemErrorResult] = Field(default_factory=list, description=UNREADABLE)

    @classmethod
    def of(cls, tasks: Sequence[TaskSummary]) -> TaskList:
        """The list of some task summaries."""
        briefs = [TaskBrief.model_validate(task) for task in tasks]
        return cls(tasks=briefs, count=len(briefs), errors=item_errors(tasks))


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


class CheckResult(RecordResult):
    """A check the project configures: a named command run in the task's worktree."""

    name: str
    run: str = Field(description="The command line, run through the platform's shell.")
    timeout_s: int
    required: bool = Field(description="Whether it must pass before the task may enter review.")


class CheckRunResult(RecordResult):
    """One run of one check, as recorded."""

    id: int = Field(description="Run id.")
    name: str
    command: str
    required: bool
    purpose: CheckPurpose = Field(description="Why it ran: after a done (session), run again (rerun), merge.")
    status: CheckStatus
    exit_code: int | None = None
    duration_s: float | None = None
    tail: str = Field(description="The useful end of its output (the log file has it all).")
    log_path: str | None = Field(None, description="The file with its whole output.")
    session_id: str | None = None
    commit: str | None = Field(None, description="The commit whose tree was checked.")
    started_at: UtcTime


class TaskChecksResult(ResultModel):
    """A task's checks: the verdict of their latest runs, the runs, and the configured checks."""

    task_id: int
    verdict: Verdict = Field(description="none (no required checks), not_run, passed or failed.")
    latest: list[CheckRunResult] = Field(description="The newest run of each check on the task's own work.")
    configured: list[CheckResult]


class ContextFiles(ResultModel):
    """A file was registered as context of a task or feature (once: registering it again changes nothing)."""

    kind: Literal["task", "feature"] = Field(description="What the file was registered on.")
    key: int | str = Field(description="The task id or feature name.")
    file_path: str = Field(description="The path as stored, relative to the project root.")
    context_files: list[str] = Field(description="Every context file it now has.")


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
    errors: list[ItemErrorResult] = Field(default_factory=list, description=UNREADABLE)

    @classmethod
    def of(cls, features: Sequence[Feature]) -> FeatureList:
        """The list of some feature records."""
        briefs = [FeatureBrief.model_validate(feature) for feature in features]
        return cls(features=briefs, count=len(briefs), errors=item_errors(features))


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
    errors: list[ItemErrorResult] = Field(default_factory=list, description=UNREADABLE)

    @classmethod
    def of(cls, disciplines: Sequence[Discipline]) -> DisciplineList:
        """The list of some discipline records."""
        briefs = [DisciplineBrief.model_validate(discipline) for discipline in disciplines]
        return cls(disciplines=briefs, count=len(briefs), errors=item_errors(disciplines))


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

    @classmethod
    def counted(cls, counts: totals.StatusCounts) -> StatusCounts:
        """The result of a count of tasks per status."""
        return cls(total=counts.total, done=counts.done, by_status=dict(counts.by_status))


class InboxWaiting(ResultModel):
    """What waits for the human."""

    asks: int = Field(description="Questions nobody has answered yet, blocking or not.")
    suggestions: int = Field(description="Suggestions waiting for review.")
    flags: int = Field(description="Flags not yet triaged.")


class SessionCost(ResultModel):
    """What every agent session together took."""

    sessions: int
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float = Field(description="US dollars.")


class TaskRate(RecordResult):
    """Tasks the agents finished over a span of time."""

    tasks: int = Field(description="Tasks with a session that ended done in the span, each counted once.")
    hours: float = Field(description="The span's length in hours.")
    per_hour: float | None = Field(description="Tasks per hour; null over no time at all.")


class TaskThroughput(RecordResult):
    """Tasks the agents finished per hour (a task counts when a session of it ends done)."""

    window_hours: float = Field(description="The length of the recent span.")
    recent: TaskRate = Field(
        description="The last window_hours of agent work, back from the latest session's end."
    )
    overall: TaskRate = Field(description="From the first session's start to the latest session's end.")


class ProjectProgress(StatusCounts):
    """Task counts for the whole project and per feature, what waits for the human, and the cost."""

    percent_done: float = Field(description="Share of tasks done, 0 to 100.")
    by_feature: dict[str, StatusCounts] = Field(description="Counts per feature name.")
    inbox: InboxWaiting
    cost: SessionCost
    throughput: TaskThroughput

    @classmethod
    def of(cls, figures: totals.ProjectTotals) -> ProjectProgress:
        """The figures the Dashboard and `ralph-desk status` show, from the same aggregate."""
        return cls(
            **StatusCounts.counted(figures.tasks).model_dump(),
            percent_done=figures.tasks.percent_done,
            by_feature={
                name: StatusCounts.counted(counts) for name, counts in sorted(figures.by_feature.items())
            },
            inbox=InboxWaiting(**figures.inbox.as_dict()),
            cost=SessionCost(**dataclasses.asdict(figures.sessions)),
            throughput=TaskThroughput.model_validate(figures.throughput),
        )


StateFileName = Literal["learnings.txt", "progress.txt"]


class StateFileText(ResultModel):
    """The whole text of a state file (empty when nothing was written yet)."""

    file: StateFileName
    text: str


class Appended(ResultModel):
    """An entry was appended to a state file."""

    file: StateFileName
    entry: str = Field(description="The entry as written, with its timestamp heading.")
