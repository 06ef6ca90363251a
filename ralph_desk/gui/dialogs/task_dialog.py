"""The task dialog: a task's fields — new, filled from a flag, or a suggested draft to edit and approve."""

from __future__ import annotations

from dataclasses import dataclass
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

from ralph_desk.domain.enums import Priority, TaskStatus
from ralph_desk.domain.records import Task
from ralph_desk.gui.dialogs.buttons import action_buttons
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.widgets.common import label

DIALOG_WIDTH = 560
STATUSES = (
    (TaskStatus.PENDING, "Pending — the loop may run it"),
    (TaskStatus.DRAFT, "Draft — kept until you approve it"),
)


@dataclass(frozen=True)
class TaskDraft:
    """What the dialog starts with."""

    title: str = ""
    description: str = ""
    feature: str = ""
    discipline: str = ""
    priority: Priority = Priority.MEDIUM
    status: TaskStatus = TaskStatus.PENDING
    criteria: tuple[str, ...] = ()

    @classmethod
    def of(cls, task: Task) -> TaskDraft:
        """A task's own fields."""
        return cls(
            task.title,
            task.description or "",
            task.feature,
            task.discipline,
            task.priority,
            task.status,
            task.acceptance_criteria,
        )


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class TaskDialog(QDialog):
    """Title, description, feature, discipline, priority, criteria, and pending or draft; Enter acts."""

    def __init__(
        self,
        heading: str,
        action: str,
        features: list[str],
        disciplines: list[str],
        start: TaskDraft = TaskDraft(),
        parent: QWidget | None = None,
        with_status: bool = True,
        note: str = "",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(heading)
        self.setMinimumWidth(DIALOG_WIDTH)
        self.title = QLineEdit(start.title)
        self.title.setPlaceholderText("What is to be done, in a line")
        self.description = QPlainTextEdit(start.description)
        self.feature = QComboBox()
        self.feature.addItems(features)
        if start.feature:
            self.feature.setCurrentText(start.feature)
        self.discipline = QComboBox()
        self.discipline.addItems(disciplines)
        if start.discipline:
            self.discipline.setCurrentText(start.discipline)
        self.priority = QComboBox()
        self.priority.addItems([priority.value for priority in Priority])
        self.priority.setCurrentText(start.priority.value)
        self.status = QComboBox()
        for status, text in STATUSES:
            self.status.addItem(text, status.value)
        self.status.setCurrentIndex(self.status.findData(start.status.value))
        self.criteria = QPlainTextEdit("\n".join(start.criteria))
        self.criteria.setPlaceholderText("One criterion per line")
        self.criteria.setFixedHeight(80)
        form = QFormLayout()
        form.addRow("Title", self.title)
        form.addRow("Description", self.description)
        form.addRow("Feature", self.feature)
        form.addRow("Discipline", self.discipline)
        form.addRow("Priority", self.priority)
        if with_status:
            form.addRow("Status", self.status)
        form.addRow("Acceptance criteria", self.criteria)
        self.problem = label(name="muted", wrap=True)
        buttons, self.create_button = action_buttons(self, action)
        layout = QVBoxLayout(self)
        if note:
            layout.addWidget(label(note, name="muted"))
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.title.textChanged.connect(self._check)
        self._check()
        self.started = self._typed()
        self.drop_box: ConfirmBox | None = None

    def _typed(self) -> tuple[str, str, str]:
        return self.title.text(), self.description.toPlainText(), self.criteria.toPlainText()

    def reject(self) -> None:
        """Esc or Cancel: close, asking first when text was typed (Cancel in the question keeps it)."""
        if self._typed() == self.started or not self.isVisible():
            super().reject()
            return
        self.drop_box = confirm(
            self,
            "Drop what you typed?",
            "Close without making the task? What you typed is dropped.",
            "Drop it",
            super().reject,
        )

    def values(self) -> dict[str, Any]:
        """The fields as the task service's `create` takes them."""
        return {
            "title": self.title.text().strip(),
            "description": self.description.toPlainText().strip() or None,
            "feature": self.feature.currentText(),
            "discipline": self.discipline.currentText(),
            "priority": Priority(self.priority.currentText()),
            "status": TaskStatus(self.status.currentData()),
            "acceptance_criteria": _lines(self.criteria.toPlainText()) or None,
        }

    def _check(self, *_args: object) -> None:
        missing = [
            name
            for name, value in (
                ("a title", self.title.text().strip()),
                ("a feature", self.feature.currentText()),
                ("a discipline", self.discipline.currentText()),
            )
            if not value
        ]
        self.problem.setText(f"A task needs {' and '.join(missing)}." if missing else "")
        self.problem.setVisible(bool(missing))
        self.create_button.setEnabled(not missing)
