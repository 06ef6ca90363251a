"""Smaller things: a question's own number, the Dashboard's times, Esc in New task, the size, glance cards."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QEvent, QPoint, QSize, Qt
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QApplication, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import QUESTIONS
from ralph_desk.gui.panes.loop.running import RunningRow
from ralph_desk.gui.panes.loop.sessions import GlanceView
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.test_no_clipped_text import views

WAIT_MS = 3000
CELL_PADDING_PX = 6  # the style's text margins (Fusion: 3 px a side)


def test_a_question_card_names_the_question_as_the_undo_notice_does(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    ask = services.inbox.asks()[0]
    assert ask.id != ask.task_id  # the demo's numbers differ: the card must say which is which
    window.inbox.show_tab(QUESTIONS)
    card = window.inbox.questions.card(ask.id)
    assert card is not None

    qtbot.mouseClick(card.option_buttons[0], Qt.MouseButton.LeftButton)

    named = f"question #{ask.id}"
    assert named in controller(window).pending.toast.text.text()
    assert named in card.session.text().lower() and card.session.isVisible()


def _items(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [item, *(found for index in range(item.childCount()) for found in _items(item.child(index)))]


def test_the_dashboard_shows_every_time_of_its_recent_activity_whole(
    qtbot: QtBot, window: MainWindow, fusion: None
) -> None:
    window.resize(QSize(1024, 640))
    window.show_pane("dashboard")
    tree = window.dashboard.recent
    qtbot.waitUntil(lambda: tree.topLevelItemCount() > 1, timeout=WAIT_MS)
    QApplication.processEvents()
    items = [found for row in range(tree.topLevelItemCount()) for found in _items(tree.topLevelItem(row))]
    assert any(item.parent() is not None for item in items)  # signals under their sessions

    cut = [
        item.text(0)
        for item in items
        if tree.fontMetrics().horizontalAdvance(item.text(0)) + CELL_PADDING_PX
        > tree.visualRect(tree.indexFromItem(item, 0)).width()
    ]

    assert cut == []


def test_esc_in_new_task_asks_before_dropping_what_was_typed(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("tasks")
    controller(window).tasks.new_task()
    dialog = controller(window).tasks.task_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.title, "Tide tables for the autumn")

    qtbot.keyClick(dialog, Qt.Key.Key_Escape)

    assert dialog.isVisible() and dialog.title.text() == "Tide tables for the autumn"
    box = dialog.drop_box
    assert box is not None and box.isVisible()
    box.button(box.StandardButton.Cancel).click()
    assert dialog.isVisible()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.drop_box is not None
    dialog.drop_box.confirm_button.click()
    assert not dialog.isVisible()


def test_esc_in_new_task_with_nothing_typed_closes_at_once(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("tasks")
    controller(window).tasks.new_task()
    dialog = controller(window).tasks.task_dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)

    qtbot.keyClick(dialog, Qt.Key.Key_Escape)

    assert not dialog.isVisible() and dialog.drop_box is None


def test_the_window_never_grows_by_itself_through_every_pane_and_tab(
    qtbot: QtBot, window: MainWindow, fusion: None
) -> None:
    small = QSize(1024, 640)
    window.resize(small)
    settle(qtbot, window)
    assert window.size() == small

    grown = []
    for shown in views(window):
        settle(qtbot, window)
        window.message_bar.error("A long error " * 30)
        QApplication.processEvents()
        if window.size() != small:
            grown.append(f"{shown}: {window.size().width()}×{window.size().height()}")

    assert grown == []


def test_all_at_once_cards_keep_their_place_under_the_pointer_when_a_session_ends(qtbot: QtBot) -> None:
    glance = GlanceView()
    qtbot.addWidget(glance)
    glance.resize(700, 500)
    glance.show()
    qtbot.waitExposed(glance)
    now = datetime.now(UTC)
    rows = [RunningRow(f"s-{n}", f"#{n} Task {n}", "claude", now, n, 0.1 * n, "edit") for n in (1, 2, 3)]
    glance.show_rows(rows, "s-1")
    QApplication.processEvents()
    third = glance.cards["s-3"]
    place = third.mapTo(glance, QPoint(0, 0))
    QCursor.setPos(third.mapToGlobal(third.rect().center()))

    glance.show_rows([rows[0], rows[2]], "s-1")  # the second session ended
    QApplication.processEvents()

    assert third.mapTo(glance, QPoint(0, 0)) == place
    assert not glance.cards["s-2"].isEnabled() and glance.cards["s-2"].state.text() == "ended"
    QCursor.setPos(glance.mapToGlobal(QPoint(-50, -50)))
    QApplication.sendEvent(glance, QEvent(QEvent.Type.Leave))
    QApplication.processEvents()
    assert "s-2" not in glance.cards


def test_all_at_once_cards_of_ended_sessions_go_at_once_when_the_pointer_is_elsewhere(qtbot: QtBot) -> None:
    glance = GlanceView()
    qtbot.addWidget(glance)
    glance.show()
    QCursor.setPos(glance.mapToGlobal(QPoint(-50, -50)))
    now = datetime.now(UTC)
    rows = [RunningRow(f"s-{n}", f"#{n} Task {n}", "claude", now, n, 0.1 * n, "edit") for n in (1, 2)]
    glance.show_rows(rows, "s-1")

    glance.show_rows(rows[:1], "s-1")

    assert list(glance.cards) == ["s-1"]
