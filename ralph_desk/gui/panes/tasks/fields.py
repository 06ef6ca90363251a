"""The editable fields of one task, and which of them the person changed."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.enums import Priority, TaskStatus
from ralph_desk.domain.records import Task
from ralph_desk.domain.setting_bounds import MAX_TURNS
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.unsaved import CHANGED_ELSEWHERE, changed_elsewhere
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.form import EditForm, editor_form, field_pair, lines, text_box
from ralph_desk.gui.widgets.layout import scroller

EDITED = (
    "title",
    "status",
    "priority",
    "feature",
    "discipline",
    "estimated_turns",
    "tags",
    "description",
    "acceptance_criteria",
    "context_files",
    "hints",
    "pseudocode",
)
"""The task fields this form edits: a change to another (the loop's stamps, a stuck count) is no conflict."""
TEXT_HEIGHTS = {"description": 110, "criteria": 90, "context": 64, "hints": 64, "pseudocode": 110}


def _tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


class TaskFields(EditForm):
    """Every editable field of a task, scrolling above Save and Revert (always in view); Save sends only
    what changed."""

    sig_save_requested = Signal(int, object)
    """Save these changes (a dict of field → value; `status` included when it changed) to the task."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task: Task | None = None
        self.title = QLineEdit()
        self.status = QComboBox()
        for status in TaskStatus:
            self.status.addItem(
                icons.dot(theme.status_color(status)), theme.status_label(status), status.value
            )
        self.priority = QComboBox()
        for priority in Priority:
            self.priority.addItem(priority.value, priority.value)
        self.feature = QComboBox()
        self.discipline = QComboBox()
        self.turns = QSpinBox()
        self.turns.setRange(0, MAX_TURNS)
        self.turns.setSpecialValueText("not set")
        self.turns.setToolTip("How many agent turns the task should take (0: not set)")
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("Comma-separated labels")
        self.description = text_box(TEXT_HEIGHTS["description"], "What is to be done, and why")
        self.criteria = text_box(TEXT_HEIGHTS["criteria"], "One acceptance criterion per line")
        self.context = text_box(TEXT_HEIGHTS["context"], "Project files the agent should read, one per line")
        self.hints = text_box(TEXT_HEIGHTS["hints"], "Tips for the agent")
        self.pseudocode = text_box(TEXT_HEIGHTS["pseudocode"], "An outline of the solution")
        self.pseudocode.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.facts = label(name="muted", wrap=True, selectable=True)
        self.save = button("Save", "save", "Save the changed fields (Ctrl+S)", primary=True)
        self.revert = button("Revert", "refresh", "Throw away your edits and show the task as stored")
        self.save.clicked.connect(self.request_save)
        self.revert.clicked.connect(self.revert_edits)
        self.notice = label(name="muted", wrap=True)
        self.scroller = scroller(self._layout_form())
        actions = QHBoxLayout()
        actions.setContentsMargins(12, 4, 12, 4)
        actions.addWidget(self.notice, 1)
        actions.addWidget(self.revert)
        actions.addWidget(self.save)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.scroller, 1)
        layout.addLayout(actions)
        for signal in self._edited_signals():
            signal.connect(self._on_edit)
        self._update_buttons()

    def _layout_form(self) -> QWidget:
        body = QWidget()
        form = editor_form()
        # Narrow, a field goes under its label rather than holding the detail pane wide.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        pair = field_pair(self.status, "Priority", self.priority, stretch=(1, 1))
        where = field_pair(self.feature, "Discipline", self.discipline, stretch=(1, 1))
        form.addRow("Title", self.title)
        form.addRow("Status", pair)
        form.addRow("Feature", where)
        form.addRow("Estimated turns", self.turns)
        form.addRow("Tags", self.tags)
        form.addRow("Description", self.description)
        form.addRow("Acceptance criteria", self.criteria)
        form.addRow("Context files", self.context)
        form.addRow("Hints", self.hints)
        form.addRow("Pseudocode", self.pseudocode)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.addLayout(form)
        layout.addWidget(self.facts)
        layout.addStretch(1)
        return body

    def _edited_signals(self) -> list[Any]:
        texts = (self.description, self.criteria, self.context, self.hints, self.pseudocode)
        combos = (self.status, self.priority, self.feature, self.discipline)
        return [
            self.title.textChanged,
            self.tags.textChanged,
            self.turns.valueChanged,
            *(box.textChanged for box in texts),
            *(combo.currentIndexChanged for combo in combos),
        ]

    def set_choices(self, features: list[str], disciplines: list[str]) -> None:
        """The features and disciplines a task can move to."""
        self._loading = True
        for combo, names in ((self.feature, features), (self.discipline, disciplines)):
            current = combo.currentText()
            combo.clear()
            combo.addItems(names)
            combo.setCurrentText(current)
        self._loading = False

    def load(self, task: Task, force: bool = False) -> None:
        """Show `task`; edits in progress on the same task are kept unless `force`."""
        same = self.task is not None and self.task.id == task.id
        if same and self._dirty and not force:
            if changed_elsewhere(self.task, task, EDITED):
                self.notice.setText(CHANGED_ELSEWHERE)
            self.task = task
            self._show_facts(task)
            return
        self.task = task
        self._loading = True
        self.title.setText(task.title)
        self.title.setCursorPosition(0)
        self.status.setCurrentIndex(self.status.findData(task.status.value))
        self.priority.setCurrentIndex(self.priority.findData(task.priority.value))
        self._choose(self.feature, task.feature)
        self._choose(self.discipline, task.discipline)
        self.turns.setValue(task.estimated_turns or 0)
        self.tags.setText(", ".join(task.tags))
        self.description.setPlainText(task.description or "")
        self.criteria.setPlainText("\n".join(task.acceptance_criteria))
        self.context.setPlainText("\n".join(task.context_files))
        self.hints.setPlainText(task.hints or "")
        self.pseudocode.setPlainText(task.pseudocode or "")
        self._loading = False
        self.notice.setText("")
        self._show_facts(task)
        self._set_dirty(False)

    def _choose(self, combo: QComboBox, name: str) -> None:
        if combo.findText(name) < 0:
            combo.addItem(name)
        combo.setCurrentText(name)

    def _show_facts(self, task: Task) -> None:
        facts = [f"origin {task.origin.value}", f"stuck {task.stuck_count}×"]
        facts.append(f"created {fmt.when(task.created_at)}")
        facts.append(f"updated {fmt.when(task.updated_at)}")
        if task.started_at:
            facts.append(f"started {fmt.when(task.started_at)}")
        if task.completed_at:
            facts.append(f"completed {fmt.when(task.completed_at)}")
        if task.output_artifacts:
            facts.append("outputs: " + ", ".join(task.output_artifacts))
        self.facts.setText(" · ".join(facts))

    def changes(self) -> dict[str, Any]:
        """The fields that differ from the task as loaded, as `tasks.update` takes them (plus `status`)."""
        task = self.task
        if task is None:
            return {}
        current: dict[str, Any] = {
            "title": self.title.text().strip(),
            "priority": Priority(self.priority.currentData()),
            "feature": self.feature.currentText(),
            "discipline": self.discipline.currentText(),
            "estimated_turns": self.turns.value() or None,
            "tags": _tags(self.tags.text()),
            "description": self.description.toPlainText().strip() or None,
            "acceptance_criteria": lines(self.criteria.toPlainText()),
            "context_files": lines(self.context.toPlainText()),
            "hints": self.hints.toPlainText().strip() or None,
            "pseudocode": self.pseudocode.toPlainText().rstrip() or None,
            "status": TaskStatus(self.status.currentData()),
        }
        stored: dict[str, Any] = {
            "title": task.title,
            "priority": task.priority.value,
            "feature": task.feature,
            "discipline": task.discipline,
            "estimated_turns": task.estimated_turns,
            "tags": list(task.tags),
            "description": task.description,
            "acceptance_criteria": list(task.acceptance_criteria),
            "context_files": list(task.context_files),
            "hints": task.hints,
            "pseudocode": task.pseudocode,
            "status": task.status.value,
        }
        return {key: value for key, value in current.items() if value != stored[key]}

    def request_save(self) -> None:
        """Ask to save what changed."""
        changes = self.changes()
        if self.task is not None and changes:
            self.sig_save_requested.emit(self.task.id, changes)

    def revert_edits(self) -> None:
        """Show the task as loaded again."""
        if self.task is not None:
            self.load(self.task, force=True)

    def _update_buttons(self) -> None:
        self.save.setEnabled(self._dirty and bool(self.title.text().strip()))
        self.revert.setEnabled(self._dirty)
