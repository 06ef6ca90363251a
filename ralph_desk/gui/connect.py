"""The "Connect a client" dialog: a ready MCP configuration per client, to copy."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QPlainTextEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.widgets.common import button, label
from ralph_desk.mcp_server.clients import CLIENTS, render, stdio_launch

CLIENT_NAMES = {
    "claude": "Claude Code",
    "vscode": "VS Code",
    "jetbrains": "JetBrains",
    "cursor": "Cursor",
    "codex": "Codex",
    "copilot": "Copilot CLI",
}


class ConnectDialog(QDialog):
    """One tab per client with its configuration text, where it goes, and a Copy button."""

    def __init__(self, root: Path, embedded_url: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect a client")
        self.resize(720, 460)
        self.tabs = QTabWidget()
        launch = stdio_launch(root)
        self.texts: dict[str, str] = {}
        for client in CLIENTS:
            config = render(client, launch)
            self.texts[client] = config.text
            self.tabs.addTab(self._page(config.text, config.where), CLIENT_NAMES.get(client, client))
        served = (
            f"The window's own server ({embedded_url}) serves the loop's agents, each with its own "
            "credential. IDE clients start the project's server themselves with the command below."
            if embedded_url
            else "IDE clients start the project's server themselves with the command below."
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label(served, name="muted", wrap=True))
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)

    def _page(self, text: str, where: str) -> QWidget:
        page = QWidget()
        box = QPlainTextEdit(text)
        box.setReadOnly(True)
        box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        copy = button("Copy", "copy", "Copy the configuration to the clipboard")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
        row = QHBoxLayout()
        row.addWidget(label(f"Put it in {where}", name="muted", wrap=True), 1)
        row.addWidget(copy)
        layout = QVBoxLayout(page)
        layout.addWidget(box, 1)
        layout.addLayout(row)
        return page
