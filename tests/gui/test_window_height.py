"""At 1024×640 the window stays 640 px high while sessions run, and a banner moves nothing on the page."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget
from pytestqt.qtbot import QtBot

from ralph_desk.gui.clipping import clipped_texts
from ralph_desk.gui.main_window import PANES, MainWindow
from ralph_desk.gui.panes.loop.running import RunningRow, also_running
from ralph_desk.gui.panes.loop.state import Phase
from tests.gui.conftest import settle

pytestmark = pytest.mark.usefixtures("fusion")

SMALL = QSize(1024, 640)
TITLE = "Keyboard navigation along the tide curve, with the cursor announced to screen readers"
ERROR = (
    "Could not start the loop: another loop runs on this project (pid 4242, started 14:05). Stop it first, "
    "or open its window; nothing was changed."
)


def _rows() -> list[RunningRow]:
    now = datetime.now(UTC)
    return [
        RunningRow(f"s-{n}", f"#{n} {TITLE}", "claude", now - timedelta(minutes=n), n, 0.37 * n, TITLE)
        for n in (3, 2, 1)
    ]


@pytest.mark.parametrize("glance", [False, True], ids=["table", "glance"])
def test_three_running_sessions_and_an_error_keep_the_window_640_px_high(
    qtbot: QtBot, window: MainWindow, glance: bool
) -> None:
    window.resize(SMALL)
    window.show_pane("loop")
    settle(qtbot, window)
    rows = _rows()
    pane = window.loop
    task = f"{rows[0].title} · {also_running([row.title for row in rows[1:]])}"
    pane.show_view(replace(pane.view, phase=Phase.RUNNING, task=task, iteration=9, cost_usd=3.12))
    pane.show_running(rows, rows[0].session_id)
    pane.sessions.show_glance(glance)
    settle(qtbot, window)
    window.message_bar.error(ERROR)
    window.resize(SMALL)
    settle(qtbot, window)
    QApplication.processEvents()

    assert window.minimumSizeHint().height() <= SMALL.height()
    assert window.size() == SMALL
    assert [str(found) for found in clipped_texts(window)] == []
    lines = pane.detail.heightForWidth(pane.detail.width()) // pane.detail.fontMetrics().lineSpacing()
    assert lines <= 2  # the heading names the followed session and counts the others


@pytest.mark.parametrize("pane", ["inbox", "tasks", "loop", "dashboard"])
def test_a_banner_moves_nothing_on_the_page_and_closes(qtbot: QtBot, window: MainWindow, pane: str) -> None:
    window.resize(SMALL)
    window.show_pane(pane)
    settle(qtbot, window)
    page = window.panes[pane]
    before = _tops(window, page)
    window.message_bar.error(ERROR)
    QApplication.processEvents()
    bar = window.message_bar

    assert bar.isVisible() and bar.width() > SMALL.width() // 2 and ERROR in bar.text
    assert bar.height() >= bar.minimumSizeHint().height()  # the whole text shows
    page_top = page.mapTo(bar.parentWidget(), page.rect().topLeft()).y()
    assert bar.geometry().top() < page_top + page.height() // 3  # near the top, below the page's buttons
    assert _tops(window, page) == before
    bar._close.click()
    assert not bar.isVisible()
    assert _tops(window, page) == before


@pytest.mark.parametrize("pane", [entry.key for entry in PANES])
def test_a_banner_covers_no_button_of_the_page(qtbot: QtBot, window: MainWindow, pane: str) -> None:
    window.resize(SMALL)
    window.show_pane(pane)
    settle(qtbot, window)
    window.message_bar.error(ERROR)
    QApplication.processEvents()
    bar = window.message_bar
    host = bar.parentWidget()
    assert host is not None

    covered = [
        button.text() or button.toolTip()
        for button in host.findChildren(QAbstractButton)
        if button.isVisible()
        and not bar.isAncestorOf(button)
        and QRect(button.mapTo(host, QPoint(0, 0)), button.size()).intersects(bar.geometry())
    ]
    assert covered == []
    assert bar.width() > SMALL.width() // 2


def _tops(window: MainWindow, page: QWidget) -> dict[QWidget, int]:
    """Where the page and each of its parts start in the window (a banner pushing the page moves them)."""
    direct = Qt.FindChildOption.FindDirectChildrenOnly
    widgets = [page, *page.findChildren(QWidget, options=direct)]
    return {
        widget: widget.mapTo(window, widget.rect().topLeft()).y() for widget in widgets if widget.isVisible()
    }
