"""Enter in a dialog does the dialog's action (never Cancel), as soon as the action is possible."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QWidget
from pytestqt.qtbot import QtBot

from ralph_desk.domain.records import Task
from ralph_desk.gui.panes.disciplines.dialogs import NewDisciplineDialog
from ralph_desk.gui.panes.features.dialogs import NewFeatureDialog
from ralph_desk.gui.panes.inbox.dialogs import EditSuggestionDialog, ReasonDialog
from ralph_desk.services.container import Services


def shown(qtbot: QtBot, dialog: QDialog) -> QDialog:
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def press_enter(widget: QWidget) -> None:
    widget.setFocus()
    QTest.keyClick(widget, Qt.Key.Key_Return)


def test_enter_in_new_feature_creates_it(qtbot: QtBot) -> None:
    dialog = shown(qtbot, NewFeatureDialog(["charts"]))
    assert isinstance(dialog, NewFeatureDialog)
    QTest.keyClicks(dialog.display_name, "Tide tables")

    press_enter(dialog.display_name)

    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.values()["name"] == "tide-tables"


def test_enter_in_new_discipline_creates_it_even_after_the_colour_button_had_focus(qtbot: QtBot) -> None:
    dialog = shown(qtbot, NewDisciplineDialog([]))
    assert isinstance(dialog, NewDisciplineDialog)
    QTest.keyClicks(dialog.display_name, "Data science")
    for widget in dialog.findChildren(QWidget):  # an auto-default button taking focus took Enter away
        if widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isVisible():
            widget.setFocus()

    press_enter(dialog.icon)

    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.values()["name"] == "data-science"


def test_enter_does_nothing_while_the_action_is_not_possible(qtbot: QtBot) -> None:
    dialog = shown(qtbot, NewFeatureDialog([]))
    assert isinstance(dialog, NewFeatureDialog)

    press_enter(dialog.display_name)

    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted


def test_enter_in_edit_and_approve_saves_and_approves(qtbot: QtBot, services: Services) -> None:
    task: Task = next(t for t in services.tasks.list() if t.status.value == "draft")
    dialog = shown(qtbot, EditSuggestionDialog(services.tasks.get(task.id), ["tide-data"], ["backend"]))
    assert isinstance(dialog, EditSuggestionDialog)
    dialog.title.setText("A better title")

    press_enter(dialog.title)

    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.values()["title"] == "A better title"


def test_enter_after_a_reason_rejects_and_shift_enter_breaks_the_line(qtbot: QtBot) -> None:
    dialog = shown(qtbot, ReasonDialog("Reject suggestion", "Why?"))
    assert isinstance(dialog, ReasonDialog)
    QTest.keyClicks(dialog.reason, "Out of scope")
    QTest.keyClick(dialog.reason, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClicks(dialog.reason, "for 0.1")
    assert dialog.isVisible()

    press_enter(dialog.reason)

    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.text() == "Out of scope\nfor 0.1"
