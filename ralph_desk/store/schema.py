"""The database schema as SQLAlchemy 2 typed mappings; migrations create it, this module describes it."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from ralph_desk.domain.checks import CheckPurpose, CheckStatus
from ralph_desk.domain.enums import (
    DiffSide,
    FlagCategory,
    FlagResolution,
    LearningScope,
    LearningSource,
    Priority,
    ReviewCommentState,
    ReviewDecision,
    Severity,
    TaskOrigin,
    TaskStatus,
    Verb,
)

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """Now, in UTC, without tzinfo (stored the same way on every backend)."""
    return datetime.now(UTC).replace(tzinfo=None)


class UtcDateTime(TypeDecorator[datetime]):
    """A naive-UTC timestamp column that accepts aware datetimes too."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            return value.astimezone(UTC).replace(tzinfo=None)
        return value


def one_of(column: str, enum: type[StrEnum], nullable: bool = False) -> CheckConstraint:
    """A CHECK constraint limiting a text column to an enum's values."""
    allowed = ", ".join(f"'{member.value}'" for member in enum)
    condition = f"{column} IN ({allowed})"
    if nullable:
        condition = f"{condition} OR {column} IS NULL"
    return CheckConstraint(condition, name=f"{column}_enum")


class Base(DeclarativeBase):
    """Declarative base with stable constraint names (so migrations can refer to them)."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UtcDateTime(), dict[str, Any]: JSON, list[Any]: JSON}


class ProjectRow(Base):
    """The project (one row)."""

    __tablename__ = "project"

    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class FeatureRow(Base):
    """A feature."""

    __tablename__ = "features"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    acronym: Mapped[str | None] = mapped_column(String(16))
    description: Mapped[str | None] = mapped_column(Text)
    architecture: Mapped[str | None] = mapped_column(Text)
    boundaries: Mapped[str | None] = mapped_column(Text)
    knowledge_paths: Mapped[list[Any]] = mapped_column(default=list)
    context_files: Mapped[list[Any]] = mapped_column(default=list)
    dependencies: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    learnings: Mapped[list[FeatureLearningRow]] = relationship(
        back_populates="feature", cascade="all, delete-orphan", order_by="FeatureLearningRow.id"
    )


class FeatureLearningRow(Base):
    """A learning recorded on a feature."""

    __tablename__ = "feature_learnings"
    __table_args__ = (one_of("source", LearningSource),)

    id: Mapped[int] = mapped_column(primary_key=True)
    feature_id: Mapped[int] = mapped_column(ForeignKey("features.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16), default=LearningSource.AUTO.value)
    reason: Mapped[str | None] = mapped_column(Text)
    task_id: Mapped[int | None] = mapped_column(ForeignKey("tasks.id", ondelete="SET NULL"))
    hit_count: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    feature: Mapped[FeatureRow] = relationship(back_populates="learnings")


class DisciplineRow(Base):
    """A discipline, with its persona and the tools it takes away."""

    __tablename__ = "disciplines"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    icon: Mapped[str] = mapped_column(String(64), default="")
    color: Mapped[str] = mapped_column(String(32), default="")
    acronym: Mapped[str | None] = mapped_column(String(16))
    system_prompt: Mapped[str | None] = mapped_column(Text)
    skills: Mapped[list[Any]] = mapped_column(default=list)
    conventions: Mapped[str | None] = mapped_column(Text)
    disabled_tools: Mapped[list[Any]] = mapped_column(default=list)
    mcp_servers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class TaskRow(Base):
    """A task."""

    __tablename__ = "tasks"
    __table_args__ = (
        one_of("status", TaskStatus),
        one_of("priority", Priority),
        one_of("origin", TaskOrigin),
        CheckConstraint("stuck_count >= 0", name="stuck_count_non_negative"),
        Index("ix_tasks_status_priority", "status", "priority", "created_at"),
        Index("ix_tasks_feature", "feature_id"),
        Index("ix_tasks_discipline", "discipline_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    feature_id: Mapped[int] = mapped_column(ForeignKey("features.id", ondelete="RESTRICT"))
    discipline_id: Mapped[int] = mapped_column(ForeignKey("disciplines.id", ondelete="RESTRICT"))
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[str] = mapped_column(String(16), default=Priority.MEDIUM.value)
    status: Mapped[str] = mapped_column(String(16), default=TaskStatus.PENDING.value)
    acceptance_criteria: Mapped[list[Any]] = mapped_column(default=list)
    tags: Mapped[list[Any]] = mapped_column(default=list)
    context_files: Mapped[list[Any]] = mapped_column(default=list)
    output_artifacts: Mapped[list[Any]] = mapped_column(default=list)
    hints: Mapped[str | None] = mapped_column(Text)
    estimated_turns: Mapped[int | None] = mapped_column(Integer)
    pseudocode: Mapped[str | None] = mapped_column(Text)
    origin: Mapped[str] = mapped_column(String(16), default=TaskOrigin.HUMAN.value)
    stuck_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    started_at: Mapped[datetime | None] = mapped_column()
    completed_at: Mapped[datetime | None] = mapped_column()

    feature: Mapped[FeatureRow] = relationship(lazy="joined", innerjoin=True)
    discipline: Mapped[DisciplineRow] = relationship(lazy="joined", innerjoin=True)
    comments: Mapped[list[TaskCommentRow]] = relationship(
        back_populates="task", cascade="all, delete-orphan", order_by="TaskCommentRow.id"
    )


class TaskDependencyRow(Base):
    """`task_id` may start only once `depends_on_id` is done."""

    __tablename__ = "task_dependencies"
    __table_args__ = (
        CheckConstraint("task_id <> depends_on_id", name="no_self_dependency"),
        Index("ix_task_dependencies_depends_on", "depends_on_id"),
    )

    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    depends_on_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="RESTRICT"), primary_key=True)


class TaskCommentRow(Base):
    """A comment on a task."""

    __tablename__ = "task_comments"
    __table_args__ = (one_of("priority", Priority, nullable=True),)

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    author: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    discipline: Mapped[str | None] = mapped_column(String(64))
    priority: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    task: Mapped[TaskRow] = relationship(back_populates="comments")


class TaskSignalRow(Base):
    """A verb an agent called (seed 002's columns), plus the human's review of it."""

    __tablename__ = "task_signals"
    __table_args__ = (
        one_of("verb", Verb),
        one_of("severity", Severity, nullable=True),
        one_of("category", FlagCategory, nullable=True),
        one_of("scope", LearningScope, nullable=True),
        one_of("resolution", FlagResolution, nullable=True),
        one_of("review_decision", ReviewDecision, nullable=True),
        Index("ix_task_signals_task_verb", "task_id", "verb"),
        Index("ix_task_signals_verb_blocking", "verb", "blocking", "answered_at"),
        Index("ix_task_signals_verb_resolution", "verb", "resolution"),
        Index("ix_task_signals_verb_review", "verb", "review_decision"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    discipline_id: Mapped[int | None] = mapped_column(
        ForeignKey("disciplines.id", ondelete="SET NULL"), index=True
    )
    session_id: Mapped[str | None] = mapped_column(String(128), index=True)
    verb: Mapped[str] = mapped_column(String(16))
    summary: Mapped[str | None] = mapped_column(Text)
    remaining: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    question: Mapped[str | None] = mapped_column(Text)
    options: Mapped[str | None] = mapped_column(Text)
    preferred: Mapped[str | None] = mapped_column(Text)
    blocking: Mapped[bool | None] = mapped_column(Boolean)
    what: Mapped[str | None] = mapped_column(Text)
    severity: Mapped[str | None] = mapped_column(String(16))
    category: Mapped[str | None] = mapped_column(String(32))
    text: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str | None] = mapped_column(String(32))
    scope: Mapped[str | None] = mapped_column(String(16))
    rationale: Mapped[str | None] = mapped_column(Text)
    why: Mapped[str | None] = mapped_column(Text)
    feature_id: Mapped[int | None] = mapped_column(ForeignKey("features.id", ondelete="SET NULL"), index=True)
    on: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[str | None] = mapped_column(Text)
    answer: Mapped[str | None] = mapped_column(Text)
    answered_at: Mapped[datetime | None] = mapped_column()
    resolution: Mapped[str | None] = mapped_column(String(16))
    resolved_at: Mapped[datetime | None] = mapped_column()
    review_decision: Mapped[str | None] = mapped_column(String(16))
    review_reason: Mapped[str | None] = mapped_column(Text)
    # Who decided (answer, suggestion review, triage): a paired device's name; null: the desk itself.
    decided_by: Mapped[str | None] = mapped_column(String(200))
    created_task_id: Mapped[int | None] = mapped_column(ForeignKey("tasks.id", ondelete="SET NULL"))
    created: Mapped[datetime] = mapped_column(default=utcnow)

    task: Mapped[TaskRow] = relationship(foreign_keys=[task_id])
    discipline: Mapped[DisciplineRow | None] = relationship()
    feature: Mapped[FeatureRow | None] = relationship()


class ReviewCommentRow(Base):
    """A reviewer's comment on a task's diff, optionally on one file and line."""

    __tablename__ = "review_comments"
    __table_args__ = (
        one_of("state", ReviewCommentState),
        one_of("side", DiffSide),
        CheckConstraint("line IS NULL OR line >= 1", name="line_positive"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    session_id: Mapped[str | None] = mapped_column(String(128))
    author: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    file: Mapped[str | None] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)
    side: Mapped[str] = mapped_column(
        String(3), default=DiffSide.NEW.value, server_default=DiffSide.NEW.value
    )
    state: Mapped[str] = mapped_column(String(16), default=ReviewCommentState.OPEN.value)
    addressed_session_id: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MergeQueueRow(Base):
    """An approved task waiting for its turn to merge: approval order is the id order."""

    __tablename__ = "merge_queue"

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), unique=True)
    # The checkout (host and folder) that merges it: its task branch lives in that repository only.
    checkout: Mapped[str] = mapped_column(String(1200), index=True)
    approved_at: Mapped[datetime] = mapped_column(default=utcnow)
    refused: Mapped[str | None] = mapped_column(Text)
    # The object id the person approved: the merge takes exactly it, never the branch's tip of the moment.
    approved_commit: Mapped[str | None] = mapped_column(String(64))
    # The required checks that failed when the person chose to merge anyway (None: no such choice).
    checks_overridden: Mapped[str | None] = mapped_column(Text)
    approved_by: Mapped[str | None] = mapped_column(String(200))  # a paired device's name; null: the desk


class CheckRunRow(Base):
    """One run of one project check: the evidence a task's review shows (DESIGN §13)."""

    __tablename__ = "check_runs"
    __table_args__ = (
        one_of("status", CheckStatus),
        one_of("purpose", CheckPurpose),
        Index("ix_check_runs_task", "task_id", "id"),
        Index("ix_check_runs_session", "session_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int | None] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    session_id: Mapped[str | None] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(64))
    command: Mapped[str] = mapped_column(Text)
    required: Mapped[bool] = mapped_column(Boolean)
    purpose: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    exit_code: Mapped[int | None] = mapped_column(Integer)
    duration_s: Mapped[float | None] = mapped_column(Float)
    tail: Mapped[str] = mapped_column(Text, default="")
    log_path: Mapped[str | None] = mapped_column(Text)
    commit: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()


class TaskBranchRow(Base):
    """A task branch the desk made, by its full ref, in one checkout; the task by its id and creation time."""

    __tablename__ = "task_branches"
    __table_args__ = (
        UniqueConstraint("checkout", "ref"),
        Index("ix_task_branches_task", "task_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # No foreign key: the record outlives its task (a kept branch stays held), and the creation time
    # tells the task that made it from a later one given the same id.
    task_id: Mapped[int] = mapped_column(Integer)
    task_created_at: Mapped[datetime] = mapped_column()
    # The checkout (host and folder) whose repository holds the ref, as the merge queue names it.
    checkout: Mapped[str] = mapped_column(String(1200))
    ref: Mapped[str] = mapped_column(String(600))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class BranchAdoptionRow(Base):
    """A checkout whose task branches from before the records were adopted (once) into them."""

    __tablename__ = "branch_adoptions"

    checkout: Mapped[str] = mapped_column(String(1200), primary_key=True)
    adopted_at: Mapped[datetime] = mapped_column(default=utcnow)


class LoopRunRow(Base):
    """One start of the loop."""

    __tablename__ = "loop_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column()
    state: Mapped[str] = mapped_column(String(16))
    agent: Mapped[str] = mapped_column(String(32))
    max_iterations: Mapped[int | None] = mapped_column(Integer)
    max_cost_usd: Mapped[float | None] = mapped_column(Float)
    iterations: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    stop_reason: Mapped[str | None] = mapped_column(Text)
    allow_edits: Mapped[bool] = mapped_column(Boolean, default=False)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # The run's lease: its runner renews heartbeat_at (database clock) while it lives.
    heartbeat_at: Mapped[datetime | None] = mapped_column()
    host: Mapped[str | None] = mapped_column(String(255))
    pid: Mapped[int | None] = mapped_column(Integer)


class AgentSessionRow(Base):
    """One agent session."""

    __tablename__ = "agent_sessions"
    __table_args__ = (Index("ix_agent_sessions_started", "started_at"),)

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    task_id: Mapped[int | None] = mapped_column(ForeignKey("tasks.id", ondelete="SET NULL"), index=True)
    recipe: Mapped[str] = mapped_column(String(32))
    loop_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("loop_runs.id", ondelete="SET NULL"), index=True
    )
    iteration: Mapped[int | None] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(32))
    model: Mapped[str | None] = mapped_column(String(128))
    discipline: Mapped[str | None] = mapped_column(String(64))
    feature: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column()
    exit_code: Mapped[int | None] = mapped_column(Integer)
    closing_verb: Mapped[str | None] = mapped_column(String(16))
    outcome: Mapped[str | None] = mapped_column(String(16))
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    turns: Mapped[int] = mapped_column(Integer, default=0)
    transcript_path: Mapped[str | None] = mapped_column(Text)
    changed_files: Mapped[list[Any]] = mapped_column(default=list)
    head_before: Mapped[str | None] = mapped_column(String(64))
    head_after: Mapped[str | None] = mapped_column(String(64))
    error: Mapped[str | None] = mapped_column(Text)
    sandbox: Mapped[str | None] = mapped_column(String(32))  # the tool that confined it; null: unconfined
    sandbox_note: Mapped[str | None] = mapped_column(Text)  # what it could touch, or why it ran unconfined


class CompanionDeviceRow(Base):
    """A phone or other browser paired with the companion page (DESIGN §14): its token is kept hashed."""

    __tablename__ = "companion_devices"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(128), unique=True)
    paired_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column()
    revoked_at: Mapped[datetime | None] = mapped_column()


class CompanionCodeRow(Base):
    """A one-time pairing code, kept hashed: valid until `expires_at`, used once."""

    __tablename__ = "companion_codes"

    id: Mapped[int] = mapped_column(primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column()
    device_id: Mapped[int | None] = mapped_column(ForeignKey("companion_devices.id", ondelete="SET NULL"))


class ChangeRow(Base):
    """A change notice, so that other processes (the window) see what any process wrote."""

    __tablename__ = "change_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    topic: Mapped[str] = mapped_column(String(32))
    entity_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
