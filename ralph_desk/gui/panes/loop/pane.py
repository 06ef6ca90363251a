"""The Loop pane: its state and buttons, the settings, the live session and the session history."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QSplitter, QVBoxLayout, QWidget

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui import theme
from ralph_desk.gui.models.stream import StreamLine
from ralph_desk.gui.panes.loop.dry_run import PreviewDialog
from ralph_desk.gui.panes.loop.history import HistoryView
from ralph_desk.gui.panes.loop.running import RunningRow
from ralph_desk.gui.panes.loop.sessions import RunningSessionsView
from ralph_desk.gui.panes.loop.settings_form import LoopSettingsForm
from ralph_desk.gui.panes.loop.state import BUTTONS, COLORS, LoopView, Phase
from ralph_desk.gui.panes.loop.stream import StreamView
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.layout import pane_layout, side_by_side
from ralph_desk.gui.widgets.pill import Pill
from ralph_desk.loop.preview import SessionPreview

SETTINGS_WIDTH = 360


class LoopPane(QWidget):
    """Start, pause, resume and stop the loop; watch it. Widgets only show and ask."""

    sig_start_requested = Signal()
    """Start the loop with the settings in the form (saving them first)."""
    sig_pause_requested = Signal()
    """Hold the loop after the current session."""
    sig_resume_requested = Signal()
    """Continue a paused loop."""
    sig_stop_requested = Signal()
    """End the current session (not counted as stuck) and stop the loop."""
    sig_preview_requested = Signal()
    """Show what the next session would get."""
    sig_save_settings_requested = Signal(object)
    """Save these edited settings (a dict of config.json keys to their new values)."""
    sig_open_transcript_requested = Signal(str)
    """Open this session transcript."""
    sig_show_transcript_requested = Signal(str)
    """Show this session transcript's stream in the pane."""
    sig_follow_requested = Signal(str)
    """Show this running session's live stream."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = LoopView()
        self.preview_dialog: PreviewDialog | None = None
        self.settings = LoopSettingsForm()
        self.stream = StreamView()
        self.sessions = RunningSessionsView(self.stream)
        self.history = HistoryView()
        self.state = Pill()
        self.detail = label(wrap=True, selectable=True)
        self.figures = label(name="muted")
        self.start = button("Start", "play", "Start the loop with these settings (saved first)", primary=True)
        self.pause = button("Pause", "pause", "Hold the loop once the current session ends")
        self.resume = button("Resume", "play", "Continue the paused loop")
        self.stop = button("Stop", "stop", "End the current session (not counted as stuck) and stop the loop")
        self.preview = button(
            "Dry run…", "preview", "Show the next session's prompt and tools without running it"
        )
        self.start.clicked.connect(self.sig_start_requested)
        self.pause.clicked.connect(self.sig_pause_requested)
        self.resume.clicked.connect(self.sig_resume_requested)
        self.stop.clicked.connect(self.sig_stop_requested)
        self.preview.clicked.connect(self.sig_preview_requested)
        self.settings.sig_save_requested.connect(self.sig_save_settings_requested)
        self.history.sig_open_transcript_requested.connect(self.sig_open_transcript_requested)
        self.history.sig_show_transcript_requested.connect(self.sig_show_transcript_requested)
        self.sessions.sig_follow_requested.connect(self.sig_follow_requested)
        # At a glance the cards take the history's room too.
        self.sessions.sig_glance_toggled.connect(lambda glance: self.history.setVisible(not glance))
        self.splitter = side_by_side(self.settings, self._watch_area(), (0, 1), [SETTINGS_WIDTH, 840])
        pane_layout(self, self._top(), self._controls(), self.splitter)
        self.show_view(self.view)

    def _top(self) -> QHBoxLayout:
        top = QHBoxLayout()
        top.setSpacing(10)
        top.addWidget(label("Loop", name="heading"))
        top.addWidget(self.state)
        top.addWidget(self.detail, 1)
        return top

    def _controls(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setSpacing(6)
        for widget in (self.start, self.pause, self.resume, self.stop):
            row.addWidget(widget)
        row.addSpacing(12)
        row.addWidget(self.figures, 1)
        row.addWidget(self.preview)
        return row

    def _watch_area(self) -> QWidget:
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.sessions)
        splitter.addWidget(self.history)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.addWidget(splitter)
        return holder

    # --- showing ------------------------------------------------------------------------------

    def show_view(self, view: LoopView) -> None:
        """Show the loop's state, what it does, its figures, and the buttons that state allows."""
        self.view = view
        color = TaskStatus.DONE if view.all_done else COLORS[view.phase]
        self.state.set_pill(view.label, theme.status_color(color))
        self.state.setToolTip(view.reason or view.label)
        self.detail.setText(view.detail)
        self.figures.setText(view.figures)
        buttons = BUTTONS[view.phase]
        self.start.setEnabled(buttons.start)
        self.pause.setEnabled(buttons.pause)
        self.resume.setEnabled(buttons.resume)
        self.stop.setEnabled(buttons.stop)
        self.settings.setEnabled(view.phase not in (Phase.STARTING, Phase.STOPPING))

    @property
    def phase(self) -> Phase:
        """The phase shown."""
        return self.view.phase

    def add_line(self, line: StreamLine) -> None:
        """Add a line to the live view."""
        self.stream.add(line)

    def show_running(self, rows: Sequence[RunningRow], followed: str | None) -> None:
        """Show the running sessions, the one the stream follows marked."""
        self.sessions.show_rows(rows, followed)

    def show_preview(self, preview: SessionPreview | None, task_title: str) -> None:
        """Open the dry-run dialog."""
        dialog = PreviewDialog(preview, task_title, self)
        self.preview_dialog = dialog
        dialog.open()

    def refresh_style(self) -> None:
        """Redraw colours after the palette changed."""
        self.show_view(self.view)
        self.history.model.refresh_all()
        self.stream.model.refresh_all()
        self.sessions.refresh_style()
