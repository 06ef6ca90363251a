"""Help › Keyboard shortcuts: every shortcut of the window, grouped, in a table."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

Shortcut = tuple[str, str, str]
"""(group, keys, what it does)."""

FIXED: tuple[Shortcut, ...] = (
    ("Inbox", "Ctrl+Enter", "Send the answer typed (or retry a failed task with its note)"),
    ("Tasks", "Ctrl+N", "New task"),
    ("Tasks", "Ctrl+F", "Search the tasks"),
    ("Tasks", "Ctrl+S", "Save the task's edits"),
    ("Tasks", "Delete", "Delete the selected task (asks first)"),
    ("Everywhere", "Tab / Shift+Tab", "Next / previous control (tables too: arrows move within them)"),
    ("Everywhere", "Esc", "Hide the message bar, or close a dialog"),
)


class ShortcutsDialog(QDialog):
    """A read-only table of the window's shortcuts."""

    def __init__(self, shortcuts: Sequence[Shortcut], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setMinimumSize(560, 460)
        self.table = QTableWidget(len(shortcuts), 3)
        self.table.setHorizontalHeaderLabels(["Where", "Keys", "What it does"])
        for row, (group, keys, what) in enumerate(shortcuts):
            for column, text in enumerate((group, keys, what)):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setTabKeyNavigation(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)

    def keys(self) -> list[str]:
        """The keys column, top to bottom."""
        items = (self.table.item(row, 1) for row in range(self.table.rowCount()))
        return [item.text() if item is not None else "" for item in items]
