"""Tab in every pane: it leaves every table, and visits the widgets in the order they read."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QApplication,
    QLineEdit,
    QScrollArea,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)
from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from tests.gui.conftest import settle
from tests.gui.test_no_clipped_text import SIZES, views

WAIT_MS = 3000
MAX_STEPS = 200
MAX_STAY = 40
SAME_ROW_PX = 6


def first_tab_stop(pane: QWidget) -> QWidget | None:
    """The first visible, enabled widget inside `pane` that Tab reaches."""
    current = pane.nextInFocusChain()
    while current is not pane:
        if pane.isAncestorOf(current) and takes_tab(current):
            return current
        current = current.nextInFocusChain()
    return None


def takes_tab(widget: QWidget) -> bool:
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus) and widget.isVisible() and widget.isEnabled()


def tab_walk(qtbot: QtBot, pane: QWidget) -> tuple[list[QWidget], list[str]]:
    """Press Tab from the pane's first stop until focus leaves the pane or comes back: stops, traps."""
    start = first_tab_stop(pane)
    if start is None:
        return [], []
    start.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(start.hasFocus, timeout=WAIT_MS)
    stops, traps = [start], []
    stayed = 0
    for _ in range(MAX_STEPS):
        here = QApplication.focusWidget()
        assert here is not None
        qtbot.keyClick(here, Qt.Key.Key_Tab)
        after = QApplication.focusWidget()
        if after is here:  # moving within it (a text's links); a table moving between cells never leaves
            stayed += 1
            if stayed == MAX_STAY:
                traps.append(name(here))
                break
            continue
        stayed = 0
        if after is None or not pane.isAncestorOf(after) or after is start:
            break
        stops.append(after)
    return stops, traps


def rect_in(widget: QWidget, top: QWidget) -> QRect:
    """Where `widget` is in `top` with every scroll area scrolled to its start (as the layout places it)."""
    at = QPoint(0, 0)
    current = widget
    while current is not top and current.parentWidget() is not None:
        parent = current.parentWidget()
        area = parent.parentWidget()
        scrolled = isinstance(area, QAbstractScrollArea) and parent is area.viewport()
        if not scrolled:
            at += current.pos()
        current = parent
    return QRect(at, widget.size())


def name(widget: QWidget) -> str:
    text = getattr(widget, "text", None)
    label = text() if callable(text) else ""
    return f"{type(widget).__name__}({widget.objectName() or label!s})"


def out_of_order(stops: list[QWidget], top: QWidget) -> list[str]:
    """Steps back: up in a column, or left on a row (moving to a column on the right may go up)."""
    wrong = []
    for a, b in itertools.pairwise(stops):
        ra, rb = rect_in(a, top), rect_in(b, top)
        same_row = abs(rb.top() - ra.top()) <= SAME_ROW_PX
        lower = rb.top() > ra.top() + SAME_ROW_PX
        new_column = rb.left() >= ra.right() - SAME_ROW_PX
        if not (lower or new_column or (same_row and rb.left() > ra.left())):
            wrong.append(f"{name(a)} at {ra.topLeft().toTuple()} → {name(b)} at {rb.topLeft().toTuple()}")
    return wrong


def test_the_order_check_finds_a_step_back_and_a_table_that_keeps_tab(qtbot: QtBot) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    layout = QVBoxLayout(holder)
    upper, lower = QLineEdit(), QLineEdit()
    table = QTableWidget(2, 2)
    for widget in (upper, table, lower):
        layout.addWidget(widget)
    QWidget.setTabOrder(lower, upper)
    holder.show()
    qtbot.waitExposed(holder)

    assert out_of_order([lower, upper], holder)
    assert out_of_order([upper, lower], holder) == []
    holder.activateWindow()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert table.hasFocus()  # a default table keeps Tab: what tab_walk reports as a trap


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size.width()}x{size.height()}")
def test_tab_leaves_every_table_and_follows_the_reading_order_in_every_pane(
    qtbot: QtBot, window: MainWindow, size: QSize
) -> None:
    window.resize(size)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    problems: list[str] = []
    for shown in views(window):
        settle(qtbot, window)
        pane = window.stack.currentWidget()
        stops, traps = tab_walk(qtbot, pane)
        assert stops, f"{shown}: nothing takes Tab"
        problems += [f"{shown}: Tab stays in {trap}" for trap in traps]
        problems += [f"{shown}: {step}" for step in out_of_order(stops, window)]
        problems += [f"{shown}: Tab stops on {name(s)}, not a field" for s in stops if type(s) is QScrollArea]
        tables = [view for view in pane.findChildren(QAbstractItemView) if takes_tab(view)]
        problems += [f"{shown}: Tab never reaches {name(view)}" for view in tables if view not in stops]

    assert problems == [], "\n".join(problems)
