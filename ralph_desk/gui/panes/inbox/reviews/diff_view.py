"""A diff to review: the changed files with their +/− counts beside the lines, unified or side by side.

Clicking a line opens a comment box under the diff (side by side, the left half of a changed row is its
removed line); clicking one of the human's unsent comments opens it to edit or delete. The view only asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent, QResizeEvent, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.diffs import DiffLine, FileChange, FileDiff, Gap
from ralph_desk.domain.enums import DiffSide
from ralph_desk.domain.reviews import ReviewPin, where
from ralph_desk.gui import icons, theme
from ralph_desk.gui.models.base import Column, RecordTableModel
from ralph_desk.gui.panes.inbox.reviews.diff_model import (
    ADDED_COLOR,
    REMOVED_COLOR,
    ROW_ROLE,
    DiffDelegate,
    DiffModel,
)
from ralph_desk.gui.panes.inbox.reviews.rows import (
    DiffLayout,
    DiffRow,
    Expansion,
    LineComment,
    RowKind,
    file_badge,
    file_fingerprint,
    layout,
    line_keys,
    target,
)
from ralph_desk.gui.widgets.common import SendingTextEdit, button, label, mode_button
from ralph_desk.gui.widgets.layout import side_by_side
from ralph_desk.gui.widgets.tables import record_table

WholeLines = dict[tuple[str | None, str | None], dict[int, DiffLine]]
"""Each file's unchanged lines by old line number, by its (old path, new path)."""


@dataclass(frozen=True)
class FileEntry:
    """A changed file as the file list shows it: its place in the diff and its change."""

    number: int
    diff: FileDiff
    viewed: bool = False


def _file_tip(entry: FileEntry) -> str:
    diff = entry.diff
    return f"{diff.title}\n{file_badge(diff)}, {diff.added} added, {diff.removed} removed"


FILE_ICONS = {
    FileChange.ADDED: "add",
    FileChange.DELETED: "remove",
    FileChange.RENAMED: "link",
    FileChange.COPIED: "copy",
    FileChange.MODIFIED: "edit",
}

FILE_COLUMNS: list[Column[FileEntry]] = [
    Column(
        "File",
        lambda entry: entry.diff.title + (" (binary)" if entry.diff.binary else ""),
        sort_key=lambda entry: entry.number,
        tooltip=_file_tip,
        icon=lambda entry: icons.icon(FILE_ICONS[entry.diff.change]),
    ),
    Column(
        "+",
        lambda entry: "—" if entry.diff.binary else str(entry.diff.added),
        sort_key=lambda entry: entry.diff.added,
        align_right=True,
        header_tip="Lines added",
    ),
    Column(
        "−",
        lambda entry: "—" if entry.diff.binary else str(entry.diff.removed),
        sort_key=lambda entry: entry.diff.removed,
        align_right=True,
        header_tip="Lines removed",
    ),
    Column(
        "✓",
        lambda entry: "✓" if entry.viewed else "",
        sort_key=lambda entry: entry.viewed,
        tooltip=lambda entry: "Viewed (click to unmark)" if entry.viewed else "Click to mark it viewed",
        header_tip="Files you marked viewed: a file whose change changes is unmarked",
    ),
]
VIEWED_COLUMN = 3
FILE_NAME_CHARS = 22
"""Characters of a path the file list shows at the least (a longer one is elided in its middle)."""
ALL_LINES = "Show all lines"
CHANGES_ONLY = "Changes only"


