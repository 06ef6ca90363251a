"""The dry-run preview: the prompt, tools and MCP config the next session would get."""

from __future__ import annotations

import json

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QListWidget,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.tools import in_registry_order
from ralph_desk.gui import fmt
from ralph_desk.gui.widgets.common import label
from ralph_desk.loop.preview import SessionPreview

PROMPT, TOOLS, CONFIG = range(3)


def _text(text: str) -> QPlainTextEdit:
    box = QPlainTextEdit(text)
    box.setReadOnly(True)
    box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    return box


class PreviewDialog(QDialog):
    """What the next session would be told and given, without claiming its task or starting it."""

    def __init__(
        self, preview: SessionPreview | None, task_title: str = "", parent: QWidget | None = None
    ) -> None:
        """`task_title` names the next session's task; without a session, it says why nothing runs."""
        super().__init__(parent)
        self.setWindowTitle("Dry run: the next session")
        self.resize(860, 640)
        self.preview = preview
        layout = QVBoxLayout(self)
        if preview is None:  # the title is why nothing runs
            why = task_title or "nothing is runnable"
            layout.addWidget(
                label(f"{why[:1].upper()}{why[1:]}. The Inbox holds what waits for you.", wrap=True)
            )
            self.tabs: QTabWidget | None = None
        else:
            task = f"task #{preview.task_id} {task_title}".strip() if preview.task_id else "a recipe session"
            tools = in_registry_order(preview.tools)
            layout.addWidget(
                label(
                    f"The next session works on {task} with {fmt.plural(len(tools), 'tool')}. Nothing was "
                    "claimed or started.",
                    name="muted",
                    wrap=True,
                )
            )
            self.tabs = QTabWidget()
            self.tabs.addTab(_text(preview.prompt), "Prompt")
            tool_list = QListWidget()
            tool_list.addItems(tools)
            self.tabs.addTab(tool_list, f"Tools ({len(tools)})")
            self.tabs.addTab(_text(json.dumps(preview.mcp_config, indent=2)), "MCP config")
            layout.addWidget(self.tabs, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
