"""The keyboard: Tab leaves tables, shortcuts for inbox items and the loop, and their list in Help."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import FlagResolution, TaskStatus
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import FLAGS, QUESTIONS, SUGGESTIONS
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.support.demo_rows import flag_about, suggestion_about

WAIT_MS = 3000


def press(qtbot: QtBot, window: MainWindow, keys: str) -> None:
    """Press a shortcut as the person would, with the window active."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    chord = QKeySequence(keys)[0]
    qtbot.keyClick(QApplication.focusWidget() or window, chord.key(), chord.keyboardModifiers())


def test_tab_leaves_the_task_table(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("tasks")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    table = window.tasks.table
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=WAIT_MS)

    qtbot.keyClick(table, Qt.Key.Key_Tab)

    assert not table.hasFocus()


def test_next_and_previous_item_move_through_the_questions(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(QUESTIONS)
    questions = window.inbox.questions
    assert len(questions.order) >= 2

    press(qtbot, window, "F8")
    first = questions.card_at(0)
    qtbot.waitUntil(lambda: first.answer.hasFocus(), timeout=WAIT_MS)
    press(qtbot, window, "F8")
    qtbot.waitUntil(lambda: questions.card_at(1).answer.hasFocus(), timeout=WAIT_MS)
    press(qtbot, window, "Shift+F8")
    qtbot.waitUntil(lambda: first.answer.hasFocus(), timeout=WAIT_MS)


def test_approve_shortcut_approves_the_current_suggestion(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    suggestion = suggestion_about(services, "Add a regression test for the spring-equinox tides")
    window.show_pane("inbox")
    window.inbox.show_tab(SUGGESTIONS)
    card = window.inbox.suggestions.card(suggestion.id)
    assert card is not None
    card.focus_input()

    press(qtbot, window, "Ctrl+Shift+Y")
    controller(window).pending.commit()  # as the undo time running out would

    assert suggestion.created_task_id is not None
    qtbot.waitUntil(
        lambda: services.tasks.get(suggestion.created_task_id or 0).status is TaskStatus.PENDING,
        timeout=WAIT_MS,
    )


def test_dismiss_shortcut_dismisses_the_selected_flag(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    flag = flag_about(services, "The example settings keep the SMTP password")
    window.show_pane("inbox")
    window.inbox.show_tab(FLAGS)
    assert window.inbox.flags.select_flag(flag.id)

    press(qtbot, window, "Ctrl+Shift+D")
    controller(window).pending.commit()  # as the undo time running out would

    qtbot.waitUntil(
        lambda: services.signals.get(flag.id).resolution is FlagResolution.DISMISSED, timeout=WAIT_MS
    )


def test_a_shortcut_with_nothing_to_act_on_says_so_in_the_status_bar(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(QUESTIONS)

    press(qtbot, window, "Ctrl+Shift+D")

    assert "nothing to do in this tab" in window.statusBar().currentMessage()


def test_loop_shortcuts_press_the_loop_buttons_when_they_are_enabled(
    qtbot: QtBot, window: MainWindow
) -> None:
    with qtbot.waitSignal(window.loop.start.clicked, timeout=WAIT_MS):
        press(qtbot, window, "Ctrl+Shift+S")
    settle(qtbot, window)
    if not window.loop.stop.isEnabled():
        press(qtbot, window, "Ctrl+Shift+X")
        assert "not now" in window.statusBar().currentMessage()


def test_help_lists_every_shortcut(qtbot: QtBot, window: MainWindow) -> None:
    press(qtbot, window, "F1")

    dialog = window.shortcuts_dialog
    assert dialog is not None and dialog.isVisible()
    keys = dialog.keys()
    for expected in ("F8", "Shift+F8", "Ctrl+Shift+A", "Ctrl+Shift+Y", "Ctrl+Shift+N", "Ctrl+Shift+R"):
        assert expected in keys
    for expected in ("Ctrl+Shift+D", "Ctrl+Shift+S", "Ctrl+Shift+P", "Ctrl+Shift+X", "Ctrl+1", "F5"):
        assert expected in keys


def focus_chain(container: QWidget, top: QWidget) -> list[QPoint]:
    """Where each visible, enabled widget that Tab reaches inside `container` is, in Tab order."""
    found: list[QPoint] = []
    current = container.nextInFocusChain()
    while current is not container and container.isAncestorOf(current):
        takes_tab = bool(current.focusPolicy() & Qt.FocusPolicy.TabFocus)
        if takes_tab and current.isVisibleTo(top) and current.isEnabled():
            found.append(current.mapTo(top, QPoint(0, 0)))
        current = current.nextInFocusChain()
    return found


def reads_in_order(points: list[QPoint], same_row_px: int = 4) -> bool:
    """Each point right of the last on its row, or on a lower row."""
    return all(
        b.y() > a.y() + same_row_px or (abs(b.y() - a.y()) <= same_row_px and b.x() > a.x())
        for a, b in itertools.pairwise(points)
    )


def test_tab_order_follows_the_questions_as_they_read_options_then_answer(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(QUESTIONS)
    settle(qtbot, window)
    card = window.inbox.questions.card_at(0)
    assert card.option_buttons

    chain = focus_chain(card, window)

    assert len(chain) >= len(card.option_buttons) + 1
    assert reads_in_order(chain)
