"""Turning ORM rows into the plain records that leave the store."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, TypeVar, get_origin, get_type_hints

from ralph_desk.domain.branches import TaskBranch
from ralph_desk.domain.checks import CheckPurpose, CheckRun, CheckStatus
from ralph_desk.domain.enums import (
    DiffSide,
    FlagResolution,
    ReviewCommentState,
    ReviewDecision,
    Verb,
)
from ralph_desk.domain.records import (
    AgentSession,
    Comment,
    Device,
    Discipline,
    Feature,
    FeatureLearning,
    LoopRun,
    McpServerSpec,
    Project,
    Signal,
    Task,
    TaskSummary,
)
from ralph_desk.domain.reviews import QueuedMerge, ReviewComment
from ralph_desk.store.schema import (
    AgentSessionRow,
    Base,
    CheckRunRow,
    CompanionDeviceRow,
    DisciplineRow,
    FeatureRow,
    LoopRunRow,
    MergeQueueRow,
    ProjectRow,
    ReviewCommentRow,
    TaskBranchRow,
)

R = TypeVar("R")


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    """How a column value becomes a record field of type `hint`: an enum by value, a tuple from a list."""
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return hint
    if get_origin(hint) is tuple:
        return tuple
    return None


_Fields = tuple[tuple[str, Callable[[Any], Any] | None], ...]
_FIELDS: dict[type[Any], _Fields] = {}


def _fields(kind: type[Any]) -> _Fields:
    """Each field of a record type with the conversion its column value needs (None: none)."""
    found = _FIELDS.get(kind)
    if found is None:
        hints = get_type_hints(kind)
        found = tuple((item.name, _converter(hints[item.name])) for item in dataclasses.fields(kind))
        _FIELDS[kind] = found
    return found


def record(kind: type[R], values: Mapping[str, Any], **given: Any) -> R:
    """A record of type `kind`: each field from its column in `values` (by name), or from `given`.

    One declaration of the fields, the record's: a field added to it is read from the column of that name.
    """
    fields = {
        name: values[name] if convert is None else convert(values[name])
        for name, convert in _fields(kind)
        if name not in given
    }
    return kind(**fields, **given)


def project(row: ProjectRow) -> Project:
    """The project record."""
    return Project(title=row.title, description=row.description, created_at=row.created_at)


def learning(values: Mapping[str, Any], feature_name: str) -> FeatureLearning:
    """A feature learning record from its column values and its feature's name."""
    return FeatureLearning(
        id=values["id"],
        feature_name=feature_name,
        text=values["text"],
        source=values["source"],
        reason=values["reason"],
        task_id=values["task_id"],
        hit_count=values["hit_count"],
        created_at=values["created_at"],
    )


def feature(row: FeatureRow, with_learnings: bool = False) -> Feature:
    """A feature record (learnings only when asked, to keep lists cheap)."""
    return Feature(
        id=row.id,
        name=row.name,
        display_name=row.display_name,
        acronym=row.acronym,
        description=row.description,
        architecture=row.architecture,
        boundaries=row.boundaries,
        knowledge_paths=tuple(row.knowledge_paths),
        context_files=tuple(row.context_files),
        dependencies=tuple(row.dependencies),
        created_at=row.created_at,
        learnings=tuple(learning(columns(item), row.name) for item in row.learnings)
        if with_learnings
        else (),
    )


def mcp_server(name: str, entry: dict[str, Any]) -> McpServerSpec:
    """An extra MCP server entry as stored in a discipline."""
    return McpServerSpec(
        name=name,
        command=entry.get("command"),
        args=tuple(entry.get("args", ())),
        env=dict(entry.get("env", {})),
        url=entry.get("url"),
        headers=dict(entry.get("headers", {})),
    )


def discipline(row: DisciplineRow) -> Discipline:
    """A discipline record."""
    return Discipline(
        id=row.id,
        name=row.name,
        display_name=row.display_name,
        icon=row.icon,
        color=row.color,
        acronym=row.acronym,
        system_prompt=row.system_prompt,
        skills=tuple(row.skills),
        conventions=row.conventions,
        disabled_tools=tuple(row.disabled_tools),
        mcp_servers=tuple(mcp_server(name, entry) for name, entry in sorted(row.mcp_servers.items())),
        created_at=row.created_at,
    )


def comment(values: Mapping[str, Any]) -> Comment:
    """A comment record from its column values (`columns(row)`, or a plain row's by name)."""
    return Comment(
        id=values["id"],
        task_id=values["task_id"],
        author=values["author"],
        body=values["body"],
        discipline=values["discipline"],
        priority=values["priority"],
        created_at=values["created_at"],
        updated_at=values["updated_at"],
    )


def task_summary(values: Mapping[str, Any]) -> TaskSummary:
    """A task as listed, from its columns and its feature's and discipline's names."""
    return record(TaskSummary, values)


def summary_of(task: Task) -> TaskSummary:
    """The summary of a full task (its fields are a summary's and more)."""
    return task_summary(vars(task))


def task(values: Mapping[str, Any], comments: tuple[Comment, ...] = ()) -> Task:
    """A task with every field, from its columns with its feature's and discipline's names and the
    ids it depends on (`depends_on`, ascending)."""
    return record(Task, values, comments=comments)


