"""The diff as a flat list model of rows, and the delegate that paints a row: numbers, sign, coloured text.

A list view with one row height asks for, and paints, only the rows in sight: a diff of any size opens
at once. No text document is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ralph_desk.domain.diffs import DiffLine, FileDiff, LineKind
from ralph_desk.domain.enums import DiffSide, ReviewCommentState
from ralph_desk.domain.reviews import where
from ralph_desk.gui import icons, theme
from ralph_desk.gui.panes.inbox.reviews import highlight
from ralph_desk.gui.panes.inbox.reviews.rows import DiffLayout, DiffRow, RowKind, file_badge, line_keys
from ralph_desk.gui.panes.inbox.reviews.words import Span

ROW_ROLE = Qt.ItemDataRole.UserRole + 30
"""The role that gives a row's `DiffRow`."""

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()
PAD = 6
SIGNS = {LineKind.ADDED: "+", LineKind.REMOVED: "−", LineKind.CONTEXT: " ", LineKind.NOTE: "\\"}
ADDED_COLOR = ("#1a7f37", "#3fb950")
REMOVED_COLOR = ("#cf222e", "#f85149")
COMMENT_COLOR = ("#9a6700", "#d29922")
MIN_COLUMNS = 4
"""Characters a wrapped line holds at the least, however narrow its half."""
WORD_TINT = 0.38
"""How strongly a changed word is tinted (the whole line: 0.14)."""
PENDING = "not sent yet"
GAP_TIP = "Click (or Enter) to show these unchanged lines, as the reviewed commits have them; Shift: all"
COMMENT_STATES = {
    ReviewCommentState.REQUESTED.value: "sent to the agent",
    ReviewCommentState.ADDRESSED.value: "addressed",
}


def _pick(pair: tuple[str, str]) -> QColor:
    return QColor(pair[1] if theme.current_scheme() is theme.Scheme.DARK else pair[0])


class DiffModel(QAbstractListModel):
    """The rows of one diff laid out unified or side by side; the files they belong to."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.files: list[FileDiff] = []
        self.layout = DiffLayout([], [], 0, 0)
        self.split = False

    def set_layout(self, files: Sequence[FileDiff], layout: DiffLayout, split: bool) -> None:
        """Show these rows (one reset: a new diff or a new way of showing it)."""
        self.beginResetModel()
        self.files, self.layout, self.split = list(files), layout, split
        self.endResetModel()

    def row(self, number: int) -> DiffRow:
        """The row at `number`."""
        return self.layout.rows[number]

    def path(self, row: DiffRow) -> str:
        """The path of the file a row belongs to."""
        return self.files[row.file].path

    def rowCount(self, parent: Index = _ROOT) -> int:
        """How many rows."""
        return 0 if parent.isValid() else len(self.layout.rows)

    def flags(self, index: Index) -> Qt.ItemFlag:
        """Line rows (to comment on) and pending comments (to edit) can be selected; not headers."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        row = self.layout.rows[index.row()]
        if row.kind in (RowKind.LINE, RowKind.GAP) or (row.comment is not None and row.comment.pending):
            return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return Qt.ItemFlag.ItemIsEnabled

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A row's text, tooltip or record."""
        if not index.isValid() or not 0 <= index.row() < len(self.layout.rows):
            return None
        row = self.layout.rows[index.row()]
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return _text(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row)
        return None

    def _tooltip(self, row: DiffRow) -> str | None:
        if row.kind is RowKind.LINE:
            keys = line_keys(row)
            if not keys:
                return None
            places = " or ".join(where(self.path(row), line, side) for side, line in keys)
            return f"{places} — click to comment"
        if row.kind is RowKind.COMMENT and row.comment is not None:
            hint = "\n(yours, not sent yet: click to edit or delete)" if row.comment.pending else ""
            return f"{row.comment.place}\n{_comment_text(row)}{hint}"
        if row.kind is RowKind.GAP:
            return GAP_TIP
        if row.kind is RowKind.FILE:
            diff = self.files[row.file]
            return f"{diff.title}\n{file_badge(diff)}, +{diff.added} −{diff.removed}"
        return None


def _text(row: DiffRow) -> str:
    if row.kind is not RowKind.LINE:
        return row.text
    if row.old is not None and row.new is not None and row.old is not row.new:
        return f"{row.old.text}\t{row.new.text}"
    line = row.line
    return line.text if line is not None else ""


