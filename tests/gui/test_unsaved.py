"""Unsaved edits are never lost: another selection, another pane or closing asks Save, Discard or Cancel."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import Recipe
from ralph_desk.gui.main_window import PANES, MainWindow
from ralph_desk.gui.panes.disciplines.pane import TOOLS
from ralph_desk.gui.unsaved import UnsavedBox
from ralph_desk.gui.widgets.sidebar import UNSAVED_MARK
from ralph_desk.project import read_config
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.gui.test_disciplines import cell, checked, click_row, open_discipline
from tests.gui.test_tasks import CHART, select, task_id

WAIT_MS = 5000


def row_of(key: str) -> int:
    return next(row for row, entry in enumerate(PANES) if entry.key == key)


def shown_task(window: MainWindow) -> int | None:
    data = window.tasks.detail.data
    return data.task.id if data is not None else None


def asked(box: UnsavedBox | None) -> UnsavedBox:
    assert box is not None and box.isVisible()
    return box


def test_another_task_with_an_unsaved_description_asks_and_cancel_keeps_the_text(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    other = next(t.id for t in services.tasks.list() if t.id != chart)
    select(qtbot, window, chart)
    fields = window.tasks.detail.fields
    fields.description.setPlainText("A description I typed")
    assert window.sidebar.unsaved("tasks")
    assert window.sidebar.item(row_of("tasks")).text().endswith(UNSAVED_MARK)

    window.tasks.select_task(other)  # as a click on another row

    box = asked(window.tasks.guard.box)
    assert box.defaultButton() is box.save_button
    assert window.tasks.selected_id() == chart
    box.cancel_button.click()
    settle(qtbot, window)
    assert window.tasks.selected_id() == chart
    assert fields.description.toPlainText() == "A description I typed" and fields.dirty


def test_discard_moves_on_and_save_stores_before_moving_on(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    chart = task_id(services, CHART)
    others = [t.id for t in services.tasks.list() if t.id != chart][:2]
    select(qtbot, window, chart)
    fields = window.tasks.detail.fields
    fields.description.setPlainText("Thrown away")

    window.tasks.select_task(others[0])
    asked(window.tasks.guard.box).discard_button.click()
    settle(qtbot, window)

    qtbot.waitUntil(
        lambda: (d := window.tasks.detail.data) is not None and d.task.id == others[0], timeout=WAIT_MS
    )
    assert services.tasks.get(chart).description != "Thrown away"
    assert not window.sidebar.unsaved("tasks")
    fields.description.setPlainText("Kept for good")

    window.tasks.select_task(others[1])
    asked(window.tasks.guard.box).save_button.click()
    settle(qtbot, window)

    qtbot.waitUntil(
        lambda: (d := window.tasks.detail.data) is not None and d.task.id == others[1], timeout=WAIT_MS
    )
    assert services.tasks.get(others[0]).description == "Kept for good"


def test_an_unticked_tool_survives_switching_discipline_when_saved(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    pane = open_discipline(qtbot, window, "backend", TOOLS)
    learned = cell(pane.detail.tools.model, "learned", Recipe.TASK_EXECUTION)
    click_row(qtbot, pane.detail.tools.view, learned)
    assert not checked(learned) and window.sidebar.unsaved("disciplines")

    pane.select_discipline("frontend")

    box = asked(pane.guard.box)
    assert "backend" in box.text()
    assert pane.selected_name() == "backend"
    box.save_button.click()
    settle(qtbot, window)
    qtbot.waitUntil(
        lambda: (shown := pane.detail.discipline) is not None and shown.name == "frontend", timeout=WAIT_MS
    )
    assert services.disciplines.get("backend").disabled_tools == ("learned",)


def test_another_pane_with_unsaved_feature_fields_asks_and_cancel_stays(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("features")
    fields = window.features.detail.fields
    qtbot.waitUntil(lambda: fields.feature is not None, timeout=WAIT_MS)
    fields.description.setPlainText("Half a thought")

    window.sidebar.setCurrentRow(row_of("inbox"))  # as a click in the sidebar

    box = asked(window.unsaved_box)
    assert window.current_pane == "features" and window.sidebar.currentRow() == row_of("features")
    box.cancel_button.click()
    settle(qtbot, window)
    assert window.current_pane == "features" and fields.description.toPlainText() == "Half a thought"

    window.sidebar.setCurrentRow(row_of("inbox"))
    asked(window.unsaved_box).discard_button.click()
    settle(qtbot, window)

    assert window.current_pane == "inbox" and window.sidebar.currentRow() == row_of("inbox")
    assert not fields.dirty and not window.sidebar.unsaved("features")


def test_a_click_on_another_pane_keeps_the_sidebar_on_the_pane_with_unsaved_edits(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("features")
    fields = window.features.detail.fields
    qtbot.waitUntil(lambda: fields.feature is not None, timeout=WAIT_MS)
    fields.description.setPlainText("Half a thought")
    sidebar = window.sidebar
    inbox_row = sidebar.visualItemRect(sidebar.item(row_of("inbox")))

    qtbot.mouseClick(sidebar.viewport(), Qt.MouseButton.LeftButton, pos=inbox_row.center())
    settle(qtbot, window)

    asked(window.unsaved_box)
    qtbot.waitUntil(lambda: sidebar.selectedItems() == [sidebar.item(row_of("features"))], timeout=WAIT_MS)
    assert window.current_pane == "features" and sidebar.currentRow() == row_of("features")


def test_closing_with_unsaved_loop_settings_asks_and_save_writes_them_then_closes(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("inbox")
    window.loop.settings.max_turns.setValue(7)

    assert not window.close()

    box = asked(window.unsaved_box)
    assert window.isVisible() and window.current_pane == "loop"
    with qtbot.waitSignal(window.sig_closed, timeout=WAIT_MS):
        box.save_button.click()
        settle(qtbot, window)
    assert read_config(services.paths).max_turns == 7


def test_enter_on_the_question_saves(qtbot: QtBot, window: MainWindow, services: Services) -> None:
    chart = task_id(services, CHART)
    select(qtbot, window, chart)
    window.tasks.detail.fields.title.setText("A sharper title")
    window.sidebar.setCurrentRow(row_of("inbox"))

    QTest.keyClick(asked(window.unsaved_box), Qt.Key.Key_Return)
    settle(qtbot, window)

    assert services.tasks.get(chart).title == "A sharper title"
    assert window.current_pane == "inbox"


def test_save_and_revert_stay_in_view_at_a_small_window_size(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.resize(QSize(1024, 640))
    select(qtbot, window, task_id(services, CHART))
    buttons: list[QWidget] = [window.tasks.detail.fields.save, window.tasks.detail.fields.revert]
    window.show_pane("features")
    buttons += [window.features.detail.fields.save, window.features.detail.fields.revert]
    open_discipline(qtbot, window, "backend")
    buttons += [window.disciplines.detail.save, window.disciplines.detail.revert]
    buttons += [window.loop.settings.save, window.loop.settings.revert]

    for widget in buttons:
        parent = widget.parentWidget()
        while parent is not None:
            assert not isinstance(parent, QScrollArea), (
                f"{widget.text()} scrolls with {type(parent).__name__}"
            )
            parent = parent.parentWidget()
