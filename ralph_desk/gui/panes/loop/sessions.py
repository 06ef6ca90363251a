"""The running sessions: a table (pick the one the stream follows) and a glance view of them all as cards."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QMouseEvent
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QToolButton, QVBoxLayout, QWidget

from ralph_desk.gui import fmt
from ralph_desk.gui.models.running import AGENT, COST, ELAPSED, TASK, TURNS, RunningTableModel, elapsed
from ralph_desk.gui.panes.loop.running import RunningRow
from ralph_desk.gui.widgets.card import CardFrame
from ralph_desk.gui.widgets.common import label, mode_button
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.flow import FlowLayout
from ralph_desk.gui.widgets.layout import scroller, stacked
from ralph_desk.gui.widgets.tables import record_table

CLOCK_MS = 1000
SHOWN_ROWS = 4  # the table's height; more sessions scroll
CARD_WIDTH = 300
COLUMN_WIDTHS = {AGENT: 90, ELAPSED: 84, TURNS: 54, COST: 64}


LIVE_LEAST_HEIGHT = 80
"""The least height of the live area (the stream, or the cards): on a small screen it scrolls."""


class RunningTable(QWidget):
    """The running sessions, oldest first, with their elapsed time ticking; a click follows one."""

    sig_follow_requested = Signal(str)
    """Show this running session's stream."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = RunningTableModel(self)
        self.table = record_table(self.model)
        self.table.setObjectName("runningSessions")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TASK, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        for column, width in COLUMN_WIDTHS.items():
            self.table.setColumnWidth(column, width)
        self.table.setToolTip("The sessions running now; pick one to show its live stream below")
        self._syncing = False
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        self._fit()

    def show_rows(self, rows: Sequence[RunningRow], followed: str | None) -> None:
        """Show these sessions and mark the one the stream follows (the person's pick is kept)."""
        # Rows going move Qt's current row to a neighbour: not the person's pick, so not a follow request.
        self._syncing = True
        try:
            self.model.set_items(rows)
            row = self.model.row_of(followed) if followed else None
            selection = self.table.selectionModel()
            if row is None:
                selection.clear()
            elif self.table.currentIndex().row() != row:
                flags = QItemSelectionModel.SelectionFlag
                selection.setCurrentIndex(self.model.index(row, TASK), flags.ClearAndSelect | flags.Rows)
        finally:
            self._syncing = False
        self._fit()

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._syncing and current.isValid():
            self.sig_follow_requested.emit(self.model.record(current.row()).session_id)

    def _fit(self) -> None:
        rows = min(max(self.model.rowCount(), 1), SHOWN_ROWS)
        height = (
            self.table.horizontalHeader().sizeHint().height()
            + rows * self.table.verticalHeader().defaultSectionSize()
        )
        self.table.setFixedHeight(height + 2 * self.table.frameWidth())


class SessionCard(CardFrame):
    """One running session at a glance: its task, state, latest action and figures; a click follows it."""

    sig_follow_requested = Signal(str)
    """Show this session's stream."""

    def __init__(self, row: RunningRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session_id = row.session_id
        self.setFixedWidth(CARD_WIDTH)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.title = label(name="subheading", wrap=True)
        self.state = label(name="muted")
        self.action = label(wrap=True)
        self.figures = label(name="muted")
        self.follow = QToolButton()
        self.follow.setText("Show stream")
        self.follow.setAutoRaise(True)
        self.follow.setToolTip("Show this session's live stream")
        self.follow.clicked.connect(lambda: self.sig_follow_requested.emit(self.session_id))
        bottom = QHBoxLayout()
        bottom.addWidget(self.figures, 1)
        bottom.addWidget(self.follow)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 8)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.state)
        layout.addWidget(self.action)
        layout.addLayout(bottom)
        self.row = row
        self.show_row(row)

    def show_row(self, row: RunningRow) -> None:
        """Show the session as it is now."""
        self.row = row
        self.title.setText(row.title)
        self.title.setToolTip(row.session_id)
        self.state.setText(f"{row.state} · {row.agent}" if row.agent else row.state)
        self.action.setText(row.last_action or "starting…")
        self.tick()

    def show_ended(self) -> None:
        """The session ended: the card stays a moment, greyed, so that the others do not move."""
        self.state.setText("ended")
        self.setEnabled(False)

    def tick(self) -> None:
        """Show the elapsed time as of now."""
        row = self.row
        parts = [elapsed(row), fmt.plural(row.turns, "turn"), fmt.money(row.cost_usd)]
        self.figures.setText(" · ".join(parts))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click follows the session."""
        if event.button() == Qt.MouseButton.LeftButton:
            self.sig_follow_requested.emit(self.session_id)
        super().mouseReleaseEvent(event)


class GlanceView(QWidget):
    """Every running session as a card, side by side; the followed one outlined."""

    sig_follow_requested = Signal(str)
    """Show this session's stream (in the single-stream view)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cards: dict[str, SessionCard] = {}
        self.ended: set[str] = set()
        """Sessions that ended while the pointer was over the cards: their cards go when it leaves."""
        self.body = QWidget()
        self.flow = FlowLayout(self.body, spacing=10)
        self.empty = EmptyState(
            "session",
            "No session runs now",
            "While the loop runs, each of its sessions is shown here side by side: its task, what it did "
            "last, how long it has run, its turns and its cost.",
        )
        self.stack = stacked(scroller(self.body), self.empty)
        self.stack.setCurrentWidget(self.empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)

    def show_rows(self, rows: Sequence[RunningRow], followed: str | None) -> None:
        """One card per session, in start order. A card whose session ended goes, but while the pointer is
        over the cards it stays, marked ended, until the pointer leaves: no card moves under the pointer."""
        wanted = {row.session_id for row in rows}
        pointed = self.pointer_inside()
        for key in [key for key in self.cards if key not in wanted]:
            if pointed:
                self.cards[key].show_ended()
                self.ended.add(key)
            else:
                self._drop(key)
        for row in rows:
            if row.session_id in self.ended:
                self.ended.discard(row.session_id)
                self.cards[row.session_id].setEnabled(True)
            card = self.cards.get(row.session_id) or self._add_card(row)
            if card.row != row:
                card.show_row(row)
            card.set_highlighted(row.session_id == followed)
        self.stack.setCurrentIndex(0 if self.cards else 1)

    def pointer_inside(self) -> bool:
        """Whether the pointer is over the cards (then they keep their places)."""
        return self.isVisible() and self.rect().contains(self.mapFromGlobal(QCursor.pos()))

    def leaveEvent(self, event: QEvent) -> None:
        """The pointer left: the cards of ended sessions go now."""
        for key in list(self.ended):
            self._drop(key)
        self.stack.setCurrentIndex(0 if self.cards else 1)
        super().leaveEvent(event)

    def _drop(self, key: str) -> None:
        self.ended.discard(key)
        card = self.cards.pop(key)
        self.flow.removeWidget(card)
        card.deleteLater()

    def _add_card(self, row: RunningRow) -> SessionCard:
        card = SessionCard(row)
        card.sig_follow_requested.connect(self.sig_follow_requested)
        self.cards[row.session_id] = card
        self.flow.addWidget(card)
        return card

    def tick(self) -> None:
        """The clock moved on."""
        for card in self.cards.values():
            card.tick()


