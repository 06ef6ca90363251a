"""The checks a session's done runs, in its live view: which check runs, its output as it streams, the result.

A check can print thousands of lines a second. Its output is gathered (`gui/coalesce.py`) and shown a few
times a second in a bounded monospace view, never as lines of the session's stream (whose rows it would
push out, each laid out on its own).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui import theme
from ralph_desk.gui.coalesce import TextFeed
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.output import OutputView

OUTPUT_LINES = 1_000
OUTPUT_HEIGHT = 160


class ChecksPanel(QWidget):
    """The running check's name and state over its streaming output; hidden until a session's checks run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names: list[str] = []
        self.current = ""
        self.active = False
        self.state = label(name="subheading")
        self.detail = label(name="muted")
        self.output = OutputView(OUTPUT_LINES)
        self.output.setObjectName("liveCheckOutput")
        self.output.setFixedHeight(OUTPUT_HEIGHT)
        self.feed = TextFeed(self.output.append_text, parent=self)
        top = QHBoxLayout()
        top.addWidget(self.state)
        top.addWidget(self.detail, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.output)
        self.hide()

    def started(self, names: Sequence[str]) -> None:
        """The session's checks started (these, in order)."""
        self.names = list(names)
        self.current = ""
        self.active = True
        self.feed.clear()
        self.output.show_text("")
        self._say("⟳ Running the checks", TaskStatus.IN_PROGRESS, ", ".join(self.names))
        self.show()

    def add_output(self, check: str, text: str) -> None:
        """More of a check's output (gathered, shown a few times a second)."""
        if not self.active:
            self.started([check])
        if check and check != self.current:
            self.current = check
            self.feed.add(f"── {check} ──\n")
            rest = self.names[self.names.index(check) + 1 :] if check in self.names else []
            following = f"next: {', '.join(rest)}" if rest else ""
            self._say(f"⟳ Running {check}", TaskStatus.IN_PROGRESS, following)
        self.feed.add(text)

    def ended(self, passed: bool, summary: str) -> None:
        """The checks ended: their result stays shown over their output."""
        self.feed.flush()
        self.active = False
        shown = summary.removeprefix("checks: ")
        if passed:
            self._say("✓ Checks passed", TaskStatus.DONE, shown)
        else:
            self._say("✗ Checks failed", TaskStatus.FAILED, shown)
        self.show()

    def reset(self) -> None:
        """Another session is shown: its checks have not run (in sight)."""
        self.feed.clear()
        self.active = False
        self.output.show_text("")
        self.hide()

    def text(self) -> str:
        """The output shown."""
        return self.output.text()

    def _say(self, state: str, status: TaskStatus, detail: str) -> None:
        self.state.setText(state)
        theme.style(self.state, f"color: {theme.status_color(status).name()};")
        self.detail.setText(detail)