class CommentBox(QFrame):
    """Where a line comment is written, or the human's unsent one edited: place, text, buttons."""

    sig_comment_requested = Signal(str, int, str, str)
    """Comment on this file, at this line, with this text, on this side ('new', or 'old': removed)."""
    sig_edit_requested = Signal(int, str)
    """Give this comment (by id) this text."""
    sig_delete_requested = Signal(int)
    """Delete this comment (by id)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.place = label(name="subheading", wrap=True)  # wraps rather than widen the diff column
        self.text = SendingTextEdit("Your comment for the agent (Ctrl+Enter adds it)", lines=3)
        self.add = button("Add comment", "comment", "Keep this comment on the line", primary=True)
        self.delete = button("Delete", "trash", "Delete this comment (it was not sent yet)")
        self.cancel = button("Cancel", "close")
        self.file = ""
        self.line = 0
        self.side = DiffSide.NEW
        self.editing = 0
        """The id of the comment being edited, or 0 for a new one."""
        actions = QHBoxLayout()
        actions.addWidget(self.place, 1)
        actions.addWidget(self.add)
        actions.addWidget(self.delete)
        actions.addWidget(self.cancel)
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 6, 8, 6)
        box.addLayout(actions)
        box.addWidget(self.text)
        self.add.clicked.connect(self._send)
        self.text.sig_send_requested.connect(self._send)
        self.delete.clicked.connect(self._delete)
        self.cancel.clicked.connect(self.hide)
        self.hide()

    def open_at(self, file: str, line: int, side: DiffSide = DiffSide.NEW) -> None:
        """Show the box for a line (of the new file, or a removed one of the old), ready to type."""
        self.file, self.line, self.side, self.editing = file, line, side, 0
        self.place.setText(f"Comment on {where(file, line, side)}")
        self.add.setText("Add comment")
        self.delete.hide()
        self.text.clear()
        self._open()

    def open_edit(self, comment: LineComment) -> None:
        """Show the box with one of the human's unsent comments, to change its text or delete it."""
        self.file, self.line, self.side, self.editing = (
            comment.file or "",
            comment.line or 0,
            comment.side,
            comment.id,
        )
        self.place.setText(f"Your comment on {comment.place}")
        self.add.setText("Save")
        self.delete.show()
        self.text.setPlainText(comment.text)
        self._open()

    def _open(self) -> None:
        self.show()
        self.text.setFocus(Qt.FocusReason.OtherFocusReason)
        self.text.moveCursor(QTextCursor.MoveOperation.End)

    def _send(self) -> None:
        text = self.text.toPlainText().strip()
        if not text:
            self.text.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        if self.editing:
            self.sig_edit_requested.emit(self.editing, text)
        else:
            self.sig_comment_requested.emit(self.file, self.line, text, self.side.value)
        self.text.clear()
        self.hide()

    def _delete(self) -> None:
        if self.editing:
            self.sig_delete_requested.emit(self.editing)
        self.text.clear()
        self.hide()


