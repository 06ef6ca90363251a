"""The tool matrix of a discipline: a check per recipe and tool, and the effective tool set per recipe."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.recipes import RECIPE_ALLOWED
from ralph_desk.gui import theme
from ralph_desk.gui.models.tool_matrix import (
    ALLOWED_ROLE,
    HEADER_ROLE,
    RECIPE_TITLES,
    ToolMatrixModel,
    band_color,
    recipe_name,
)
from ralph_desk.gui.widgets.common import label

Index = QModelIndex | QPersistentModelIndex

ROW_HEIGHT = 24
CHECK_SIZE = 14
COLUMN_WIDTH = 50
TOOL_COLUMN_WIDTH = 186
SUMMARY_WIDTH = 240
SUMMARY_MIN_WIDTH = 180
LEGEND = (
    "<b>The box before a tool's name gives it to this discipline or takes it away — in every recipe at "
    "once.</b> The cells show what each recipe's sessions get: ● gets it, – taken away by this discipline; "
    "greyed: the recipe never allows the tool. Saving applies to the next session."
)
MARK_SIZE = 8
HEADER_BOX_MARGIN = 6


def paint_check(painter: QPainter, box: QRectF, checked: bool, enabled: bool) -> None:
    """A checkbox drawn in the theme's colours, so it reads the same on light and dark palettes."""
    tones = theme.tones()
    accent, muted = theme.accent(), theme.muted()
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if checked:
        painter.setPen(QPen(accent, 1.0))
        painter.setBrush(accent)
    elif enabled:
        painter.setPen(QPen(muted, 1.2))
        painter.setBrush(QColor(tones.base))
    else:
        painter.setPen(QPen(theme.tint(muted, 0.35), 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(box.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
    if checked:
        mark = QPainterPath()
        mark.moveTo(box.left() + box.width() * 0.24, box.top() + box.height() * 0.52)
        mark.lineTo(box.left() + box.width() * 0.43, box.top() + box.height() * 0.71)
        mark.lineTo(box.left() + box.width() * 0.77, box.top() + box.height() * 0.31)
        pen = QPen(QColor(tones.highlighted_text), 1.8)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(mark)
    painter.restore()


def paint_mark(painter: QPainter, rect: QRect, gets: bool) -> None:
    """What a recipe's sessions get: a dot in the accent colour, or a dash in the warning colour."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    box = QRectF(0, 0, MARK_SIZE, MARK_SIZE)
    box.moveCenter(QRectF(rect).center())
    if gets:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.accent())
        painter.drawEllipse(box)
    else:
        pen = QPen(theme.severity_color("warning"), 2.0)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        middle = box.center().y()
        painter.drawLine(QPointF(box.left(), middle), QPointF(box.right(), middle))
    painter.restore()


class MarkDelegate(QStyledItemDelegate):
    """Draws what a recipe's sessions get (no checkbox: the row's control changes it); Space toggles a row."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """The cell's background, then its mark in the middle (none where the recipe never allows it)."""
        self.initStyleOption(option, index)
        widget = option.widget
        style = widget.style() if widget is not None else None
        if style is None:
            return
        background = QStyleOptionViewItem(option)
        background.features &= ~QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
        background.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, background, painter, widget)
        check = index.data(Qt.ItemDataRole.CheckStateRole)
        if index.data(HEADER_ROLE) or check is None or not index.data(ALLOWED_ROLE):
            return
        paint_mark(painter, option.rect, Qt.CheckState(check) == Qt.CheckState.Checked)

    def editorEvent(
        self, event: QEvent, model: QAbstractItemModel, option: QStyleOptionViewItem, index: Index
    ) -> bool:
        """Space on a tool's cell toggles its row (the keyboard's way to the row's control)."""
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Select)
            and isinstance(model, ToolMatrixModel)
            and model.can_change(index.row())
        ):
            model.toggle_row(index.row())
            return True
        return False

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """A compact square-ish cell."""
        return QSize(COLUMN_WIDTH, ROW_HEIGHT)


