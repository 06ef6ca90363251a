"""The live view of the current session: one line per event, following the end unless scrolled up."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSize, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QListView,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui import fmt
from ralph_desk.gui.models.stream import StreamLine, StreamModel, line_of
from ralph_desk.gui.panes.loop.checks import ChecksPanel
from ralph_desk.gui.panes.loop.running import SessionFigures
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.loop.model import LiveEvent

AT_END_SLACK = 4
CLOCK_MS = 1000
KEPT_SIZES = 20_000  # measured lines kept (a few widths of a full view); past it they are measured again


class MeasuredOnce(QStyledItemDelegate):
    """Measures each line once per width: the list lays every row out again at each insertion, and measuring
    every wrapped row anew made one live event cost ~0.2 ms per line shown (0.7 s with 4,000 lines)."""

    def __init__(self, model: StreamModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.sizes: dict[tuple[int, StreamLine], QSize] = {}
        model.modelReset.connect(self.forget)
        model.dataChanged.connect(self.forget)  # the palette or the fonts changed

    def forget(self, *_changed: object) -> None:
        """Measure every line again."""
        self.sizes.clear()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """The line's size at the option's width, measured the first time it is asked for."""
        lines, row = self.model.lines, index.row()
        if not 0 <= row < len(lines):
            return super().sizeHint(option, index)
        key = (option.rect.width(), lines[row])
        size = self.sizes.get(key)
        if size is None:
            if len(self.sizes) >= KEPT_SIZES:
                self.sizes.clear()
            size = self.sizes[key] = super().sizeHint(option, index)
        return size


class StreamView(QWidget):
    """The session's title and running figures over its lines; the view follows new lines at the end."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = StreamModel(parent=self)
        self.figures = SessionFigures()
        self.list = QListView()
        self.list.setModel(self.model)
        self.list.setItemDelegate(MeasuredOnce(self.model, self.list))
        self.list.setWordWrap(True)
        self.list.setUniformItemSizes(False)
        self.list.setAlternatingRowColors(True)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setIconSize(QSize(16, 16))
        self.list.setSpacing(1)
        self.following = True
        self.list.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.title = label(name="subheading", wrap=True)
        self.counts = label(name="muted")
        self.note = label(name="muted", wrap=True)
        self.note.hide()
        self.empty = EmptyState(
            "session",
            "No session yet",
            "Start the loop: each agent session appears here as it happens — what it says, every tool it "
            "calls with the result, and what it costs.",
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.list)
        self.stack.addWidget(self.empty)
        self.stack.setCurrentWidget(self.empty)
        self.checks = ChecksPanel()
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.counts)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.note)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.checks)
        self.clock = QTimer(self)
        self.clock.setInterval(CLOCK_MS)
        self.clock.timeout.connect(self._show_figures)
        self._show_figures()

    def start_session(
        self,
        title: str,
        session_id: str,
        started: datetime | None = None,
        figures: SessionFigures | None = None,
        lines: Sequence[StreamLine] = (),
    ) -> None:
        """Show a session from its first lines: a live one (`started` given) shows its elapsed time.

        `figures` are the running session's own (counted as its events come), else the view counts anew.
        """
        self.model.set_lines(lines)
        self.checks.reset()
        self.figures = figures or SessionFigures(title=title, session_id=session_id, started=started)
        self.following = True
        self.note.setText("")
        self.note.hide()
        self.stack.setCurrentWidget(self.list if lines else self.empty)
        if lines:
            self.list.scrollToBottom()
        if started is not None and self.figures.outcome is None:
            self.clock.start()
        else:
            self.clock.stop()
        self._show_figures()

    def end_session(self, note: str = "") -> None:
        """The live session ended: the clock stops; `note` says what the view does now."""
        self.clock.stop()
        self.figures.started = None
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self._show_figures()

    def show_event(self, event: LiveEvent) -> None:
        """Count an event of the session in its figures and show its line."""
        self.figures.take(event)
        self.add(line_of(event))

    def show_events(self, events: Sequence[LiveEvent]) -> None:
        """Count and show many events at once: one insertion, so the view lays out and scrolls once."""
        for event in events:
            self.figures.take(event)
        self.add_lines([line_of(event) for event in events])

    def add(self, line: StreamLine) -> None:
        """Show one more line, and the figures as they are now."""
        self.add_lines((line,))

    def add_lines(self, lines: Sequence[StreamLine]) -> None:
        """Show more lines, and the figures as they are now."""
        if not lines:
            return
        self.model.extend(lines)
        self.stack.setCurrentWidget(self.list)
        self._show_figures()

    def _show_figures(self) -> None:
        figures = self.figures
        self.title.setText(figures.title or "Live session")
        self.title.setToolTip(figures.session_id)
        if not figures.session_id:
            self.counts.setText("")
            return
        parts = [fmt.plural(figures.tool_calls, "tool call"), fmt.plural(figures.messages, "message")]
        if figures.turns:
            parts.append(fmt.plural(figures.turns, "turn"))
        parts.append(fmt.money(figures.cost_usd))
        if figures.started is not None:
            parts.append(f"running {fmt.duration(figures.started, datetime.now(UTC))}")
        self.counts.setText(" · ".join(parts))

    def at_end(self) -> bool:
        """Whether the view shows the last line."""
        bar = self.list.verticalScrollBar()
        return bar.value() >= bar.maximum() - AT_END_SLACK

    def _on_scrolled(self, _value: int) -> None:
        self.following = self.at_end()

    def _on_rows_inserted(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        if self.following:
            self.list.scrollToBottom()
