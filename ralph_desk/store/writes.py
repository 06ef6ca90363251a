"""The writable columns of each table, typed: a misspelt column is a type error, and refused at run time."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypedDict, TypeVar, cast

from ralph_desk.store.schema import Base


class ProjectWrite(TypedDict, total=False):
    """Columns of `project` a write may set."""

    title: str
    description: str


class FeatureWrite(TypedDict, total=False):
    """Columns of `features` a write may set."""

    name: str
    display_name: str
    acronym: str | None
    description: str | None
    architecture: str | None
    boundaries: str | None
    knowledge_paths: list[str]
    context_files: list[str]
    dependencies: list[str]


class LearningWrite(TypedDict, total=False):
    """Columns of `feature_learnings` a write may set."""

    feature_id: int
    text: str
    source: str
    reason: str | None
    task_id: int | None
    hit_count: int
    created_at: datetime


class DisciplineWrite(TypedDict, total=False):
    """Columns of `disciplines` a write may set."""

    name: str
    display_name: str
    icon: str
    color: str
    acronym: str | None
    system_prompt: str | None
    skills: list[str]
    conventions: str | None
    disabled_tools: list[str]
    mcp_servers: dict[str, Any]


class TaskWrite(TypedDict, total=False):
    """Columns of `tasks` a write may set."""

    feature_id: int
    discipline_id: int
    title: str
    description: str | None
    priority: str
    status: str
    acceptance_criteria: list[str]
    tags: list[str]
    context_files: list[str]
    output_artifacts: list[str]
    hints: str | None
    estimated_turns: int | None
    pseudocode: str | None
    origin: str
    stuck_count: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    completed_at: datetime | None


class CommentWrite(TypedDict, total=False):
    """Columns of `task_comments` a write may set."""

    author: str
    body: str
    discipline: str | None
    priority: str | None
    created_at: datetime


class SignalWrite(TypedDict, total=False):
    """Columns of `task_signals` a write may set: a verb's own columns and the human's review."""

    task_id: int
    discipline_id: int | None
    session_id: str | None
    verb: str
    summary: str
    remaining: str
    reason: str
    question: str
    options: str | None
    preferred: str | None
    blocking: bool
    what: str
    severity: str
    category: str
    text: str
    kind: str
    scope: str
    rationale: str | None
    why: str
    feature_id: int | None
    on: str
    detail: str | None
    answer: str | None
    answered_at: datetime | None
    resolution: str | None
    resolved_at: datetime | None
    review_decision: str | None
    review_reason: str | None
    decided_by: str | None
    created_task_id: int | None
    created: datetime


class SessionWrite(TypedDict, total=False):
    """Columns of `agent_sessions` a write may set."""

    id: str
    task_id: int | None
    recipe: str
    loop_run_id: int | None
    iteration: int | None
    agent: str
    model: str | None
    discipline: str | None
    feature: str | None
    started_at: datetime
    ended_at: datetime | None
    exit_code: int | None
    closing_verb: str | None
    outcome: str | None
    cost_usd: float
    input_tokens: int
    output_tokens: int
    turns: int
    transcript_path: str | None
    changed_files: list[str]
    head_before: str | None
    head_after: str | None
    error: str | None
    sandbox: str | None
    sandbox_note: str | None


class LoopRunWrite(TypedDict, total=False):
    """Columns of `loop_runs` a write may set."""

    started_at: datetime
    ended_at: datetime | None
    state: str
    agent: str
    max_iterations: int | None
    max_cost_usd: float | None
    iterations: int
    cost_usd: float
    stop_reason: str | None
    allow_edits: bool
    settings: dict[str, Any]
    heartbeat_at: datetime | None
    host: str | None
    pid: int | None


W = TypeVar("W", bound=Mapping[str, Any])


def checked(values: Mapping[str, Any], shape: type[W]) -> W:
    """`values` as `shape`, refused (TypeError) if it names a column `shape` does not declare.

    mypy catches a misspelt key where a `shape` is written; this catches one that comes by a path
    whose keys are only known at run time (an update of the fields a caller named), which setattr or
    an insert would otherwise drop or fail on far from the cause.
    """
    known: frozenset[str] = shape.__required_keys__ | shape.__optional_keys__  # type: ignore[attr-defined]
    unknown = sorted(set(values) - known)
    if unknown:
        raise TypeError(f"{shape.__name__} has no column {', '.join(map(repr, unknown))}")
    return cast(W, values)


def assign(row: Base, values: W, shape: type[W]) -> None:
    """Set the columns of `row` from `values`, after `checked`."""
    for key, value in checked(values, shape).items():
        setattr(row, key, value)
