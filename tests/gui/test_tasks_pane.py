"""The Tasks pane alone, with its own tasks: selecting and filtering are told through its signals."""

from __future__ import annotations

from datetime import datetime

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.records import TaskSummary
from ralph_desk.gui.models.tasks import TITLE, TaskFilter
from ralph_desk.gui.panes.tasks.pane import TasksPane

MADE = datetime(2026, 11, 20, 9, 0)


def summary(task_id: int, title: str, status: TaskStatus = TaskStatus.PENDING) -> TaskSummary:
    """A task of feature `charts`, discipline `frontend`, written by a human."""
    return TaskSummary(
        task_id, title, status, Priority.MEDIUM, "charts", "frontend", TaskOrigin.HUMAN, MADE, MADE
    )


@pytest.fixture
def pane(qtbot: QtBot) -> TasksPane:
    """The pane, on its own, showing three tasks."""
    shown = TasksPane()
    qtbot.addWidget(shown)
    shown.show_tasks(
        [
            summary(4, "Draw the tide curve", TaskStatus.DONE),
            summary(7, "Mark high and low water"),
            summary(12, "Dark mode for the chart"),
        ]
    )
    return shown


def shown_titles(pane: TasksPane) -> list[str]:
    """The titles the table shows, top to bottom."""
    return [pane.proxy.index(row, TITLE).data() for row in range(pane.proxy.rowCount())]


def test_clicking_a_row_tells_which_task_was_selected(qtbot: QtBot, pane: TasksPane) -> None:
    row = pane.proxy.mapFromSource(pane.model.index(pane.model.row_of(7) or 0, 0))
    pane.show()

    with qtbot.waitSignal(pane.sig_task_selected, timeout=1000) as selected:
        qtbot.mouseClick(
            pane.table.viewport(), Qt.MouseButton.LeftButton, pos=pane.table.visualRect(row).center()
        )

    assert selected.args == [7]
    assert pane.selected_id() == 7


def test_a_filter_narrows_the_rows_and_the_count_says_so(pane: TasksPane) -> None:
    pane.apply_filter(TaskFilter(text="dark"))

    assert sorted(shown_titles(pane)) == ["Dark mode for the chart"]
    assert pane.count.text() == "1 of 3 tasks"


def test_selecting_a_task_hidden_by_the_filters_clears_them(qtbot: QtBot, pane: TasksPane) -> None:
    pane.apply_filter(TaskFilter(text="dark"))

    with qtbot.waitSignal(pane.sig_task_selected, timeout=1000) as selected:
        assert pane.select_task(4)

    assert selected.args == [4]
    assert len(shown_titles(pane)) == 3
    assert not pane.select_task(99)


def test_a_changed_task_updates_its_row_and_keeps_the_selection(qtbot: QtBot, pane: TasksPane) -> None:
    assert pane.select_task(12)

    pane.update_tasks([summary(12, "Dark mode for the chart", TaskStatus.BLOCKED)], removed=[4])

    assert pane.selected_id() == 12
    assert pane.model.record(pane.model.row_of(12) or 0).status is TaskStatus.BLOCKED
    assert pane.model.row_of(4) is None and pane.count.text() == "2 tasks"
