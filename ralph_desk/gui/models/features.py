"""Features and their learnings as rows: thin adapters over plain lists of records."""

from __future__ import annotations

from PySide6.QtCore import QObject

from ralph_desk.domain.enums import TaskOrigin
from ralph_desk.domain.records import Feature, FeatureLearning
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.models.base import Column, RecordTableModel
from ralph_desk.gui.models.named import NamedRecordModel, count_column, display_name_column


def _feature_tip(feature: Feature) -> str:
    lines = [f"{feature.display_name} ({feature.name})"]
    if feature.description:
        lines.append(fmt.one_line(feature.description, 200))
    if feature.dependencies:
        lines.append("depends on " + ", ".join(feature.dependencies))
    return "\n".join(lines)


FEATURE_COLUMNS: list[Column[Feature]] = [
    display_name_column("Feature", _feature_tip),
    Column("Name", lambda f: f.name, tooltip=lambda f: "The name tasks and agents use for it"),
    count_column(
        "Files", lambda f: f.context_files, "\n", "Context files every session on the feature reads"
    ),
]


class FeatureTableModel(NamedRecordModel[Feature]):
    """Every feature: display name, name and how many context files it has."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(FEATURE_COLUMNS, parent=parent)


def _learning_tip(learning: FeatureLearning) -> str:
    lines = [learning.text]
    if learning.reason:
        lines.append(f"Why: {learning.reason}")
    lines.append(f"added {fmt.full(learning.created_at)} by {learning.source}")
    return "\n".join(lines)


TEXT, SOURCE, HITS, TASK, ADDED = range(5)

LEARNING_COLUMNS: list[Column[FeatureLearning]] = [
    Column(
        "Learning",
        lambda n: fmt.one_line(n.text, 160),
        sort_key=lambda n: n.text.casefold(),
        tooltip=_learning_tip,
    ),
    Column(
        "Source",
        lambda n: n.source,
        icon=lambda n: (
            icons.icon("robot", theme.origin_color(TaskOrigin.AGENT)) if n.source == "agent" else None
        ),
        header_tip="Who recorded it: a person, or an agent through `learned`",
    ),
    Column(
        "Hits",
        lambda n: str(n.hit_count),
        sort_key=lambda n: n.hit_count,
        align_right=True,
        header_tip="How often it was recorded again; merging duplicates adds their hits up",
    ),
    Column(
        "Task",
        lambda n: f"#{n.task_id}" if n.task_id else "—",
        sort_key=lambda n: n.task_id or 0,
        align_right=True,
        header_tip="The task whose session recorded it",
    ),
    Column(
        "Added",
        lambda n: fmt.when(n.created_at),
        sort_key=lambda n: n.created_at,
        tooltip=lambda n: fmt.full(n.created_at),
    ),
]


class LearningTableModel(RecordTableModel[FeatureLearning]):
    """A feature's learnings: text, source, hit count, task and when it was added."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(LEARNING_COLUMNS, key=lambda learning: learning.id, parent=parent)