class RunningSessionsView(QWidget):
    """The running sessions' table over the live area, which shows one stream or every session at a glance."""

    sig_follow_requested = Signal(str)
    """Show this running session's stream."""
    sig_glance_toggled = Signal(bool)
    """Every session is shown at a glance now (True), or one stream (False)."""

    def __init__(self, stream: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = RunningTable()
        self.glance = GlanceView()
        self.summary = label(name="muted", wrap=True)
        self.one = mode_button("One stream", "The live stream of the session picked in the table")
        self.all = mode_button("All at once", "Every running session at a glance")
        for widget in (self.one, self.all):
            widget.setAutoExclusive(True)
        self.one.setChecked(True)
        self.one.clicked.connect(lambda: self.show_glance(False))
        self.all.clicked.connect(lambda: self.show_glance(True))
        self.stream = stream
        self.live = stacked(stream, self.glance)
        self.live.setMinimumHeight(LIVE_LEAST_HEIGHT)  # the stream and the cards scroll; the window stays
        self.table.sig_follow_requested.connect(self.sig_follow_requested)
        self.glance.sig_follow_requested.connect(self._follow_from_glance)
        self.clock = QTimer(self)
        self.clock.setInterval(CLOCK_MS)
        self.clock.timeout.connect(self.tick)
        top = QHBoxLayout()
        top.addWidget(label("Running sessions", name="subheading"))
        top.addWidget(self.summary, 1)
        top.addWidget(self.one)
        top.addWidget(self.all)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.table)
        layout.addWidget(self.live, 1)
        self.rows: list[RunningRow] = []
        self.show_rows([], None)

    @property
    def glancing(self) -> bool:
        """Whether every session is shown at a glance (else one stream)."""
        return self.live.currentWidget() is self.glance

    def show_glance(self, glance: bool) -> None:
        """Show every session at a glance, or the one stream."""
        (self.all if glance else self.one).setChecked(True)
        self.live.setCurrentWidget(self.glance if glance else self.stream)
        self.table.setVisible(bool(self.rows) and not glance)  # the cards show what the table would
        self.sig_glance_toggled.emit(glance)

    def show_rows(self, rows: Sequence[RunningRow], followed: str | None) -> None:
        """Show the running sessions; the clock ticks while any runs."""
        self.rows = list(rows)
        self.table.show_rows(rows, followed)
        self.table.setVisible(bool(rows) and not self.glancing)
        self.glance.show_rows(rows, followed)
        self._chain()
        if rows and not self.clock.isActive():
            self.clock.start()
        elif not rows:
            self.clock.stop()
        self._summarise()

    def _chain(self) -> None:
        """Tab goes from the mode buttons to the table, then through the cards in reading order."""
        before: QWidget = self.one
        for widget in (self.all, self.table.table, *(card.follow for card in self.glance.cards.values())):
            QWidget.setTabOrder(before, widget)
            before = widget

    def tick(self) -> None:
        """The clock moved on: elapsed times read anew."""
        self.table.model.tick()
        self.glance.tick()

    def _summarise(self) -> None:
        rows = self.rows
        if not rows:
            self.summary.setText("none now")
            return
        self.summary.setText(f"{len(rows)} running · {fmt.money(sum(row.cost_usd for row in rows))} so far")

    def _follow_from_glance(self, session_id: str) -> None:
        self.sig_follow_requested.emit(session_id)
        self.show_glance(False)

    def refresh_style(self) -> None:
        """Redraw after the palette changed."""
        self.table.model.refresh_all()
        self.glance.empty.refresh_style()
        for card in self.glance.cards.values():
            card.update()
