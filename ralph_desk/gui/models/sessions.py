"""Agent sessions as rows: when, recipe, model, outcome, turns, cost, duration, transcript."""

from __future__ import annotations

from PySide6.QtCore import QObject

from ralph_desk.domain.records import AgentSession
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.models.base import Column, RecordTableModel


def _model(session: AgentSession) -> str:
    return f"{session.agent} · {session.model}" if session.model else session.agent


def session_columns(numbers: dict[str, int]) -> list[Column[AgentSession]]:
    """The sessions table's columns; the first is the session's number in `numbers`."""
    return [
        Column(
            "#",
            lambda s: f"#{numbers[s.id]}" if s.id in numbers else "",
            sort_key=lambda s: numbers.get(s.id, 0),
            tooltip=lambda s: s.id,
            align_right=True,
        ),
        *SESSION_COLUMNS,
    ]


SESSION_COLUMNS: list[Column[AgentSession]] = [
    Column(
        "Started",
        lambda s: fmt.when(s.started_at),
        sort_key=lambda s: s.started_at,
        tooltip=lambda s: (
            f"{s.id}\n{s.recipe.replace('_', ' ')} by {_model(s)}\nstarted {fmt.full(s.started_at)}"
            + (f", ran {fmt.duration(s.started_at, s.ended_at)}" if s.ended_at else ", still running")
        ),
    ),
    Column("Recipe", lambda s: s.recipe.replace("_", " "), sort_key=lambda s: s.recipe),
    Column("Agent", _model, sort_key=_model),
    Column(
        "Outcome",
        lambda s: (s.outcome or "").replace("_", " "),
        sort_key=lambda s: s.outcome or "",
        color=lambda s: theme.outcome_color(s.outcome),
        tooltip=lambda s: s.error,
    ),
    Column("Closed with", lambda s: s.closing_verb or "—", sort_key=lambda s: s.closing_verb or ""),
    Column(
        "Sandbox",
        lambda s: s.sandbox or "none",
        sort_key=lambda s: s.sandbox or "",
        color=lambda s: None if s.confined else theme.outcome_color("failed"),
        tooltip=lambda s: s.sandbox_note or "not recorded (a session from before sandboxes)",
    ),
    Column("Turns", lambda s: str(s.turns), sort_key=lambda s: s.turns, align_right=True),
    Column(
        "Cost",
        lambda s: fmt.money(s.cost_usd),
        sort_key=lambda s: s.cost_usd,
        align_right=True,
        tooltip=lambda s: f"{s.turns} turns; {s.input_tokens:,} tokens in, {s.output_tokens:,} out",
    ),
    Column(
        "Duration",
        lambda s: fmt.duration(s.started_at, s.ended_at),
        sort_key=lambda s: (s.ended_at - s.started_at) if s.ended_at else s.started_at - s.started_at,
        align_right=True,
    ),
    Column(
        "Transcript",
        lambda s: "open" if s.transcript_path else "—",
        sort_key=lambda s: s.transcript_path or "",
        icon=lambda s: icons.icon("transcript", theme.accent()) if s.transcript_path else None,
        tooltip=lambda s: f"{s.transcript_path} — double-click to open" if s.transcript_path else None,
    ),
]


class SessionTableModel(RecordTableModel[AgentSession]):
    """The agent sessions of a task, newest first, numbered in the order they started."""

    def __init__(self, numbers: dict[str, int] | None = None, parent: QObject | None = None) -> None:
        self.numbers: dict[str, int] = numbers if numbers is not None else {}
        super().__init__(session_columns(self.numbers), key=lambda session: session.id, parent=parent)
