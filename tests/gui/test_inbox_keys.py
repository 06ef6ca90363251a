"""The Inbox at the keyboard: it opens where work waits; Ctrl+Tab, Ctrl+Z from a text box, F8, focus rings."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QPushButton, QTextEdit
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import FlagResolution
from ralph_desk.gui import theme
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import FLAGS, QUESTIONS, SUGGESTIONS
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.test_keyboard import press

WAIT_MS = 3000


def _answer_every_question(services: Services) -> None:
    for ask in services.inbox.asks():
        services.inbox.answer(ask.id, "Metres.")


def test_the_inbox_opens_on_the_tab_that_holds_waiting_work(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("tasks")
    _answer_every_question(services)
    qtbot.waitUntil(lambda: window.inbox.counts[0] == 0, timeout=WAIT_MS)
    assert window.inbox.counts[1] > 0  # the demo's suggestions wait

    window.show_pane("inbox")

    assert window.inbox.tabs.currentIndex() == SUGGESTIONS


def test_a_tab_the_person_chose_is_kept_while_the_inbox_is_open(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(QUESTIONS)
    _answer_every_question(services)

    qtbot.waitUntil(lambda: window.inbox.counts[0] == 0, timeout=WAIT_MS)

    assert window.inbox.tabs.currentIndex() == QUESTIONS


def test_ctrl_tab_switches_the_inbox_tabs_wherever_the_keyboard_is(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(QUESTIONS)
    window.sidebar.setFocus()  # outside the tabs

    press(qtbot, window, "Ctrl+Tab")
    assert window.inbox.tabs.currentIndex() == SUGGESTIONS
    press(qtbot, window, "Ctrl+Shift+Tab")
    assert window.inbox.tabs.currentIndex() == QUESTIONS


def _dismiss_a_flag(qtbot: QtBot, window: MainWindow) -> int:
    flags = window.inbox.flags
    window.inbox.show_tab(FLAGS)
    flag_id = flags.model.record(0).flag.id
    assert flags.select_flag(flag_id)
    qtbot.mouseClick(flags.triage_buttons["dismissed"], Qt.MouseButton.LeftButton)
    assert controller(window).pending.held is not None
    return flag_id


def _type_an_answer(qtbot: QtBot, window: MainWindow, text: str) -> QTextEdit:
    window.inbox.show_tab(QUESTIONS)
    box = window.inbox.questions.card_at(0).answer
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=WAIT_MS)
    if text:
        qtbot.keyClicks(box, text)
    return box


def test_ctrl_z_in_a_text_box_with_nothing_typed_undoes_the_decision(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("inbox")
    flag_id = _dismiss_a_flag(qtbot, window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    box = _type_an_answer(qtbot, window, "")

    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)

    assert controller(window).pending.held is None
    settle(qtbot, window)
    assert services.signals.get(flag_id).resolution is FlagResolution.OPEN


def test_ctrl_z_in_a_text_box_undoes_the_typing_first_then_the_decision(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.show_pane("inbox")
    _dismiss_a_flag(qtbot, window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    box = _type_an_answer(qtbot, window, "Metres")

    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert box.toPlainText() != "Metres"  # the typing is undone first
    assert controller(window).pending.held is not None  # the decision still waits

    while box.document().isUndoAvailable():
        qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert controller(window).pending.held is None


def test_f8_outlines_the_card_it_moves_to(qtbot: QtBot, window: MainWindow) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(QUESTIONS)
    questions = window.inbox.questions

    press(qtbot, window, "F8")
    assert questions.card_at(0).highlighted
    press(qtbot, window, "F8")

    assert questions.card_at(1).highlighted and not questions.card_at(0).highlighted


def test_help_lists_undo_new_task_and_the_tab_keys(qtbot: QtBot, window: MainWindow) -> None:
    press(qtbot, window, "F1")

    dialog = window.shortcuts_dialog
    assert dialog is not None
    keys = dialog.keys()
    for expected in ("Ctrl+Z", "Ctrl+N", "Ctrl+Tab", "Ctrl+Shift+Tab"):
        assert expected in keys


def _ring_pixels(button: QPushButton, focused: bool) -> QImage:
    if focused:
        button.setFocus(Qt.FocusReason.TabFocusReason)
        button.window().setAttribute(Qt.WidgetAttribute.WA_KeyboardFocusChange)  # as a press of Tab does
        QApplication.processEvents()
    else:
        button.clearFocus()
    return button.grab().toImage()


def _clearly_changed(before: QImage, after: QImage) -> int:
    """How many pixels focus changed to a clearly different colour (lightness, or hue for a strong colour)."""
    count = 0
    for y in range(before.height()):
        for x in range(before.width()):
            old, new = before.pixelColor(x, y), after.pixelColor(x, y)
            hue = min(abs(old.hslHue() - new.hslHue()), 360 - abs(old.hslHue() - new.hslHue()))
            strong = min(old.hslSaturation(), new.hslSaturation()) > 60 and old.hslHue() >= 0 <= new.hslHue()
            count += abs(old.lightness() - new.lightness()) >= 50 or (strong and hue >= 40)
    return count


def test_the_focus_ring_of_a_button_is_clearly_visible_in_both_schemes(
    qtbot: QtBot, window: MainWindow, fusion: None
) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    buttons = {  # an option, a primary and a plain button
        window.inbox.questions.card_at(0).option_buttons[0]: "inbox",
        window.loop.start: "loop",
        window.loop.preview: "loop",
    }
    try:
        for scheme in (theme.Scheme.LIGHT, theme.Scheme.DARK):
            theme.choose(scheme)
            for button, pane in buttons.items():
                window.show_pane(pane)
                window.inbox.show_tab(QUESTIONS)
                QApplication.processEvents()
                before = _ring_pixels(button, False)
                after = _ring_pixels(button, True)
                assert button.hasFocus()
                ring = 1.6 * (
                    button.width() + button.height()
                )  # most of a ring one pixel wide (corners round)
                assert _clearly_changed(before, after) >= ring, (
                    scheme,
                    button.text(),
                )
    finally:
        theme.choose(None)
