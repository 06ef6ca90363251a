"""Side by side, a long line wraps in its half at a laptop's 1280×720: no horizontal scrolling, all of its
text on screen, its number beside its first line; unified, lines keep one row and scroll."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.diff_view import DiffView
from ralph_desk.gui.panes.inbox.reviews.rows import RowKind
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository
from tests.gui.test_reviews import reviews_tab, wait_for_diff
from tests.support.demo_rows import task_id

LAPTOP = QSize(1280, 720)
LONG_LINE = ("TIDES = [" + ", ".join(f"'{n:03d}'" for n in range(40)))[:199] + "]"
BASE = "".join(f"line {n}\n" for n in range(1, 11))


@pytest.fixture
def in_review(project: Path, services: Services) -> int:
    """A task in review that changes a short line into one of 200 characters."""
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "tides.py").write_text(BASE, encoding="utf-8")
    make_repository(project, "main")
    chosen = task_id(services, "Mark high and low water on the chart")
    edited = BASE.replace("line 5\n", LONG_LINE + "\n")
    put_in_review(services, chosen, ({"src/tides.py": edited}, "One long line"))
    return chosen


def long_row(diff: DiffView) -> int:
    return next(
        number
        for number, row in enumerate(diff.model.layout.rows)
        if row.kind is RowKind.LINE and row.new is not None and row.new.text == LONG_LINE
    )


def test_a_200_character_line_wraps_side_by_side_at_1280_with_all_its_text_on_screen(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    assert len(LONG_LINE) == 200
    window.resize(LAPTOP)
    qtbot.waitUntil(lambda: window.size() == LAPTOP)
    diff = wait_for_diff(qtbot, reviews_tab(window), in_review)
    diff.set_split(True)
    QApplication.processEvents()
    lines, delegate = diff.lines, diff.delegate
    rect = lines.visualRect(diff.model.index(long_row(diff)))

    pieces = delegate.wrapped(LONG_LINE)
    assert "".join(pieces) == LONG_LINE and len(pieces) >= 2
    body = lines.viewport().width() // 2 - delegate.number_width() - delegate.char * 2
    assert max(delegate.metrics.horizontalAdvance(piece) for piece in pieces) <= body
    assert rect.height() >= len(pieces) * delegate.metrics.height()
    assert rect.right() <= lines.viewport().width()
    assert not lines.horizontalScrollBar().isVisible() and lines.horizontalScrollBar().maximum() == 0
    assert window.size() == LAPTOP

    # the new side's line number is drawn beside the first of its lines, none lower
    lines.scrollTo(diff.model.index(long_row(diff)))
    rect = lines.visualRect(diff.model.index(long_row(diff)))
    picture = lines.viewport().grab().toImage()
    gutter = range(
        rect.left() + rect.width() // 2 + 2, rect.left() + rect.width() // 2 + delegate.number_width()
    )
    fill = picture.pixelColor(gutter[0], rect.bottom() - 1)
    inked = [y for y in range(rect.top(), rect.bottom()) for x in gutter if picture.pixelColor(x, y) != fill]
    assert inked and max(inked) < rect.top() + delegate.row_height()


def test_unified_a_long_line_keeps_one_row_and_scrolls_across(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    window.resize(LAPTOP)
    qtbot.waitUntil(lambda: window.size() == LAPTOP)
    diff = wait_for_diff(qtbot, reviews_tab(window), in_review)
    diff.set_split(True)
    diff.set_split(False)
    QApplication.processEvents()

    rect = diff.lines.visualRect(diff.model.index(long_row(diff)))
    assert rect.height() == diff.delegate.row_height()
    assert diff.lines.horizontalScrollBar().maximum() > 0
    assert diff.lines.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAsNeeded
