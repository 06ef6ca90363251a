"""How a pane is laid out: a title row over its body, side-by-side areas, an empty state in place."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)


def pane_layout(pane: QWidget, *rows: QWidget | QLayout, spacing: int = 10) -> QVBoxLayout:
    """Stack `rows` in a pane with the pane margins; the last row takes the spare height."""
    layout = QVBoxLayout(pane)
    layout.setContentsMargins(20, 16, 20, 12)
    layout.setSpacing(spacing)
    for position, row in enumerate(rows):
        stretch = 1 if position == len(rows) - 1 else 0
        if isinstance(row, QLayout):
            layout.addLayout(row, stretch)
        else:
            layout.addWidget(row, stretch)
    return layout


def title_row(heading: QLabel, count: QLabel) -> QHBoxLayout:
    """The heading on the left and a count on the right."""
    row = QHBoxLayout()
    row.addWidget(heading)
    row.addStretch(1)
    row.addWidget(count)
    return row


def side_by_side(
    left: QWidget, right: QWidget, stretch: tuple[int, int], sizes: list[int] | None = None
) -> QSplitter:
    """Two areas next to each other that the person can resize but not collapse."""
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(left)
    splitter.addWidget(right)
    splitter.setStretchFactor(0, stretch[0])
    splitter.setStretchFactor(1, stretch[1])
    splitter.setChildrenCollapsible(False)
    if sizes is not None:
        splitter.setSizes(sizes)
    return splitter


def stacked(*pages: QWidget) -> QStackedWidget:
    """One page at a time, the first shown."""
    stack = QStackedWidget()
    for page in pages:
        stack.addWidget(page)
    return stack


def scroller(body: QWidget) -> QScrollArea:
    """`body` in a frameless area that scrolls; Tab goes to its fields, never stops on the area itself."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    area.setWidget(body)
    return area