def review_comment(row: ReviewCommentRow) -> ReviewComment:
    """A review comment record from its row."""
    return ReviewComment(
        id=row.id,
        task_id=row.task_id,
        author=row.author,
        body=row.body,
        file=row.file,
        line=row.line,
        side=DiffSide(row.side),
        state=ReviewCommentState(row.state),
        session_id=row.session_id,
        addressed_session_id=row.addressed_session_id,
        created_at=row.created_at,
    )


def queued_merge(row: MergeQueueRow) -> QueuedMerge:
    """A merge queue entry from its row."""
    return QueuedMerge(
        id=row.id,
        task_id=row.task_id,
        checkout=row.checkout,
        approved_at=row.approved_at,
        refused=row.refused,
        commit=row.approved_commit,
        checks_overridden=row.checks_overridden,
        approved_by=row.approved_by,
    )


def device(row: CompanionDeviceRow) -> Device:
    """A paired companion device from its row (never its token's hash)."""
    return Device(
        id=row.id,
        name=row.name,
        paired_at=row.paired_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


def check_run(row: CheckRunRow) -> CheckRun:
    """A check run from its row."""
    return CheckRun(
        id=row.id,
        task_id=row.task_id,
        session_id=row.session_id,
        name=row.name,
        command=row.command,
        required=row.required,
        purpose=CheckPurpose(row.purpose),
        status=CheckStatus(row.status),
        exit_code=row.exit_code,
        duration_s=row.duration_s,
        tail=row.tail,
        log_path=row.log_path,
        started_at=row.started_at,
        commit=row.commit,
    )


def task_branch(row: TaskBranchRow, alive: bool) -> TaskBranch:
    """A task branch record from its row; `alive` when the task that made it is still there."""
    return TaskBranch(
        id=row.id,
        task_id=row.task_id,
        task_created_at=row.task_created_at,
        checkout=row.checkout,
        ref=row.ref,
        alive=alive,
    )


def columns(row: Base) -> dict[str, Any]:
    """The column values of an ORM row, by column name."""
    return {column.key: getattr(row, column.key) for column in row.__table__.columns}


def signal(values: Mapping[str, Any], discipline: str | None, feature: str | None) -> Signal:
    """A signal record from its column values and its discipline's and feature's names.

    From column values, not a row: the hot reads select plain rows (see `store.signals._select`).
    The options are split from their newline-separated column.
    """
    options, resolution = values.get("options"), values.get("resolution")
    review = values.get("review_decision")
    return Signal(
        id=values["id"],
        task_id=values["task_id"],
        session_id=values.get("session_id"),
        verb=Verb(values["verb"]),
        created=values["created"],
        discipline=discipline,
        summary=values.get("summary"),
        remaining=values.get("remaining"),
        reason=values.get("reason"),
        question=values.get("question"),
        options=tuple(options.split("\n")) if options else (),
        preferred=values.get("preferred"),
        blocking=values.get("blocking"),
        what=values.get("what"),
        severity=values.get("severity"),
        category=values.get("category"),
        text=values.get("text"),
        kind=values.get("kind"),
        scope=values.get("scope"),
        rationale=values.get("rationale"),
        why=values.get("why"),
        feature=feature,
        on=values.get("on"),
        detail=values.get("detail"),
        answer=values.get("answer"),
        answered_at=values.get("answered_at"),
        resolution=FlagResolution(resolution) if resolution else None,
        resolved_at=values.get("resolved_at"),
        review_decision=ReviewDecision(review) if review else None,
        review_reason=values.get("review_reason"),
        decided_by=values.get("decided_by"),
        created_task_id=values.get("created_task_id"),
    )


def agent_session(row: AgentSessionRow) -> AgentSession:
    """An agent session record."""
    return AgentSession(
        id=row.id,
        task_id=row.task_id,
        recipe=row.recipe,
        loop_run_id=row.loop_run_id,
        iteration=row.iteration,
        agent=row.agent,
        model=row.model,
        discipline=row.discipline,
        feature=row.feature,
        started_at=row.started_at,
        ended_at=row.ended_at,
        exit_code=row.exit_code,
        closing_verb=row.closing_verb,
        outcome=row.outcome,
        cost_usd=row.cost_usd,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        turns=row.turns,
        transcript_path=row.transcript_path,
        changed_files=tuple(row.changed_files),
        head_before=row.head_before,
        head_after=row.head_after,
        error=row.error,
        sandbox=row.sandbox,
        sandbox_note=row.sandbox_note,
    )


def loop_run(row: LoopRunRow) -> LoopRun:
    """A loop run record."""
    return LoopRun(
        id=row.id,
        started_at=row.started_at,
        ended_at=row.ended_at,
        state=row.state,
        agent=row.agent,
        max_iterations=row.max_iterations,
        max_cost_usd=row.max_cost_usd,
        iterations=row.iterations,
        cost_usd=row.cost_usd,
        stop_reason=row.stop_reason,
        allow_edits=row.allow_edits,
        settings=dict(row.settings),
    )