class DiffDelegate(QStyledItemDelegate):
    """Paints a diff row in a fixed-width font: gutters with line numbers, the sign, highlighted text."""

    def __init__(self, model: DiffModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.bold = QFont(self.font)
        self.bold.setBold(True)
        self.metrics = QFontMetrics(self.font)
        self.char = max(1, self.metrics.horizontalAdvance("0"))
        self.chosen_side: DiffSide | None = None
        """The side of the selected line the comment box is about (its half is tinted side by side)."""
        self.columns = 0
        """Characters a side's line holds before it wraps, side by side (0: unified, no wrapping)."""

    def row_height(self) -> int:
        """The height of a row of one line (every row, unified)."""
        return self.metrics.height() + 4

    def fit_columns(self, width: int) -> int:
        """Make a side-by-side line wrap at what a half of `width` holds; how many characters that is."""
        text = width // 2 - self.number_width() - 2 * PAD - 2 * self.char
        self.columns = max(MIN_COLUMNS, text // self.char)
        return self.columns

    def visual_lines(self, row: DiffRow) -> int:
        """How many lines a row takes, its lines wrapped at `columns` side by side (1 unified)."""
        if not self.columns or row.kind is not RowKind.LINE:
            return 1
        longest = max(len(_shown(row.old)), len(_shown(row.new)))
        return max(1, -(-longest // self.columns))

    def wrapped(self, text: str) -> list[str]:
        """A line's shown text (tabs expanded) cut into the pieces its wrapped lines hold."""
        columns = self.columns or len(text) or 1
        return [text[start : start + columns] for start in range(0, len(text), columns)] or [""]

    def number_width(self) -> int:
        """The width of a line-number gutter."""
        return self.char * max(3, len(str(self.model.layout.largest_number))) + 2 * PAD

    def line_width(self) -> int:
        """The width the widest line needs, unified."""
        widest = min(self.model.layout.widest, highlight.SHOWN_CHARS) + 4
        return 2 * self.number_width() + self.char * (widest + 2) + 2 * PAD

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """Wide enough for the widest line when unified (side by side fits the view)."""
        return QSize(0 if self.model.split else self.line_width(), self.row_height())

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """Draw the row as its kind wants."""
        row = index.data(ROW_ROLE)
        if not isinstance(row, DiffRow):
            return
        painter.save()
        painter.setFont(self.font)
        rect = QRect(option.rect)
        painter.fillRect(rect, option.palette.base())  # over the style's opaque selection: ours is a tint
        text_color = option.palette.color(QPalette.ColorRole.Text)
        if row.kind is RowKind.LINE:
            if self.model.split:
                self._paint_split(painter, rect, row, text_color)
            else:
                self._paint_unified(painter, rect, row, text_color)
        else:
            self._paint_band(painter, rect, row, text_color)
        if option.state & QStyle.StateFlag.State_Selected:
            chosen = self.chosen_side if row.kind is RowKind.LINE else None
            painter.fillRect(self._half(rect, chosen), theme.tint(theme.accent(), 0.22))
        painter.restore()

    def _half(self, rect: QRect, side: DiffSide | None) -> QRect:
        """The half of a side-by-side row that shows `side` (the whole row unified, or for no side)."""
        if not self.model.split or side is None:
            return rect
        half = rect.width() // 2
        if side is DiffSide.OLD:
            return QRect(rect.left(), rect.top(), half, rect.height())
        return QRect(rect.left() + half, rect.top(), rect.width() - half, rect.height())

    # --- lines --------------------------------------------------------------------------------

    def _paint_unified(self, painter: QPainter, rect: QRect, row: DiffRow, text_color: QColor) -> None:
        line = row.line
        if line is None:
            return
        painter.fillRect(rect, _background(line.kind))
        numbers = self.number_width()
        old_no = row.old.old_no if row.old is not None else None
        new_no = row.new.new_no if row.new is not None else None
        self._number(painter, QRect(rect.left(), rect.top(), numbers, rect.height()), old_no)
        self._number(painter, QRect(rect.left() + numbers, rect.top(), numbers, rect.height()), new_no)
        body = QRect(rect.left() + 2 * numbers, rect.top(), rect.width() - 2 * numbers, rect.height())
        words = row.new_words if line is row.new else row.old_words
        self._line(painter, body, line, self.model.path(row), text_color, words)

    def _paint_split(self, painter: QPainter, rect: QRect, row: DiffRow, text_color: QColor) -> None:
        half = rect.width() // 2
        path = self.model.path(row)
        sides = (
            (QRect(rect.left(), rect.top(), half, rect.height()), row.old, True, row.old_words),
            (
                QRect(rect.left() + half, rect.top(), rect.width() - half, rect.height()),
                row.new,
                False,
                row.new_words,
            ),
        )
        numbers = self.number_width()
        for area, line, old_side, words in sides:
            if line is None:
                painter.fillRect(area, theme.tint(theme.muted(), 0.08))
                continue
            painter.fillRect(area, _background(line.kind))
            number = line.old_no if old_side else line.new_no
            self._number(painter, QRect(area.left(), area.top(), numbers, area.height()), number)
            body = QRect(area.left() + numbers, area.top(), area.width() - numbers, area.height())
            painter.save()
            painter.setClipRect(area)
            self._wrapped_line(painter, body, line, path, text_color, words)
            painter.restore()
        painter.setPen(theme.tint(theme.muted(), 0.4))
        painter.drawLine(rect.left() + half, rect.top(), rect.left() + half, rect.bottom())

    def _number(self, painter: QPainter, area: QRect, number: int | None) -> None:
        painter.fillRect(area, theme.tint(theme.muted(), 0.06))
        if number is None:
            return
        painter.setPen(theme.muted())
        align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        first = QRect(area.left(), area.top(), area.width(), self.row_height())  # beside the first line
        painter.drawText(first.adjusted(0, 0, -PAD, 0), align, str(number))

    def _wrapped_line(
        self,
        painter: QPainter,
        area: QRect,
        line: DiffLine,
        path: str,
        text_color: QColor,
        words: Sequence[Span] = (),
    ) -> None:
        """A line cut at `columns` characters onto as many lines as it takes, its sign beside the first."""
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        height = self.row_height()
        sign_color = {LineKind.ADDED: _pick(ADDED_COLOR), LineKind.REMOVED: _pick(REMOVED_COLOR)}
        painter.setPen(sign_color.get(line.kind, theme.muted()))
        painter.drawText(QRect(area.left() + PAD, area.top(), self.char * 2, height), align, SIGNS[line.kind])
        left = area.left() + PAD + self.char * 2
        width = area.right() - left
        if line.kind is LineKind.NOTE:
            painter.setPen(theme.muted())
            painter.drawText(QRect(left, area.top(), width, height), align, line.text)
            return
        pieces = self.wrapped(_shown(line))
        step = self.metrics.height()
        changed = _shown_spans(line.text, words)
        start = 0
        for number, piece in enumerate(pieces):
            end = start + len(piece)
            marks = [
                (max(a, start) - start, min(b, end) - start) for a, b in changed if a < end and b > start
            ]
            top = area.top() + number * step
            self._mark_words(painter, QRect(left, top, width, height), DiffLine(line.kind, piece), marks)
            start = end
        spans = iter(highlight.spans(path, line.text))
        text, color = next(spans, ("", None))
        for number, piece in enumerate(pieces):
            x, rest, top = left, len(piece), area.top() + number * step
            while rest > 0:
                if not text:
                    text, color = next(spans, ("", None))
                    if not text:
                        break
                part, text = text[:rest], text[rest:]
                painter.setPen(color if color is not None else text_color)
                advance = self.metrics.horizontalAdvance(part)
                painter.drawText(QRect(x, top, advance + self.char, height), align, part)
                x, rest = x + advance, rest - len(part)

    def _line(
        self,
        painter: QPainter,
        area: QRect,
        line: DiffLine,
        path: str,
        text_color: QColor,
        words: Sequence[Span] = (),
    ) -> None:
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        sign_color = {LineKind.ADDED: _pick(ADDED_COLOR), LineKind.REMOVED: _pick(REMOVED_COLOR)}
        painter.setPen(sign_color.get(line.kind, theme.muted()))
        painter.drawText(
            QRect(area.left() + PAD, area.top(), self.char * 2, area.height()), align, SIGNS[line.kind]
        )
        x = area.left() + PAD + self.char * 2
        if line.kind is LineKind.NOTE:
            painter.setPen(theme.muted())
            painter.drawText(QRect(x, area.top(), area.right() - x, area.height()), align, line.text)
            return
        self._mark_words(painter, QRect(x, area.top(), area.right() - x, area.height()), line, words)
        for text, color in highlight.spans(path, line.text):
            if x > area.right():
                break
            width = self.metrics.horizontalAdvance(text)
            painter.setPen(color if color is not None else text_color)
            painter.drawText(QRect(x, area.top(), width + self.char, area.height()), align, text)
            x += width

    def _mark_words(self, painter: QPainter, area: QRect, line: DiffLine, words: Sequence[Span]) -> None:
        """Tint, more strongly than the line, the words that changed (beside the line it pairs with)."""
        if not words:
            return
        color = _pick(ADDED_COLOR) if line.kind is LineKind.ADDED else _pick(REMOVED_COLOR)
        tint = theme.tint(color, WORD_TINT)
        for start, end in words:
            left = area.left() + self.metrics.horizontalAdvance(line.text[:start])
            width = self.metrics.horizontalAdvance(line.text[start:end])
            if left > area.right():
                break
            painter.fillRect(QRect(left, area.top() + 1, width, area.height() - 2), tint)

    # --- headers, notes, comments -------------------------------------------------------------

    def _paint_band(self, painter: QPainter, rect: QRect, row: DiffRow, text_color: QColor) -> None:
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        area = rect.adjusted(PAD, 0, -PAD, 0)
        if row.kind is RowKind.FILE:
            painter.fillRect(rect, QColor(theme.tones().sidebar))
            self._paint_file(painter, area, row, text_color)
            return
        if row.kind is RowKind.HUNK:
            painter.fillRect(rect, theme.tint(theme.accent(), 0.10))
            painter.setPen(theme.muted())
            painter.drawText(area.adjusted(self.number_width(), 0, 0, 0), align, row.text)
            return
        if row.kind is RowKind.GAP:
            painter.fillRect(rect, theme.tint(theme.accent(), 0.06))
            painter.setPen(theme.accent())
            painter.drawText(area.adjusted(self.number_width(), 0, 0, 0), align, row.text)
            return
        if row.kind is RowKind.COMMENT:
            painter.fillRect(rect, theme.tint(_pick(COMMENT_COLOR), 0.16))
            band = self._half(rect, _comment_side(row))  # side by side, the file it is about shows darker
            if band != rect:
                painter.fillRect(band, theme.tint(_pick(COMMENT_COLOR), 0.14))
            indent = area.adjusted(self.number_width(), 0, 0, 0)
            size = min(16, rect.height() - 2)
            top = rect.top() + (rect.height() - size) // 2
            painter.drawPixmap(indent.left(), top, icons.pixmap("comment", size, _pick(COMMENT_COLOR)))
            indent.setLeft(indent.left() + size + PAD)
            painter.setPen(text_color)
            shown = self.metrics.elidedText(_comment_text(row), Qt.TextElideMode.ElideRight, indent.width())
            painter.drawText(indent, align, shown)
            return
        italic = QFont(self.font)
        italic.setItalic(True)
        painter.setFont(italic)
        painter.setPen(theme.muted())
        painter.drawText(area.adjusted(self.number_width(), 0, 0, 0), align, row.text)

    def _paint_file(self, painter: QPainter, area: QRect, row: DiffRow, text_color: QColor) -> None:
        diff = self.model.files[row.file]
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        painter.setFont(self.bold)
        counts = "" if diff.binary else f"+{diff.added}  −{diff.removed}"
        counts_width = self.metrics.horizontalAdvance(counts) + 4 * self.char
        badge = f"[{file_badge(diff)}]  "
        painter.setPen(theme.muted())
        painter.drawText(area, align, badge)
        x = area.left() + QFontMetrics(self.bold).horizontalAdvance(badge)
        painter.setPen(text_color)
        title_area = QRect(x, area.top(), max(0, area.right() - x - counts_width), area.height())
        title = QFontMetrics(self.bold).elidedText(row.text, Qt.TextElideMode.ElideMiddle, title_area.width())
        painter.drawText(title_area, align, title)
        if diff.binary:
            return
        removed_width = QFontMetrics(self.bold).horizontalAdvance(f"−{diff.removed}")
        painter.setPen(_pick(REMOVED_COLOR))
        painter.drawText(area, right, f"−{diff.removed}")
        painter.setPen(_pick(ADDED_COLOR))
        painter.drawText(area.adjusted(0, 0, -removed_width - 2 * self.char, 0), right, f"+{diff.added}")


def _comment_side(row: DiffRow) -> DiffSide | None:
    """The side of a comment on a line, or None for one on a file."""
    return row.comment.side if row.comment is not None and row.anchor is not None else None


def _comment_text(row: DiffRow) -> str:
    comment = row.comment
    who = f"{comment.author}: " if comment is not None and comment.author else ""
    removed = comment is not None and comment.side is DiffSide.OLD
    line = f"{'removed line' if removed else 'line'} {row.anchor} · " if row.anchor else ""
    state = (
        f" ({COMMENT_STATES[comment.state]})"
        if comment is not None and comment.state in COMMENT_STATES
        else f" ({PENDING})"
        if comment is not None and comment.pending
        else ""
    )
    return f"{line}{who}{row.text}{state}".replace("\n", " ")


def _shown(line: DiffLine | None) -> str:
    """A line's text as drawn: tabs expanded, cut where no screen reaches."""
    return "" if line is None else line.text[: highlight.SHOWN_CHARS].replace("\t", highlight.TAB)


def _shown_spans(text: str, words: Sequence[Span]) -> list[Span]:
    """Changed-word ranges of a line's text as ranges of its shown text (tabs expanded)."""
    tab = len(highlight.TAB) - 1
    return [
        (start + text.count("\t", 0, start) * tab, end + text.count("\t", 0, end) * tab)
        for start, end in words
    ]


def _background(kind: LineKind) -> QColor:
    if kind is LineKind.ADDED:
        return theme.tint(_pick(ADDED_COLOR), 0.14)
    if kind is LineKind.REMOVED:
        return theme.tint(_pick(REMOVED_COLOR), 0.14)
    return QColor(0, 0, 0, 0)
