"""Dialogs of the inbox: edit a suggested task before approving it, give a reason to reject it."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import Task
from ralph_desk.gui.dialogs.buttons import action_buttons, submit_on_enter
from ralph_desk.gui.dialogs.task_dialog import TaskDialog, TaskDraft
from ralph_desk.gui.widgets.common import label

DIALOG_WIDTH = 560


class EditSuggestionDialog(TaskDialog):
    """The fields of a suggested draft task, to change before approving it."""

    def __init__(
        self, task: Task, features: list[str], disciplines: list[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(
            f"Edit and approve task #{task.id}",
            "Save and approve",
            features,
            disciplines,
            TaskDraft.of(task),
            parent,
            with_status=False,
            note="The task becomes pending: the loop may pick it next.",
        )
        self.task = task
        self.approve = self.create_button

    def values(self) -> dict[str, Any]:
        """The fields as `inbox.edit_and_approve` takes them (criteria emptied when none are left)."""
        values = super().values()
        del values["status"]
        values["acceptance_criteria"] = values["acceptance_criteria"] or []
        return values


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
