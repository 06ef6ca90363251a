"""The loop's session history as rows: task, closing verb, outcome, turns, cost, duration, started."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor

from ralph_desk.domain.enums import Verb
from ralph_desk.domain.records import AgentSession
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.models.base import Column, RecordTableModel


@dataclass(frozen=True)
class HistoryRow:
    """One agent session and the title of its task (empty for recipe runs)."""

    session: AgentSession
    task_title: str = ""


def _task(row: HistoryRow) -> str:
    session = row.session
    if session.task_id is None:
        return session.recipe.replace("_", " ")
    return f"#{session.task_id} {row.task_title}".strip()


def _verb_color(row: HistoryRow) -> QColor | None:
    try:
        return theme.verb_color(Verb(row.session.closing_verb or ""))
    except ValueError:
        return None


def _tip(row: HistoryRow) -> str:
    s = row.session
    model = f"{s.agent} · {s.model}" if s.model else s.agent
    lines = [s.id, f"{s.recipe.replace('_', ' ')} by {model}", f"started {fmt.full(s.started_at)}"]
    if s.error:
        lines.append(f"error: {s.error}")
    if s.changed_files:
        lines.append("changed: " + ", ".join(s.changed_files[:12]))
    return "\n".join(lines)


STARTED, TASK, VERB, OUTCOME, TURNS, COST, DURATION, TRANSCRIPT = range(8)

HISTORY_COLUMNS: list[Column[HistoryRow]] = [
    Column(
        "Started",
        lambda r: fmt.when(r.session.started_at),
        sort_key=lambda r: r.session.started_at,
        tooltip=_tip,
    ),
    Column("Task", _task, sort_key=lambda r: (r.session.task_id or 0, r.session.recipe), tooltip=_tip),
    Column(
        "Closed with",
        lambda r: r.session.closing_verb or "—",
        sort_key=lambda r: r.session.closing_verb or "",
        color=_verb_color,
        header_tip="The verb that closed the session (none: it ended without one, which counts as stuck)",
    ),
    Column(
        "Outcome",
        lambda r: (r.session.outcome or "").replace("_", " "),
        sort_key=lambda r: r.session.outcome or "",
        color=lambda r: theme.outcome_color(r.session.outcome),
        tooltip=lambda r: r.session.error,
    ),
    Column("Turns", lambda r: str(r.session.turns), sort_key=lambda r: r.session.turns, align_right=True),
    Column(
        "Cost",
        lambda r: fmt.money(r.session.cost_usd),
        sort_key=lambda r: r.session.cost_usd,
        align_right=True,
        tooltip=lambda r: f"{r.session.input_tokens:,} tokens in, {r.session.output_tokens:,} out",
    ),
    Column(
        "Duration",
        lambda r: fmt.duration(r.session.started_at, r.session.ended_at) or "running",
        sort_key=lambda r: (r.session.ended_at or r.session.started_at) - r.session.started_at,
        align_right=True,
    ),
    Column(
        "Transcript",
        lambda r: "open" if r.session.transcript_path else "—",
        icon=lambda r: icons.icon("transcript", theme.accent()) if r.session.transcript_path else None,
        tooltip=lambda r: (
            f"{r.session.transcript_path} — double-click to open" if r.session.transcript_path else None
        ),
    ),
]


class HistoryTableModel(RecordTableModel[HistoryRow]):
    """The latest agent sessions of every loop run, newest first."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(HISTORY_COLUMNS, key=lambda row: row.session.id, parent=parent)
