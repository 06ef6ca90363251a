"""Dialogs of the Features pane: a new feature, a learning's text, which learning a merge keeps."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QFormLayout,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import FeatureLearning
from ralph_desk.gui import fmt
from ralph_desk.gui.dialogs.buttons import action_buttons
from ralph_desk.gui.dialogs.new_record import NewRecordDialog
from ralph_desk.gui.widgets.common import label

DIALOG_WIDTH = 520


class NewFeatureDialog(NewRecordDialog):
    """The name and display name of a new feature (the rest is edited in the pane)."""

    def __init__(self, taken: list[str], parent: QWidget | None = None) -> None:
        super().__init__("feature", "Tide charts", taken, DIALOG_WIDTH, parent)
        self.name.setToolTip("Lower-case letters, digits, - and _; tasks and agents refer to it by this name")
        self.description = QPlainTextEdit()
        self.description.setPlaceholderText("What the feature is for (optional)")
        self.description.setFixedHeight(80)
        self.add_fields([("Description", self.description)])

    def values(self) -> dict[str, Any]:
        """The fields as `features.create` takes them."""
        return {**super().values(), "description": self.description.toPlainText().strip() or None}


class LearningDialog(QDialog):
    """A learning's text and the reason it holds, to edit."""

    def __init__(self, learning: FeatureLearning, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.learning = learning
        self.setWindowTitle(f"Edit learning #{learning.id}")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.text = QPlainTextEdit(learning.text)
        self.text.setFixedHeight(110)
        self.reason = QPlainTextEdit(learning.reason or "")
        self.reason.setPlaceholderText("Why it holds (optional)")
        self.reason.setFixedHeight(70)
        buttons, self.ok = action_buttons(self, "Save")
        self.text.textChanged.connect(lambda: self.ok.setEnabled(bool(self.text.toPlainText().strip())))
        form = QFormLayout()
        form.addRow("Learning", self.text)
        form.addRow("Reason", self.reason)
        layout = QVBoxLayout(self)
        layout.addWidget(
            label(
                f"Recorded by {learning.source}, seen {fmt.plural(learning.hit_count, 'time')}.", name="muted"
            )
        )
        layout.addLayout(form)
        layout.addWidget(buttons)

    def values(self) -> tuple[str, str | None]:
        """The text and the reason (None when empty)."""
        return self.text.toPlainText().strip(), self.reason.toPlainText().strip() or None


def default_keep(learnings: list[FeatureLearning]) -> FeatureLearning:
    """The learning a merge keeps unless told otherwise: the most seen, then the oldest."""
    return max(learnings, key=lambda item: (item.hit_count, -item.created_at.timestamp(), -item.id))


class MergeDialog(QDialog):
    """Which of the selected learnings to keep; the others fold into it, their hits added up."""

    def __init__(self, learnings: list[FeatureLearning], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.learnings = learnings
        self.setWindowTitle(f"Merge {len(learnings)} learnings")
        self.setMinimumWidth(DIALOG_WIDTH + 80)
        self.group = QButtonGroup(self)
        keep = default_keep(learnings)
        layout = QVBoxLayout(self)
        total = sum(item.hit_count for item in learnings)
        layout.addWidget(
            label(
                f"Keep one text; the others are removed and their hits added to it ({total} in all).",
                wrap=True,
            )
        )
        for learning in learnings:
            choice = QRadioButton(
                f"{fmt.one_line(learning.text, 110)}   ({fmt.plural(learning.hit_count, 'hit')})"
            )
            choice.setToolTip(learning.text)
            choice.setChecked(learning.id == keep.id)
            self.group.addButton(choice, learning.id)
            layout.addWidget(choice)
        buttons, self.ok = action_buttons(self, "Merge")
        layout.addWidget(buttons)
        # A set minimum width wins over the layout's: widen it to what the longest choice needs.
        self.setMinimumWidth(max(DIALOG_WIDTH + 80, layout.minimumSize().width()))

    def keep_id(self) -> int:
        """The id of the learning to keep."""
        return self.group.checkedId()

    def choose(self, learning_id: int) -> None:
        """Keep this learning."""
        self.group.button(learning_id).setChecked(True)