class LinesView(QTableView):
    """The diff's rows in one column of one row height.

    A table with fixed row heights lays out nothing per row; a list view, even with uniform item
    sizes, asks the model about every row (a second for 50,000 rows from Python).
    """

    def __init__(self, model: DiffModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.delegate = DiffDelegate(model, self)
        self.setItemDelegate(self.delegate)
        self.horizontalHeader().hide()
        rows = self.verticalHeader()
        rows.hide()
        rows.setMinimumSectionSize(1)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.delegate.row_height())
        self.setShowGrid(False)
        self.setWordWrap(False)
        self.setTabKeyNavigation(False)
        self.setCornerButtonEnabled(False)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.wanted_width = 0
        self.tall: dict[int, int] = {}
        """The rows side by side whose lines wrap, and their heights (the others are one line high)."""
        self.pressed_x: int | None = None
        """Where the last click on a row was, across the view (to tell the halves of a side-by-side row)."""
        self.shifted = False
        """Whether Shift was held at the last click or key (a gap then shows all its lines)."""

    def mousePressEvent(self, event: QMouseEvent) -> None:
        """Note where the row was pressed: its left half is the old file when side by side."""
        self.pressed_x = event.position().toPoint().x()
        self.shifted = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        """A second click, as the first (not an activation: a gap clicked twice widens twice, not thrice)."""
        self.mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """A key (Enter) chooses the new side of the current row."""
        self.pressed_x = None
        self.shifted = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        super().keyPressEvent(event)

    def old_half(self, index: QModelIndex) -> bool:
        """Whether the last click on `index` was on its left half, side by side."""
        model = self.model()
        if not isinstance(model, DiffModel) or not model.split or self.pressed_x is None:
            return False
        return self.pressed_x < self.visualRect(index).center().x()

    def fit(self, wanted_width: int) -> None:
        """Make the column this wide, or as wide as the view when that is wider (0: as wide as the view,
        lines wrapped side by side)."""
        self.wanted_width = wanted_width
        self.tall.clear()  # the rows were laid out anew, all of one height
        self.delegate.columns = 0
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the column at least as wide as the view; side by side, wrap the lines at its new width."""
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        if self.horizontalHeader().count() > 0:
            self.horizontalHeader().resizeSection(0, max(self.viewport().width(), self.wanted_width))
        model = self.model()
        if isinstance(model, DiffModel) and model.split:
            self._wrap(model)

    def _wrap(self, model: DiffModel) -> None:
        """Give each row as many lines as its longer side takes, wrapped at the width of a half."""
        before = self.delegate.columns
        if self.delegate.fit_columns(self.viewport().width()) == before and before:
            return
        rows, single = self.verticalHeader(), self.delegate.row_height()
        line = self.delegate.metrics.height()
        tall: dict[int, int] = {}
        for number, row in enumerate(model.layout.rows):
            count = self.delegate.visual_lines(row)
            if count > 1:
                tall[number] = single + (count - 1) * line
        # One update after, not one per row: a diff may wrap thousands (16 µs a row with updates, 0.5 µs off).
        rows.blockSignals(True)
        self.setUpdatesEnabled(False)
        rows.setUpdatesEnabled(False)
        try:
            for number in self.tall.keys() - tall.keys():
                rows.resizeSection(number, single)
            for number, height in tall.items():
                if self.tall.get(number) != height:
                    rows.resizeSection(number, height)
        finally:
            rows.blockSignals(False)
            rows.setUpdatesEnabled(True)
            self.setUpdatesEnabled(True)
        self.tall = tall
        self.updateGeometries()
        self.viewport().update()


class DiffView(QWidget):
    """The files of a diff (with +/− counts) and its lines; a click on a line opens the comment box."""

    sig_comment_requested = Signal(str, int, str, str)
    """Comment on this file, at this line, with this text, on this side ('new', or 'old': removed)."""
    sig_edit_requested = Signal(int, str)
    """Give the human's unsent comment (by id) this text."""
    sig_delete_requested = Signal(int)
    """Delete the human's unsent comment (by id)."""
    sig_viewed_changed = Signal(list)
    """The files marked viewed changed: the fingerprints of those marked now."""
    sig_lines_requested = Signal()
    """Read the whole files of the diff shown, at its commits (for the unchanged lines it leaves out)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.viewed: set[str] = set()
        """The changes marked viewed (file fingerprints): of this diff's files and of others of the task."""
        self.fingerprints: list[str] = []
        self.editable = True
        """Whether pending comments may still be changed (False once the review is decided)."""
        self.files: list[FileDiff] = []
        self.comments: list[LineComment] = []
        self.file_model: RecordTableModel[FileEntry] = RecordTableModel(FILE_COLUMNS, key=lambda e: e.number)
        self.file_table = record_table(self.file_model)
        header = self.file_table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, VIEWED_COLUMN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.file_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # the file's name, at the end, stays
        self.file_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.file_table.setMinimumWidth(self._file_list_width())
        self.model = DiffModel(self)
        self.lines = LinesView(self.model)
        self.delegate = self.lines.delegate
        # Three rows at the least (a scroll area asks for 70 px): a small screen keeps its room for the rest.
        self.file_table.setMinimumHeight(3 * self.delegate.row_height())
        self.lines.setMinimumHeight(3 * self.delegate.row_height())
        self.unified = mode_button("Unified", "One column: removed lines above the added ones")
        self.split = mode_button("Side by side", "The old file on the left, the new one on the right")
        self.modes = QButtonGroup(self)
        self.modes.addButton(self.unified)
        self.modes.addButton(self.split)
        self.unified.setChecked(True)
        self.totals = label(name="muted")
        self.pin: ReviewPin | None = None
        """The commits the diff shown was read between: its unchanged lines come from them, nowhere else."""
        self.expansion = Expansion()
        """The unchanged lines shown beyond the diff's own."""
        self.waiting: tuple[int, Gap | None, bool] | None = None
        """A gap to widen (file, gap, all of it; no gap: every gap, whole) once the whole files are read."""
        self.all_lines = button(ALL_LINES, "add", "Show every unchanged line of the changed files")
        self.mark_viewed = button("Viewed", "approve", "Mark the file chosen on the left as viewed (or not)")
        self.mark_viewed.setCheckable(True)
        self.mark_viewed.setEnabled(False)
        self.comment_box = CommentBox()
        self._build()
        self._connect()

    def _file_list_width(self) -> int:
        """Room for a path of `FILE_NAME_CHARS` characters, its icon and its three counts."""
        metrics = self.file_table.fontMetrics()
        counts = 3 * (metrics.horizontalAdvance("999") + 8)
        return metrics.averageCharWidth() * FILE_NAME_CHARS + counts + self.file_table.iconSize().width() + 8

    def _build(self) -> None:
        bar = QHBoxLayout()  # above both the file list and the lines: the list's room is not the bar's
        bar.addWidget(self.totals, 1)
        bar.addWidget(self.all_lines)
        bar.addWidget(self.mark_viewed)
        bar.addWidget(self.unified)
        bar.addWidget(self.split)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.lines, 1)
        column.addWidget(self.comment_box)
        self.splitter = side_by_side(self.file_table, right, (1, 3), [260, 780])
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.addLayout(bar)
        layout_.addWidget(self.splitter, 1)

    def _connect(self) -> None:
        self.modes.buttonClicked.connect(lambda _: self._relayout())
        self.lines.clicked.connect(self._clicked)
        self.lines.activated.connect(self._activated)  # Enter on the current line, too
        self.file_table.selectionModel().currentRowChanged.connect(self._on_file)
        self.file_table.clicked.connect(
            lambda index: (
                self.toggle_viewed(self.file_model.record(index.row()).number)
                if index.column() == VIEWED_COLUMN
                else None
            )
        )
        self.mark_viewed.clicked.connect(self._toggle_current)
        self.all_lines.clicked.connect(self._toggle_all_lines)
        self.comment_box.sig_comment_requested.connect(self.sig_comment_requested)
        self.comment_box.sig_edit_requested.connect(self.sig_edit_requested)
        self.comment_box.sig_delete_requested.connect(self.sig_delete_requested)

    # --- showing ------------------------------------------------------------------------------

    @property
    def is_split(self) -> bool:
        """Whether the lines are shown side by side."""
        return self.split.isChecked()

    def set_split(self, split: bool) -> None:
        """Show the lines side by side, or unified."""
        (self.split if split else self.unified).setChecked(True)
        self._relayout()

    def show_files(
        self,
        files: Sequence[FileDiff],
        comments: Sequence[LineComment] = (),
        laid_out: DiffLayout | None = None,
        pin: ReviewPin | None = None,
    ) -> None:
        """Show a parsed diff with the comments on its lines (`laid_out` already, off the GUI thread), read
        between the commits `pin`; the same diff again keeps the unchanged lines shown."""
        if pin is None or pin != self.pin or len(files) != len(self.files):
            self.expansion, self.waiting = Expansion(), None
        elif self.expansion.shown:
            laid_out = None  # laid out without the unchanged lines shown beyond the diff's own
        self.pin = pin
        self._show_all_lines_state()
        self.files, self.comments = list(files), list(comments)
        self.fingerprints = [file_fingerprint(diff) for diff in self.files]
        self._show_file_list()
        added = sum(diff.added for diff in self.files)
        removed = sum(diff.removed for diff in self.files)
        count = len(self.files)
        self.totals.setText(
            f"{count} file{'s' if count != 1 else ''} changed · "
            f"<span style='color:{_color(ADDED_COLOR)}'>+{added}</span> "
            f"<span style='color:{_color(REMOVED_COLOR)}'>−{removed}</span>"
            if count
            else "No changes against the base."
        )
        self.comment_box.hide()
        self._relayout(laid_out)

    # --- unchanged lines ----------------------------------------------------------------------

    def expand(self, row: DiffRow, everything: bool = False) -> None:
        """Show more of the unchanged lines a gap row stands for (all of them if `everything`); the whole
        files are read first, once per diff."""
        if row.kind is not RowKind.GAP or row.gap is None:
            return
        if not self.expansion.lines:
            self._wait_for_lines(row.file, row.gap, everything)
            return
        self.expansion.widen(row.file, row.gap, len(self.files[row.file].hunks), everything)
        self._relayout_in_place()

    def _toggle_all_lines(self) -> None:
        if self.expansion.shown:
            self.expansion.shown.clear()
            self._relayout_in_place()
        elif self.expansion.lines:
            self._show_every_gap()
        else:
            self._wait_for_lines(-1, None, True)

    def _wait_for_lines(self, file: int, gap: Gap | None, everything: bool) -> None:
        asked = self.waiting is not None
        self.waiting = (file, gap, everything)  # the latest click wins; the files are read once
        self.all_lines.setEnabled(False)
        self.all_lines.setText("Reading the files…")
        if not asked:
            self.sig_lines_requested.emit()

    def show_lines(self, pin: ReviewPin | None, found: WholeLines) -> bool:
        """Take the unchanged lines of the diff's files, read whole at `pin`, and widen the gap waiting for
        them; False (nothing taken) when they were read at other commits than the diff shown."""
        waiting, self.waiting = self.waiting, None
        if pin != self.pin:
            self._show_all_lines_state()
            return False
        self.expansion.lines = {
            number: found.get((diff.old_path, diff.new_path), {}) for number, diff in enumerate(self.files)
        }
        if waiting is not None:
            file, gap, everything = waiting
            if gap is None:
                self._show_every_gap()
                return True
            self.expansion.widen(file, gap, len(self.files[file].hunks), everything)
        self._relayout_in_place()
        return True

    def lines_failed(self) -> None:
        """The whole files could not be read: the gaps stay as they are."""
        self.waiting = None
        self._show_all_lines_state()

    def _show_every_gap(self) -> None:
        for row in self.model.layout.rows:
            if row.kind is RowKind.GAP and row.gap is not None:
                self.expansion.widen(row.file, row.gap, len(self.files[row.file].hunks), everything=True)
        self._relayout_in_place()

    def _relayout_in_place(self) -> None:
        """Lay the rows out again, the view kept where it was (the row in focus stays in focus)."""
        position = self.lines.verticalScrollBar().value()
        current = self.lines.currentIndex().row()
        self._relayout()
        self.lines.verticalScrollBar().setValue(position)
        if 0 <= current < self.model.rowCount():
            self.lines.setCurrentIndex(self.model.index(current))
        self._show_all_lines_state()

    def _show_all_lines_state(self) -> None:
        shown = bool(self.expansion.shown)
        self.all_lines.setEnabled(True)
        self.all_lines.setText(CHANGES_ONLY if shown else ALL_LINES)
        self.all_lines.setToolTip(
            "Hide the unchanged lines shown, back to the changes and the lines around them"
            if shown
            else "Show every unchanged line of the changed files (or click a ⋯ row to show one gap)"
        )

    def set_viewed(self, marks: frozenset[str]) -> None:
        """Show these changes as viewed (a task's marks, as remembered)."""
        self.viewed = set(marks)
        self._show_file_list()

    def is_viewed(self, number: int) -> bool:
        """Whether the file at `number` is marked viewed (its change as it is now)."""
        return 0 <= number < len(self.fingerprints) and self.fingerprints[number] in self.viewed

    def toggle_viewed(self, number: int) -> None:
        """Mark a file viewed, or no longer viewed; say so."""
        if not 0 <= number < len(self.fingerprints):
            return
        self.viewed ^= {self.fingerprints[number]}
        self._show_file_list()
        self.sig_viewed_changed.emit(sorted(self.viewed))

    def _toggle_current(self) -> None:
        current = self.file_table.currentIndex()
        if current.isValid():
            self.toggle_viewed(self.file_model.record(current.row()).number)

    def _on_file(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.mark_viewed.setEnabled(current.isValid())
        if current.isValid():
            number = self.file_model.record(current.row()).number
            self.mark_viewed.setChecked(self.is_viewed(number))
            self.scroll_to_file(number)

    def _show_file_list(self) -> None:
        self.file_model.set_items(
            [FileEntry(number, diff, self.is_viewed(number)) for number, diff in enumerate(self.files)]
        )
        current = self.file_table.currentIndex()
        self.mark_viewed.setEnabled(current.isValid())
        if current.isValid():
            self.mark_viewed.setChecked(self.is_viewed(self.file_model.record(current.row()).number))

    def set_comments(self, comments: Sequence[LineComment]) -> None:
        """Show these comments on the lines, keeping the scroll position."""
        self.comments = list(comments)
        position = self.lines.verticalScrollBar().value()
        self._relayout()
        self.lines.verticalScrollBar().setValue(position)

    def _relayout(self, laid_out: DiffLayout | None = None) -> None:
        split = self.is_split
        if laid_out is None or laid_out.split != split:
            laid_out = layout(self.files, self.comments, split, self.expansion)
        self.model.set_layout(self.files, laid_out, split)
        self.lines.setHorizontalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff if split else Qt.ScrollBarPolicy.ScrollBarAsNeeded
        )
        self.lines.fit(0 if split else self.delegate.line_width())
        self.lines.doItemsLayout()  # the scroll range now, not after the next event: callers scroll next

    def scroll_to_file(self, number: int) -> None:
        """Bring a file's header to the top of the lines."""
        rows = self.model.layout.file_rows
        if 0 <= number < len(rows):
            self.lines.scrollTo(self.model.index(rows[number]), QAbstractItemView.ScrollHint.PositionAtTop)

    def row_of_line(self, path: str, line: int, side: DiffSide = DiffSide.NEW) -> int | None:
        """The row showing a file's line (a line of the new file, or a removed line of the old)."""
        for number, row in enumerate(self.model.layout.rows):
            shown = row.kind is RowKind.LINE and (side, line) in line_keys(row)
            if shown and self.model.path(row) == path:
                return number
        return None

    # --- commenting ---------------------------------------------------------------------------

    def _activated(self, index: QModelIndex) -> None:
        row = index.data(ROW_ROLE)
        if isinstance(row, DiffRow) and row.kind is RowKind.GAP and self.lines.pressed_x is not None:
            return  # a click that activates too (a style's single-click activation): the click widened it
        self._clicked(index)

    def _clicked(self, index: QModelIndex) -> None:
        row = index.data(ROW_ROLE)
        if isinstance(row, DiffRow) and row.kind is RowKind.GAP:
            self.expand(row, self.lines.shifted)
        elif isinstance(row, DiffRow):
            self.comment_on(row, self.lines.old_half(index))

    def comment_on(self, row: DiffRow, old_half: bool = False) -> None:
        """Open the comment box on a line row (its removed line if `old_half`), or on a pending comment."""
        if row.kind is RowKind.COMMENT and row.comment is not None:
            if row.comment.pending and self.editable:
                self.comment_box.open_edit(row.comment)
            return
        found = target(row, old_half)
        if found is not None:
            side, line = found
            self.delegate.chosen_side = side
            self.lines.viewport().update()
            self.comment_box.open_at(self.model.path(row), line, side)

    def set_editable(self, editable: bool) -> None:
        """Allow, or stop (the review decided), editing and deleting the human's unsent comments."""
        self.editable = editable
        if not editable and self.comment_box.editing:
            self.comment_box.hide()

    def select_row(self, number: int) -> None:
        """Select a row and scroll to it (as a click would, without opening the box)."""
        index = self.model.index(number)
        self.lines.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self.lines.scrollTo(index)


def _color(pair: tuple[str, str]) -> str:
    return pair[1] if theme.current_scheme() is theme.Scheme.DARK else pair[0]
