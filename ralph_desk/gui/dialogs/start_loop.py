"""Before a loop run: what will run and what it may spend, confirmed once (or remembered per project)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.dialogs.buttons import action_buttons
from ralph_desk.gui.widgets.common import label
from ralph_desk.loop.start_summary import StartSummary
from ralph_desk.loop.trust_check import Untrusted

MIN_WIDTH = 520
"""Wide enough that the summary's values read on a line or two, not wrapped word by word."""


class StartLoopDialog(QDialog):
    """Shows a `StartSummary`; Start (the default button, so Enter starts) calls back with "remember"."""

    def __init__(
        self,
        summary: StartSummary,
        on_start: Callable[[bool], None],
        parent: QWidget | None = None,
        untrusted: Untrusted | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Start the loop?")
        self.setMinimumWidth(MIN_WIDTH)
        self.summary = summary
        self._on_start = on_start
        heading = (
            "The loop will run agent sessions one after another and may spend money on the model."
            if summary.costs_money
            else "The loop will run rehearsed sessions: no model is asked and nothing is spent."
        )
        form = QFormLayout()
        self.values: dict[str, QLabel] = {}
        for name, text in summary.lines():
            value = label(text, wrap=True, selectable=True)
            value.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)  # level with its name
            self.values[name] = value
            form.addRow(f"{name}:", value)
        self.remember = QCheckBox("Don't ask again for this project")
        self.remember.setToolTip("Kept in this computer's settings; Start then runs at once")
        buttons, self.start_button = action_buttons(self, "Start")
        layout = QVBoxLayout(self)
        layout.addWidget(label(heading, wrap=True))
        layout.addLayout(form)
        self.warning: QLabel | None = None
        if untrusted is not None:
            self.warning = label(untrusted_warning(untrusted), wrap=True, selectable=True)
            self.warning.setObjectName("untrustedCommand")
            layout.addWidget(self.warning)
            self.start_button.setText("Trust and start")
        layout.addWidget(self.remember)
        layout.addWidget(buttons)
        self.accepted.connect(lambda: self._on_start(self.remember.isChecked()))


def untrusted_warning(found: Untrusted) -> str:
    """The warning over a program that came with the project folder and was never allowed here."""
    named = "\n".join(f"({item.source}, {item.setting}): {item.command}" for item in (found, *found.also))
    return (
        f"Warning: this program came with {found.origins}, not from you: {named}\n"
        "Starting runs it on this computer with your rights. Start only if you trust it; "
        "this computer then remembers it for this project, and asks again if it changes."
    )
