"""Dialogs of the inbox: edit a suggested task before approving it, give a reason to reject it."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.enums import Priority
from ralph_desk.domain.records import Task
from ralph_desk.gui.dialogs.buttons import action_buttons, submit_on_enter
from ralph_desk.gui.widgets.common import label

DIALOG_WIDTH = 560


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class EditSuggestionDialog(QDialog):
    """The fields of a suggested draft task, to change before approving it."""

    def __init__(
        self, task: Task, features: list[str], disciplines: list[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.task = task
        self.setWindowTitle(f"Edit and approve task #{task.id}")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.title = QLineEdit(task.title)
        self.description = QPlainTextEdit(task.description or "")
        self.feature = QComboBox()
        self.feature.addItems(features)
        self.feature.setCurrentText(task.feature)
        self.discipline = QComboBox()
        self.discipline.addItems(disciplines)
        self.discipline.setCurrentText(task.discipline)
        self.priority = QComboBox()
        self.priority.addItems([priority.value for priority in Priority])
        self.priority.setCurrentText(task.priority.value)
        self.criteria = QPlainTextEdit("\n".join(task.acceptance_criteria))
        self.criteria.setPlaceholderText("One criterion per line")
        self.criteria.setFixedHeight(96)
        form = QFormLayout()
        form.addRow("Title", self.title)
        form.addRow("Description", self.description)
        form.addRow("Feature", self.feature)
        form.addRow("Discipline", self.discipline)
        form.addRow("Priority", self.priority)
        form.addRow("Acceptance criteria", self.criteria)
        buttons, self.approve = action_buttons(self, "Save and approve")
        self.title.textChanged.connect(lambda text: self.approve.setEnabled(bool(text.strip())))
        layout = QVBoxLayout(self)
        layout.addWidget(label("The task becomes pending: the loop may pick it next.", name="muted"))
        layout.addLayout(form)
        layout.addWidget(buttons)

    def values(self) -> dict[str, Any]:
        """The fields as `inbox.edit_and_approve` takes them."""
        return {
            "title": self.title.text().strip(),
            "description": self.description.toPlainText().strip() or None,
            "feature": self.feature.currentText(),
            "discipline": self.discipline.currentText(),
            "priority": self.priority.currentText(),
            "acceptance_criteria": _lines(self.criteria.toPlainText()),
        }


class ReasonDialog(QDialog):
    """Asks why something is rejected; OK only once there is a reason."""

    def __init__(self, title: str, prompt: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(DIALOG_WIDTH - 100)
        self.reason = QPlainTextEdit()
        self.reason.setPlaceholderText("The reason is kept as a comment on the task (Shift+Enter: new line)")
        self.reason.setFixedHeight(90)
        buttons, self.ok = action_buttons(self, "Reject")
        self.ok.setEnabled(False)
        submit_on_enter(self.reason, self.ok)
        self.reason.textChanged.connect(lambda: self.ok.setEnabled(bool(self.text())))
        layout = QVBoxLayout(self)
        layout.addWidget(label(prompt, wrap=True))
        layout.addWidget(self.reason)
        layout.addWidget(buttons)

    def text(self) -> str:
        """The reason typed."""
        return self.reason.toPlainText().strip()
