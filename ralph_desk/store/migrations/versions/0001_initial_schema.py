"""Initial schema: project, features, disciplines, tasks, comments, signals, sessions and loop runs.

Revision ID: 0001
Revises:

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""

    op.create_table(
        "disciplines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=False),
        sa.Column("icon", sa.String(length=64), nullable=False),
        sa.Column("color", sa.String(length=32), nullable=False),
        sa.Column("acronym", sa.String(length=16), nullable=True),
        sa.Column("system_prompt", sa.Text(), nullable=True),
        sa.Column("skills", sa.JSON(), nullable=False),
        sa.Column("conventions", sa.Text(), nullable=True),
        sa.Column("disabled_tools", sa.JSON(), nullable=False),
        sa.Column("mcp_servers", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_disciplines")),
        sa.UniqueConstraint("name", name=op.f("uq_disciplines_name")),
    )
    op.create_table(
        "features",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=False),
        sa.Column("acronym", sa.String(length=16), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("architecture", sa.Text(), nullable=True),
        sa.Column("boundaries", sa.Text(), nullable=True),
        sa.Column("knowledge_paths", sa.JSON(), nullable=False),
        sa.Column("context_files", sa.JSON(), nullable=False),
        sa.Column("dependencies", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_features")),
        sa.UniqueConstraint("name", name=op.f("uq_features_name")),
    )
    op.create_table(
        "loop_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("agent", sa.String(length=32), nullable=False),
        sa.Column("max_iterations", sa.Integer(), nullable=True),
        sa.Column("max_cost_usd", sa.Float(), nullable=True),
        sa.Column("iterations", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("stop_reason", sa.Text(), nullable=True),
        sa.Column("allow_edits", sa.Boolean(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loop_runs")),
    )
    op.create_table(
        "project",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_project")),
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("feature_id", sa.Integer(), nullable=False),
        sa.Column("discipline_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("priority", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("acceptance_criteria", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("context_files", sa.JSON(), nullable=False),
        sa.Column("output_artifacts", sa.JSON(), nullable=False),
        sa.Column("hints", sa.Text(), nullable=True),
        sa.Column("estimated_turns", sa.Integer(), nullable=True),
        sa.Column("pseudocode", sa.Text(), nullable=True),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("stuck_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("completed_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint("origin IN ('human', 'agent', 'import')", name=op.f("ck_tasks_origin_enum")),
        sa.CheckConstraint(
            "priority IN ('low', 'medium', 'high', 'critical')", name=op.f("ck_tasks_priority_enum")
        ),
        sa.CheckConstraint(
            "status IN ('draft', 'pending', 'in_progress', 'done', 'blocked', 'needs_input', 'skipped', 'failed')",
            name=op.f("ck_tasks_status_enum"),
        ),
        sa.CheckConstraint("stuck_count >= 0", name=op.f("ck_tasks_stuck_count_non_negative")),
        sa.ForeignKeyConstraint(
            ["discipline_id"],
            ["disciplines.id"],
            name=op.f("fk_tasks_discipline_id_disciplines"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["feature_id"], ["features.id"], name=op.f("fk_tasks_feature_id_features"), ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tasks")),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index("ix_tasks_discipline", ["discipline_id"], unique=False)
        batch_op.create_index("ix_tasks_feature", ["feature_id"], unique=False)
        batch_op.create_index("ix_tasks_status_priority", ["status", "priority", "created_at"], unique=False)

    op.create_table(
        "agent_sessions",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=True),
        sa.Column("recipe", sa.String(length=32), nullable=False),
        sa.Column("loop_run_id", sa.Integer(), nullable=True),
        sa.Column("iteration", sa.Integer(), nullable=True),
        sa.Column("agent", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("discipline", sa.String(length=64), nullable=True),
        sa.Column("feature", sa.String(length=64), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("ended_at", sa.DateTime(), nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("closing_verb", sa.String(length=16), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("transcript_path", sa.Text(), nullable=True),
        sa.Column("changed_files", sa.JSON(), nullable=False),
        sa.Column("head_before", sa.String(length=64), nullable=True),
        sa.Column("head_after", sa.String(length=64), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["loop_run_id"],
            ["loop_runs.id"],
            name=op.f("fk_agent_sessions_loop_run_id_loop_runs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_agent_sessions_task_id_tasks"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_sessions")),
    )
    with op.batch_alter_table("agent_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agent_sessions_loop_run_id"), ["loop_run_id"], unique=False)
        batch_op.create_index("ix_agent_sessions_started", ["started_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_agent_sessions_task_id"), ["task_id"], unique=False)

    op.create_table(
        "feature_learnings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("feature_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("task_id", sa.Integer(), nullable=True),
        sa.Column("hit_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "source IN ('auto', 'agent', 'human')", name=op.f("ck_feature_learnings_source_enum")
        ),
        sa.ForeignKeyConstraint(
            ["feature_id"],
            ["features.id"],
            name=op.f("fk_feature_learnings_feature_id_features"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_feature_learnings_task_id_tasks"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feature_learnings")),
    )
    with op.batch_alter_table("feature_learnings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_feature_learnings_feature_id"), ["feature_id"], unique=False)

    op.create_table(
        "task_comments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("discipline", sa.String(length=64), nullable=True),
        sa.Column("priority", sa.String(length=16), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "priority IN ('low', 'medium', 'high', 'critical') OR priority IS NULL",
            name=op.f("ck_task_comments_priority_enum"),
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_task_comments_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_comments")),
    )
    with op.batch_alter_table("task_comments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_comments_task_id"), ["task_id"], unique=False)

    op.create_table(
        "task_dependencies",
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("depends_on_id", sa.Integer(), nullable=False),
        sa.CheckConstraint("task_id <> depends_on_id", name=op.f("ck_task_dependencies_no_self_dependency")),
        sa.ForeignKeyConstraint(
            ["depends_on_id"],
            ["tasks.id"],
            name=op.f("fk_task_dependencies_depends_on_id_tasks"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_task_dependencies_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("task_id", "depends_on_id", name=op.f("pk_task_dependencies")),
    )
    with op.batch_alter_table("task_dependencies", schema=None) as batch_op:
        batch_op.create_index("ix_task_dependencies_depends_on", ["depends_on_id"], unique=False)

    op.create_table(
        "task_signals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("discipline_id", sa.Integer(), nullable=True),
        sa.Column("session_id", sa.String(length=128), nullable=True),
        sa.Column("verb", sa.String(length=16), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("remaining", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("question", sa.Text(), nullable=True),
        sa.Column("options", sa.Text(), nullable=True),
        sa.Column("preferred", sa.Text(), nullable=True),
        sa.Column("blocking", sa.Boolean(), nullable=True),
        sa.Column("what", sa.Text(), nullable=True),
        sa.Column("severity", sa.String(length=16), nullable=True),
        sa.Column("category", sa.String(length=32), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=True),
        sa.Column("scope", sa.String(length=16), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=True),
        sa.Column("why", sa.Text(), nullable=True),
        sa.Column("feature_id", sa.Integer(), nullable=True),
        sa.Column("on", sa.Text(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("answered_at", sa.DateTime(), nullable=True),
        sa.Column("resolution", sa.String(length=16), nullable=True),
        sa.Column("resolved_at", sa.DateTime(), nullable=True),
        sa.Column("review_decision", sa.String(length=16), nullable=True),
        sa.Column("review_reason", sa.Text(), nullable=True),
        sa.Column("created_task_id", sa.Integer(), nullable=True),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "category IN ('bug', 'stale', 'contradiction', 'ambiguity', 'overlap', 'performance', 'security', 'incomplete_prior') OR category IS NULL",
            name=op.f("ck_task_signals_category_enum"),
        ),
        sa.CheckConstraint(
            "resolution IN ('open', 'acknowledged', 'resolved', 'dismissed', 'converted') OR resolution IS NULL",
            name=op.f("ck_task_signals_resolution_enum"),
        ),
        sa.CheckConstraint(
            "review_decision IN ('pending', 'approved', 'rejected', 'acknowledged') OR review_decision IS NULL",
            name=op.f("ck_task_signals_review_decision_enum"),
        ),
        sa.CheckConstraint(
            "scope IN ('project', 'feature', 'task') OR scope IS NULL",
            name=op.f("ck_task_signals_scope_enum"),
        ),
        sa.CheckConstraint(
            "severity IN ('info', 'warning', 'blocking') OR severity IS NULL",
            name=op.f("ck_task_signals_severity_enum"),
        ),
        sa.CheckConstraint(
            "verb IN ('done', 'partial', 'stuck', 'ask', 'flag', 'learned', 'suggest', 'blocked')",
            name=op.f("ck_task_signals_verb_enum"),
        ),
        sa.ForeignKeyConstraint(
            ["created_task_id"],
            ["tasks.id"],
            name=op.f("fk_task_signals_created_task_id_tasks"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["discipline_id"],
            ["disciplines.id"],
            name=op.f("fk_task_signals_discipline_id_disciplines"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["feature_id"],
            ["features.id"],
            name=op.f("fk_task_signals_feature_id_features"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_task_signals_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_signals")),
    )
    with op.batch_alter_table("task_signals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_task_signals_discipline_id"), ["discipline_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_task_signals_feature_id"), ["feature_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_task_signals_session_id"), ["session_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_task_signals_task_id"), ["task_id"], unique=False)
        batch_op.create_index("ix_task_signals_task_verb", ["task_id", "verb"], unique=False)
        batch_op.create_index(
            "ix_task_signals_verb_blocking", ["verb", "blocking", "answered_at"], unique=False
        )
        batch_op.create_index("ix_task_signals_verb_resolution", ["verb", "resolution"], unique=False)
        batch_op.create_index("ix_task_signals_verb_review", ["verb", "review_decision"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""

    with op.batch_alter_table("task_signals", schema=None) as batch_op:
        batch_op.drop_index("ix_task_signals_verb_review")
        batch_op.drop_index("ix_task_signals_verb_resolution")
        batch_op.drop_index("ix_task_signals_verb_blocking")
        batch_op.drop_index("ix_task_signals_task_verb")
        batch_op.drop_index(batch_op.f("ix_task_signals_task_id"))
        batch_op.drop_index(batch_op.f("ix_task_signals_session_id"))
        batch_op.drop_index(batch_op.f("ix_task_signals_feature_id"))
        batch_op.drop_index(batch_op.f("ix_task_signals_discipline_id"))

    op.drop_table("task_signals")
    with op.batch_alter_table("task_dependencies", schema=None) as batch_op:
        batch_op.drop_index("ix_task_dependencies_depends_on")

    op.drop_table("task_dependencies")
    with op.batch_alter_table("task_comments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_task_comments_task_id"))

    op.drop_table("task_comments")
    with op.batch_alter_table("feature_learnings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_feature_learnings_feature_id"))

    op.drop_table("feature_learnings")
    with op.batch_alter_table("agent_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agent_sessions_task_id"))
        batch_op.drop_index("ix_agent_sessions_started")
        batch_op.drop_index(batch_op.f("ix_agent_sessions_loop_run_id"))

    op.drop_table("agent_sessions")
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index("ix_tasks_status_priority")
        batch_op.drop_index("ix_tasks_feature")
        batch_op.drop_index("ix_tasks_discipline")

    op.drop_table("tasks")
    op.drop_table("project")
    op.drop_table("loop_runs")
    op.drop_table("features")
    op.drop_table("disciplines")