class ToolHeader(QHeaderView):
    """The tool names down the left; a category's title is drawn as the start of its band."""

    def __init__(self, model: ToolMatrixModel, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.matrix = model

    def paintSection(self, painter: QPainter, rect: QRect, logicalIndex: int) -> None:
        """Paint a category band flat, with its title; a tool section with its box (the row's control)."""
        if not 0 <= logicalIndex < len(self.matrix.rows):
            return
        if self.matrix.rows[logicalIndex].tool is not None:
            self._paint_tool(painter, rect, logicalIndex)
            return
        painter.save()
        painter.fillRect(rect, band_color())
        font = self.matrix.headerData(logicalIndex, Qt.Orientation.Vertical, Qt.ItemDataRole.FontRole)
        if isinstance(font, QFont):
            painter.setFont(font)
        painter.setPen(theme.muted())
        text = str(self.matrix.headerData(logicalIndex, Qt.Orientation.Vertical) or "")
        painter.drawText(
            rect.adjusted(6, 0, -4, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text
        )
        painter.restore()

    def _paint_tool(self, painter: QPainter, rect: QRect, row: int) -> None:
        inset = CHECK_SIZE + 2 * HEADER_BOX_MARGIN
        painter.fillRect(rect, self.palette().button())
        painter.save()
        super().paintSection(painter, rect.adjusted(inset, 0, 0, 0), row)  # the name, right of the box
        painter.restore()
        box = QRectF(0, 0, CHECK_SIZE, CHECK_SIZE)
        box.moveCenter(QRectF(rect).center())
        box.moveLeft(rect.left() + HEADER_BOX_MARGIN)
        paint_check(painter, box, self.matrix.row_enabled(row), self.matrix.can_change(row))


class ToolMatrixView(QTableView):
    """Recipes across, tools down (their names stay in view while scrolling); category bands between."""

    def __init__(self, model: ToolMatrixModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.matrix = model
        self.setItemDelegate(MarkDelegate(self))
        self.setVerticalHeader(ToolHeader(model, self))
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setShowGrid(True)
        self.setGridStyle(Qt.PenStyle.DotLine)
        self.setWordWrap(False)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = self.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(ROW_HEIGHT)
        rows.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        rows.setFixedWidth(TOOL_COLUMN_WIDTH)
        rows.setHighlightSections(False)
        rows.setSectionsClickable(True)
        rows.sectionClicked.connect(self.toggle_row)
        columns = self.horizontalHeader()
        columns.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        columns.setDefaultSectionSize(COLUMN_WIDTH)
        columns.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        columns.setHighlightSections(False)
        columns.setFixedHeight(columns.fontMetrics().lineSpacing() * 2 + 12)
        for row, entry in enumerate(model.rows):
            if entry.tool is None:
                self.setSpan(row, 0, 1, model.columnCount())

    def show_tool(self, name: str) -> None:
        """Scroll the tool's row to the middle of the view."""
        for row, entry in enumerate(self.matrix.rows):
            if entry.tool is not None and entry.tool.name == name:
                self.scrollTo(self.matrix.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
                return

    def toggle_row(self, row: int) -> None:
        """Give back or take away the row's tool, in every recipe (when some recipe allows it)."""
        self.matrix.toggle_row(row)

    def sizeHint(self) -> QSize:
        """Wide enough for every recipe column (narrower, it scrolls; the tool names stay)."""
        scroll_bar = self.verticalScrollBar().sizeHint().width()
        width = (
            TOOL_COLUMN_WIDTH + COLUMN_WIDTH * self.matrix.columnCount() + self.frameWidth() * 2 + scroll_bar
        )
        return QSize(width, 480)


class EffectiveTools(QScrollArea):
    """The tools each recipe's sessions get with the edited set, and what the discipline takes away."""

    def __init__(self, model: ToolMatrixModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matrix = model
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setContentsMargins(4, 0, 8, 0)
        self.setWidget(self.text)
        model.sig_disabled_changed.connect(self.update_text)
        self.update_text()

    def sizeHint(self) -> QSize:
        """A narrow column beside the matrix."""
        return QSize(SUMMARY_WIDTH, super().sizeHint().height())

    def update_text(self) -> None:
        """Write the summary again from the model."""
        muted = theme.muted().name()
        off_color = theme.severity_color("warning").name()
        parts: list[str] = []
        for recipe in self.matrix.recipes:
            effective = self.matrix.effective(recipe)
            allowed = RECIPE_ALLOWED[recipe]
            taken = sorted(allowed - set(effective))
            names = ", ".join(escape(name) for name in effective) or "<i>nothing</i>"
            line = (
                f"<p style='margin:0 0 8px 0'><b>{escape(RECIPE_TITLES[recipe])}</b>"
                f" <span style='color:{muted}'>({escape(recipe_name(recipe))})</span>"
                f" — {len(effective)} of {len(allowed)}<br>{names}"
            )
            if taken:
                line += f"<br><span style='color:{off_color}'>taken away: {escape(', '.join(taken))}</span>"
            parts.append(line + "</p>")
        self.text.setText("".join(parts))

    def summary(self) -> dict[str, list[str]]:
        """The effective tools per recipe name (what the text shows)."""
        return {recipe.value: self.matrix.effective(recipe) for recipe in self.matrix.recipes}


class ToolsEditor(QWidget):
    """The legend, the matrix, and the live effective tool set beside it (narrowed or folded away)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ToolMatrixModel(self)
        self.view = ToolMatrixView(self.model)
        self.effective = EffectiveTools(self.model)
        self.legend = label(LEGEND, name="muted", wrap=True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        side = QWidget()
        side.setMinimumWidth(SUMMARY_MIN_WIDTH)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(6, 0, 0, 0)
        side_layout.addWidget(label("Effective tools per recipe", name="subheading", wrap=True))
        side_layout.addWidget(self.effective, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.view)
        self.splitter.addWidget(side)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setCollapsible(0, False)
        self.splitter.splitterMoved.connect(self._on_moved)
        self.auto_split = True
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.legend)
        layout.addWidget(self.splitter, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Show the whole matrix when it fits beside a narrow summary (until the person moves the split)."""
        super().resizeEvent(event)
        if self.auto_split:
            total = self.splitter.width() - self.splitter.handleWidth()
            matrix = max(0, min(self.view.sizeHint().width(), total - SUMMARY_MIN_WIDTH))
            self.splitter.setSizes([matrix, total - matrix])

    def _on_moved(self, _position: int, _index: int) -> None:
        self.auto_split = False
