"""Disciplines and their extra MCP servers as rows: thin adapters over plain lists of records."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor

from ralph_desk.domain.records import Discipline, McpServerSpec
from ralph_desk.gui import fmt, icons
from ralph_desk.gui.models.base import Column, RecordTableModel
from ralph_desk.gui.models.named import NamedRecordModel, count_column, display_name_column

HIDDEN_VALUE = "•••"


def _discipline_tip(discipline: Discipline) -> str:
    lines = [f"{discipline.display_name} ({discipline.name})"]
    if discipline.skills:
        lines.append("skills: " + ", ".join(discipline.skills))
    if discipline.disabled_tools:
        lines.append("takes away: " + ", ".join(discipline.disabled_tools))
    return "\n".join(lines)


DISCIPLINE_COLUMNS: list[Column[Discipline]] = [
    display_name_column("Discipline", _discipline_tip, icon=lambda d: icons.dot(QColor(d.color))),
    count_column(
        "Off",
        lambda d: d.disabled_tools,
        ", ",
        "How many tools the discipline takes away from its sessions",
    ),
]


class DisciplineTableModel(NamedRecordModel[Discipline]):
    """Every discipline: colour and display name, and how many tools it takes away."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(DISCIPLINE_COLUMNS, parent=parent)


def server_kind(spec: McpServerSpec) -> str:
    """`http` for a URL server, `command` for one the agent starts."""
    return "http" if spec.url is not None else "command"


def server_target(spec: McpServerSpec) -> str:
    """The URL, or the command with its arguments."""
    if spec.url is not None:
        return spec.url
    return " ".join([spec.command or "", *spec.args]).strip()


def server_settings(spec: McpServerSpec) -> str:
    """Environment variables or headers by name; values are hidden (they may be secrets)."""
    values = spec.headers if spec.url is not None else spec.env
    return ", ".join(f"{name}={HIDDEN_VALUE}" for name in values)


SERVER_COLUMNS: list[Column[McpServerSpec]] = [
    Column("Name", lambda s: s.name, icon=lambda s: icons.icon("server")),
    Column("Kind", server_kind, header_tip="command: the agent starts it; http: it is reached at a URL"),
    Column("Command or URL", server_target, tooltip=lambda s: fmt.one_line(server_target(s), 400)),
    Column(
        "Env / headers",
        server_settings,
        header_tip="Environment variables (command) or HTTP headers (URL); values are not shown",
    ),
]


class ServerTableModel(RecordTableModel[McpServerSpec]):
    """A discipline's extra MCP servers: name, kind, command or URL, and the names of env or headers."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(SERVER_COLUMNS, key=lambda spec: spec.name, parent=parent)
