"""The checks strip of a task in review (DESIGN §13): each configured check's latest result, its output, and
"Run checks again"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from ralph_desk.domain.checks import CheckRun, CheckStatus
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui import theme
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.output import OutputView

OUTPUT_HEIGHT = 150
OUTPUT_MIN_HEIGHT = 64
OUTPUT_LEAST_HEIGHT = 40
"""Three lines of output: what it keeps on a small screen."""
OUTPUT_SHARE = 0.2
"""The most of the review's height a check's output takes (the diff is what the person reviews)."""
OUTPUT_LINES = 2_000

MARKS: dict[CheckStatus | None, str] = {
    None: "–",
    CheckStatus.RUNNING: "⟳",
    CheckStatus.PASSED: "✓",
    CheckStatus.FAILED: "✗",
    CheckStatus.TIMED_OUT: "✗",
    CheckStatus.ERROR: "✗",
    CheckStatus.STOPPED: "–",
}
WORDS: dict[CheckStatus | None, str] = {
    None: "not run",
    CheckStatus.RUNNING: "running",
    CheckStatus.PASSED: "passed",
    CheckStatus.FAILED: "failed",
    CheckStatus.TIMED_OUT: "timed out",
    CheckStatus.ERROR: "could not start",
    CheckStatus.STOPPED: "stopped",
}


@dataclass(frozen=True)
class CheckState:
    """A configured check and its latest run on the task's own work (None: never run)."""

    name: str
    required: bool
    run: CheckRun | None = None

    @property
    def status(self) -> CheckStatus | None:
        """The latest run's status (None: not run)."""
        return self.run.status if self.run is not None else None

    def text(self) -> str:
        """The check's mark, name and time: `✓ tests 2.1 s`."""
        shown = f"{MARKS[self.status]} {self.name}"
        run = self.run
        if run is not None and run.finished and run.duration_s is not None:
            shown += f" {run.duration_s:.1f} s"
        return shown

    def tip(self) -> str:
        """What the mark says, in words."""
        kind = "required" if self.required else "advisory"
        said = f"{self.name} ({kind}): {WORDS[self.status]}"
        run = self.run
        if run is not None:
            if run.exit_code is not None and run.failing:
                said += f", exit code {run.exit_code}"
            said += f"\n{run.command}\nClick to see its output"
        return said


def _color(status: CheckStatus | None) -> str:
    if status is CheckStatus.PASSED:
        return theme.status_color(TaskStatus.DONE).name()
    if status is CheckStatus.RUNNING:
        return theme.status_color(TaskStatus.IN_PROGRESS).name()
    if status in (CheckStatus.FAILED, CheckStatus.TIMED_OUT, CheckStatus.ERROR):
        return theme.status_color(TaskStatus.FAILED).name()
    return theme.muted().name()


