"""How a pane is laid out: a title row over its body, side-by-side areas, an empty state in place."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
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


class PageStack(QStackedWidget):
    """Pages one at a time, asking only for the room of the page shown.

    A plain stack asks for the largest minimum of all its pages, so a hidden page that grew (the Loop pane
    with sessions running) made the window grow while another page was shown.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = self.layout()
        if layout is not None:  # else the layout sets the stack's minimum to every page's largest
            layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.currentChanged.connect(lambda _index: self.updateGeometry())

    def minimumSizeHint(self) -> QSize:
        """The minimum of the page shown."""
        page = self.currentWidget()
        return page.minimumSizeHint().expandedTo(page.minimumSize()) if page is not None else QSize(0, 0)

    def sizeHint(self) -> QSize:
        """The size the page shown asks for."""
        page = self.currentWidget()
        return page.sizeHint() if page is not None else QSize(0, 0)
