"""A pane still to come: its heading and an empty state that says what it will do and what to do now."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.empty_state import EmptyState


class PlaceholderPane(QWidget):
    """A heading over an empty state."""

    def __init__(
        self, heading: str, icon_name: str, title: str, text: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.heading = label(heading, name="heading")
        self.empty = EmptyState(icon_name, title, text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 16, 20, 12)
        layout.addWidget(self.heading)
        layout.addWidget(self.empty, 1)

    def refresh_style(self) -> None:
        """Redraw in the current palette."""
        self.empty.refresh_style()


def loop_pane() -> PlaceholderPane:
    """The Loop pane, until the loop runner is wired in."""
    return PlaceholderPane(
        "Loop",
        "loop",
        "The loop is not running",
        "Here you will start, pause and stop the loop, choose the agent and its limits, and watch the "
        "current session live. Until then, answer questions and approve suggestions in the Inbox: the "
        "loop picks the work up when it runs.",
    )


def features_pane() -> PlaceholderPane:
    """The Features pane, until its editor is built."""
    return PlaceholderPane(
        "Features",
        "features",
        "Feature editing comes next",
        "Features, their context files and learnings will be edited here. Meanwhile the Tasks pane "
        "filters by feature and the Dashboard shows each feature's progress.",
    )


def disciplines_pane() -> PlaceholderPane:
    """The Disciplines pane, until its tool matrix is built."""
    return PlaceholderPane(
        "Disciplines",
        "disciplines",
        "The tool matrix comes next",
        "Each discipline's prompt, extra MCP servers and the recipe × tool matrix will be edited here. "
        "Meanwhile the Tasks pane filters by discipline.",
    )
