"""Creating and deleting tasks in the window, over the demo database."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.services.container import Services
from ralph_desk.services.errors import NotFoundError
from ralph_desk.vcs.initialise import make_repository
from tests.gui.conftest import controller, settle
from tests.support.demo_rows import task_id
from tests.support.git_repo import git

WAIT_MS = 3000


def test_new_task_creates_a_draft_or_pending_task_and_selects_it(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("tasks")
    pane = window.tasks

    qtbot.mouseClick(pane.new_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    dialog = controller(window).tasks.task_dialog
    assert dialog is not None and dialog.isVisible()
    assert not dialog.create_button.isEnabled()  # a task needs a title
    qtbot.keyClicks(dialog.title, "Show the moon phase beside the tide curve")
    settle(qtbot, window)
    dialog.status.setCurrentIndex(dialog.status.findData(TaskStatus.DRAFT.value))
    qtbot.keyClick(dialog.title, Qt.Key.Key_Return)  # Enter creates
    settle(qtbot, window)

    created = services.tasks.list(search="moon phase")
    assert [task.title for task in created] == ["Show the moon phase beside the tide curve"]
    assert created[0].status is TaskStatus.DRAFT
    qtbot.waitUntil(lambda: pane.selected_id() == created[0].id, timeout=WAIT_MS)


def test_delete_is_refused_with_the_reason_while_other_tasks_depend_on_it(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    needed = task_id(services, "Draw the seven-day tide curve")  # the keyboard task depends on it
    dependents = services.tasks.dependents(needed)
    assert dependents
    window.show_pane("tasks")
    window.tasks.select_task(needed)

    window.tasks.delete_button.click()
    settle(qtbot, window)

    assert controller(window).tasks.confirm_box is None
    assert window.message_bar.level == "error"
    assert f"Task #{needed} cannot be deleted" in window.message_bar.text
    assert f"#{dependents[0]}" in window.message_bar.text
    assert services.tasks.get(needed).id == needed


def test_delete_asks_first_then_removes_the_task(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    doomed = task_id(services, "Alert settings page")
    assert services.tasks.dependents(doomed) == []
    window.show_pane("tasks")
    window.tasks.select_task(doomed)

    window.tasks.delete_button.click()
    settle(qtbot, window)
    box = controller(window).tasks.confirm_box
    assert box is not None and box.isVisible()
    box.confirm_button.click()
    settle(qtbot, window)

    with pytest.raises(NotFoundError):
        services.tasks.get(doomed)
    qtbot.waitUntil(lambda: window.tasks.model.row_of(doomed) is None, timeout=WAIT_MS)


def test_deleting_a_task_removes_its_worktree_and_says_its_branch_with_unmerged_work_was_kept(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path
) -> None:
    make_repository(project, "main")
    doomed = task_id(services, "Alert settings page")
    worktree = put_in_review(services, doomed, ({"alerts.txt": "wind over 30 kn\n"}, "alerts set"))
    window.show_pane("tasks")
    window.tasks.select_task(doomed)

    window.tasks.delete_button.click()
    settle(qtbot, window)
    box = controller(window).tasks.confirm_box
    assert box is not None and "its worktree" in box.text()
    box.confirm_button.click()
    settle(qtbot, window)

    qtbot.waitUntil(lambda: "kept the branch" in window.message_bar.text, timeout=WAIT_MS)
    assert f"kept the branch {worktree.branch}: it holds work not on main" in window.message_bar.text
    assert not worktree.path.exists()
    assert git(project, "for-each-ref", "--format=%(refname)", worktree.ref) == worktree.ref
