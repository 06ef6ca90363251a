"""Plain records that leave the store: what the services, the MCP server, the loop and the window see."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ralph_desk.domain.enums import (
    ChangeTopic,
    FlagResolution,
    Priority,
    ReviewDecision,
    TaskOrigin,
    TaskStatus,
    Verb,
)


@dataclass(frozen=True)
class Project:
    """The project row: one per database."""

    title: str
    description: str
    created_at: datetime


@dataclass(frozen=True)
class McpServerSpec:
    """An extra MCP server a discipline hands its agents: a command or a URL."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The entry as stored and as written into an agent's MCP config."""
        if self.url is not None:
            entry: dict[str, Any] = {"type": "http", "url": self.url}
            if self.headers:
                entry["headers"] = dict(self.headers)
            return entry
        entry = {"command": self.command, "args": list(self.args)}
        if self.env:
            entry["env"] = dict(self.env)
        return entry


@dataclass(frozen=True)
class FeatureLearning:
    """A learning kept on a feature, with how often it was seen again."""

    id: int
    feature_name: str
    text: str
    source: str
    reason: str | None
    task_id: int | None
    hit_count: int
    created_at: datetime


@dataclass(frozen=True)
class Feature:
    """A slice of the product that tasks belong to."""

    id: int
    name: str
    display_name: str
    acronym: str | None
    description: str | None
    architecture: str | None
    boundaries: str | None
    knowledge_paths: tuple[str, ...]
    context_files: tuple[str, ...]
    dependencies: tuple[str, ...]
    created_at: datetime
    learnings: tuple[FeatureLearning, ...] = ()


@dataclass(frozen=True)
class Discipline:
    """A kind of worker (frontend, backend, docs…) with its persona and tool overrides."""

    id: int
    name: str
    display_name: str
    icon: str
    color: str
    acronym: str | None
    system_prompt: str | None
    skills: tuple[str, ...]
    conventions: str | None
    disabled_tools: tuple[str, ...]
    mcp_servers: tuple[McpServerSpec, ...]
    created_at: datetime


@dataclass(frozen=True)
class Comment:
    """A comment on a task."""

    id: int
    task_id: int
    author: str
    body: str
    discipline: str | None
    priority: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class TaskSummary:
    """A task as listed: enough for tables, queues and the inbox."""

    id: int
    title: str
    status: TaskStatus
    priority: Priority
    feature: str
    discipline: str
    origin: TaskOrigin
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Task:
    """A task with every field, its dependencies and comments."""

    id: int
    title: str
    description: str | None
    status: TaskStatus
    priority: Priority
    feature: str
    discipline: str
    origin: TaskOrigin
    acceptance_criteria: tuple[str, ...]
    tags: tuple[str, ...]
    context_files: tuple[str, ...]
    output_artifacts: tuple[str, ...]
    hints: str | None
    estimated_turns: int | None
    pseudocode: str | None
    stuck_count: int
    depends_on: tuple[int, ...]
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    comments: tuple[Comment, ...] = ()


@dataclass(frozen=True)
class Signal:
    """One `task_signals` row: a verb an agent called, with the human's review state."""

    id: int
    task_id: int
    session_id: str | None
    verb: Verb
    created: datetime
    discipline: str | None = None
    summary: str | None = None
    remaining: str | None = None
    reason: str | None = None
    question: str | None = None
    options: tuple[str, ...] = ()
    preferred: str | None = None
    blocking: bool | None = None
    what: str | None = None
    severity: str | None = None
    category: str | None = None
    text: str | None = None
    kind: str | None = None
    scope: str | None = None
    rationale: str | None = None
    why: str | None = None
    feature: str | None = None
    on: str | None = None
    detail: str | None = None
    answer: str | None = None
    answered_at: datetime | None = None
    resolution: FlagResolution | None = None
    resolved_at: datetime | None = None
    review_decision: ReviewDecision | None = None
    review_reason: str | None = None
    decided_by: str | None = None
    """The paired device that decided (answered, reviewed, triaged); None: the desk itself."""
    created_task_id: int | None = None


@dataclass(frozen=True)
class AgentSession:
    """One agent run on one task (or one recipe run), with its cost and outcome."""

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
    changed_files: tuple[str, ...]
    head_before: str | None
    head_after: str | None
    error: str | None
    sandbox: str | None = None  # the sandbox that confined it (bubblewrap, sandbox-exec); None: unconfined
    sandbox_note: str | None = None  # what the sandbox let it touch, or why it ran unconfined

    @property
    def confined(self) -> bool:
        """Whether the session ran in a sandbox."""
        return self.sandbox is not None


@dataclass(frozen=True)
class LoopRun:
    """One start of the loop, until it stopped."""

    id: int
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


@dataclass(frozen=True)
class Device:
    """A browser paired with the companion page (DESIGN §14); a revoked one is refused."""

    id: int
    name: str
    paired_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


@dataclass(frozen=True)
class Change:
    """A notice that something changed: a topic (`tasks`, `signals`…) and the ids it touched."""

    topic: ChangeTopic
    ids: tuple[int | str, ...] = ()