class ChecksStrip(QWidget):
    """One button per configured check; a click shows its output below; "Run checks again" asks for a run."""

    sig_output_requested = Signal(int, int)
    """Show the output of this task's check run (by id)."""
    sig_run_requested = Signal(int)
    """Run the configured checks again in this task's worktree."""
    sig_stop_requested = Signal()
    """Stop the checks running again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.task_id: int | None = None
        self.states: list[CheckState] = []
        self.running = False
        self.shown_name: str | None = None
        """The check whose output is shown (None: the live output of a run, or nothing)."""
        self.buttons: list[QToolButton] = []
        self.row = QHBoxLayout()
        self.row.setSpacing(4)
        self.heading = label("Checks", name="subheading")
        self.status = label(name="muted")
        self.run_again = button(
            "Run checks again", "refresh", "Run the project's checks in the task's worktree"
        )
        self.stop = button("Stop", "stop", "Stop the checks running")
        self.stop.hide()
        self.output_title = label(name="muted", selectable=True)
        # A long command must not widen the tab: the title takes the width it is given.
        self.output_title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.output = OutputView(OUTPUT_LINES)
        self.output.setMinimumHeight(OUTPUT_LEAST_HEIGHT)
        self.output.setMaximumHeight(OUTPUT_HEIGHT)
        self.output.setObjectName("checkOutput")
        self.output_title.hide()
        self.output.hide()
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.heading)
        top.addLayout(self.row)
        top.addWidget(self.status, 1)
        top.addWidget(self.run_again)
        top.addWidget(self.stop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.output_title)
        layout.addWidget(self.output)
        self.run_again.clicked.connect(self._ask_run)
        self.stop.clicked.connect(self.sig_stop_requested)
        self.hide()

    def show_checks(self, task_id: int, states: Sequence[CheckState]) -> None:
        """Show the checks of the task (hidden when the project configures none)."""
        if task_id != self.task_id:
            self.task_id = task_id
            self.shown_name = None
            self.output.clear()
            self.output.hide()
            self.output_title.hide()
        self.states = list(states)
        self.setVisible(bool(states))
        while len(self.buttons) > len(states):
            self.buttons.pop().deleteLater()
        while len(self.buttons) < len(states):
            index = len(self.buttons)
            widget = QToolButton()
            widget.setAutoRaise(True)
            widget.setCheckable(True)
            widget.clicked.connect(lambda _=False, index=index: self._choose(index))
            self.row.addWidget(widget)
            self.buttons.append(widget)
        for widget, state in zip(self.buttons, states, strict=True):
            widget.setText(state.text())
            widget.setToolTip(state.tip())
            widget.setChecked(state.name == self.shown_name)
            sheet = f"QToolButton {{ color: {_color(state.status)}; font-weight: bold; }}"
            if widget.styleSheet() != sheet:  # a new sheet polishes the button again: only when it changed
                theme.style(widget, sheet)
        failing = [state.name for state in states if state.required and state.run and state.run.failing]
        if not self.running:
            self.status.setText(f"required failing: {', '.join(failing)}" if failing else "")
        self._refresh_selected()

    def fit_output(self, height: int) -> None:
        """Let the output take its share of a review this tall; with less room it gives way to three lines.

        A fixed height would be a minimum: the review's content growing (signals, checks) then grew the
        window past a small screen."""
        self.output.setMaximumHeight(max(OUTPUT_MIN_HEIGHT, min(OUTPUT_HEIGHT, int(height * OUTPUT_SHARE))))

    def _choose(self, index: int) -> None:
        state = self.states[index]
        if state.name == self.shown_name and self.output.isVisible():  # clicked again: put it away
            self.shown_name = None
            self.buttons[index].setChecked(False)
            self.output.hide()
            self.output_title.hide()
            return
        self.shown_name = state.name
        for number, widget in enumerate(self.buttons):
            widget.setChecked(number == index)
        self.output_title.show()
        self.output.show()
        if state.run is None or self.task_id is None:
            self.output_title.setText(f"{state.name}: not run yet")
            self.output.show_text("")
            return
        self.output_title.setText(f"{state.name}: reading its output…")
        self.sig_output_requested.emit(self.task_id, state.run.id)

    def _refresh_selected(self) -> None:
        """A check shown whose run changed (it ended) is read again."""
        for state in self.states:
            run = state.run
            if state.name != self.shown_name or run is None or self.task_id is None:
                continue
            if self.output_title.property("run") != (run.id, run.status.value):
                self.output_title.setProperty("run", (run.id, run.status.value))
                self.sig_output_requested.emit(self.task_id, run.id)

    def show_output(self, task_id: int, run: CheckRun, log_end: str) -> None:
        """Show a run's output: the end of its full log (its recorded tail when the log cannot be read)."""
        if task_id != self.task_id or run.name != self.shown_name:
            return
        self.output_title.setProperty("run", (run.id, run.status.value))
        how = WORDS[run.status] + (f", exit code {run.exit_code}" if run.failing and run.exit_code else "")
        where = "the end of its full output" if log_end else "the end of its output, as recorded"
        self.output_title.setText(f"{run.name}: {how} · {where}")
        self.output_title.setToolTip(f"{run.command}\n{run.log_path or ''}".strip())
        self.output.show_text(log_end or run.tail)

    # --- running again --------------------------------------------------------------------------

    def _ask_run(self) -> None:
        if self.task_id is not None and not self.running:
            self.sig_run_requested.emit(self.task_id)

    def set_running(self, task_id: int, running: bool) -> None:
        """Say that the checks run again for the task (their output follows below), or ended."""
        if task_id != self.task_id:
            return
        self.running = running
        self.run_again.setEnabled(not running)
        self.stop.setVisible(running)
        self.stop.setEnabled(running)
        if running:
            self.shown_name = None
            for widget in self.buttons:
                widget.setChecked(False)
            self.status.setText("⟳ running the checks again…")
            self.output_title.setText("Running the checks in the task's worktree:")
            self.output_title.show()
            self.output.show_text("")
            self.output.show()
        else:
            self.status.setText("")

    def append_output(self, task_id: int, text: str) -> None:
        """Show more of the live output of the checks running again."""
        if task_id == self.task_id and self.shown_name is None:
            self.output.append_text(text)
