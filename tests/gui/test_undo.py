"""Inbox decisions can be undone for a few seconds (the notice moves nothing); answers stay in view."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import FlagResolution, ReviewDecision, TaskStatus
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import FLAGS
from ralph_desk.gui.undo import UNDO_MS
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.support.demo_rows import flag_about, suggestion_about

WAIT_MS = 3000


def test_an_answer_waits_greyed_out_and_undo_brings_the_question_back(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    ask = services.inbox.asks()[0]
    card = window.inbox.questions.card(ask.id)
    assert card is not None
    pane_at = window.inbox.mapTo(window, window.inbox.rect().topLeft())

    qtbot.mouseClick(card.option_buttons[0], Qt.MouseButton.LeftButton)

    toast = controller(window).pending.toast
    assert toast.isVisible() and f"question #{ask.id}" in toast.text.text()
    assert not card.isEnabled()
    assert window.inbox.mapTo(window, window.inbox.rect().topLeft()) == pane_at  # nothing pushed down
    assert toast.parentWidget() is window and toast.geometry().bottom() < window.height()
    qtbot.mouseClick(toast.undo_button, Qt.MouseButton.LeftButton)

    assert not toast.isVisible() and card.isEnabled()
    settle(qtbot, window)
    assert services.signals.get(ask.id).answer is None
    assert window.inbox.questions.card(ask.id) is card


def test_when_the_time_is_up_the_answer_is_given(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    ask = services.inbox.asks()[0]

    controller(window).inbox.answer(ask.id, "Metres.")

    qtbot.waitUntil(lambda: services.signals.get(ask.id).answer == "Metres.", timeout=UNDO_MS + WAIT_MS)
    qtbot.waitUntil(lambda: window.inbox.questions.card(ask.id) is None, timeout=WAIT_MS)
    assert not controller(window).pending.toast.isVisible()


def test_ctrl_z_undoes_a_triage(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    flags = window.inbox.flags
    window.inbox.show_tab(FLAGS)
    flag_id = flags.model.record(0).flag.id
    assert flags.select_flag(flag_id)
    qtbot.mouseClick(flags.triage_buttons["dismissed"], Qt.MouseButton.LeftButton)
    assert controller(window).pending.held is not None

    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)

    assert controller(window).pending.held is None
    settle(qtbot, window)
    assert services.signals.get(flag_id).resolution is FlagResolution.OPEN


def test_a_newer_decision_or_closing_the_window_gives_the_held_one(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    first, second = services.inbox.asks()[:2]
    inbox = controller(window).inbox
    inbox.answer(first.id, "First.")

    inbox.answer(second.id, "Second.")

    qtbot.waitUntil(lambda: services.signals.get(first.id).answer == "First.", timeout=WAIT_MS)
    assert services.signals.get(second.id).answer is None
    window.close()
    qtbot.waitUntil(lambda: services.signals.get(second.id).answer == "Second.", timeout=WAIT_MS)


def test_an_answered_question_stays_visible_in_the_answered_tab(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    ask = services.inbox.asks()[0]
    answered = window.inbox.answered
    assert ask.question is not None and ask.question not in answered.browser.toPlainText()

    controller(window).inbox.answer(ask.id, "Metres, one decimal.")
    controller(window).pending.commit()

    qtbot.waitUntil(lambda: ask.question in answered.browser.toPlainText(), timeout=WAIT_MS)
    assert answered.items[0].ask.id == ask.id and answered.items[0].ask.answer == "Metres, one decimal."
    assert "Metres, one decimal." in answered.browser.toPlainText()
    with qtbot.waitSignal(answered.sig_open_task_requested, timeout=WAIT_MS) as opened:
        answered.browser.anchorClicked.emit(QUrl(f"task:{ask.task_id}"))
    assert opened.args == [ask.task_id]


def test_an_edited_approval_is_held_and_undo_keeps_the_suggestion_and_its_draft(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    suggestion = suggestion_about(services, "Add a regression test for the spring-equinox tides")
    assert suggestion.created_task_id is not None
    card = window.inbox.suggestions.card(suggestion.id)
    assert card is not None
    qtbot.mouseClick(card.edit, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: controller(window).inbox.edit_dialog is not None, timeout=WAIT_MS)
    dialog = controller(window).inbox.edit_dialog
    assert dialog is not None
    dialog.title.setText("Spring equinox tides, checked")

    qtbot.mouseClick(dialog.approve, Qt.MouseButton.LeftButton)

    toast = controller(window).pending.toast
    assert toast.isVisible() and "as edited" in toast.text.text()
    assert not card.isEnabled()
    activate(qtbot, window)  # as the window manager does when the dialog closes
    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert card.isEnabled() and not toast.isVisible()
    settle(qtbot, window)
    draft = services.tasks.get(suggestion.created_task_id)
    assert draft.status is TaskStatus.DRAFT and draft.title != "Spring equinox tides, checked"
    assert services.signals.get(suggestion.id).review_decision is ReviewDecision.PENDING


def test_a_flag_made_a_task_is_held_and_undo_leaves_the_flag_open_with_no_task(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    flag = flag_about(services, "The example settings keep the SMTP password")
    tasks_before = len(services.tasks.list())
    flags = window.inbox.flags
    window.inbox.show_tab(FLAGS)
    assert flags.select_flag(flag.id)
    qtbot.mouseClick(flags.triage_buttons["convert"], Qt.MouseButton.LeftButton)
    dialog = controller(window).inbox.task_dialog
    assert dialog is not None

    qtbot.keyClick(dialog.title, Qt.Key.Key_Return)

    toast = controller(window).pending.toast
    assert toast.isVisible() and f"Flag #{flag.id} becomes a task" in toast.text.text()
    activate(qtbot, window)
    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    settle(qtbot, window)
    assert services.signals.get(flag.id).resolution is FlagResolution.OPEN
    assert len(services.tasks.list()) == tasks_before


def activate(qtbot: QtBot, window: MainWindow) -> None:
    """Make the window the active one again, as a window manager does when a dialog over it closes."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=WAIT_MS)
