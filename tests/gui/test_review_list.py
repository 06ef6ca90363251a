"""The list of tasks in review: whole titles, the order chosen, a batch decided through the review service."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.checks import CheckPurpose
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui.dialogs.confirm import ConfirmBox
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.dialogs import RequestChangesDialog
from ralph_desk.gui.panes.inbox.reviews.entry import ReviewEntry
from ralph_desk.gui.panes.inbox.reviews.review_list import ReviewList, ReviewOrder
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository
from tests.gui.test_review_checks import LINT, TESTS
from tests.gui.test_reviews import FIRST, WAIT_MS, reviews_tab
from tests.support.git_changes import git
from tests.support.git_repo import commit_all


def entry(task_id: int, waited_h: int) -> ReviewEntry:
    since = datetime.now(UTC) - timedelta(hours=waited_h, minutes=1)
    return ReviewEntry(task_id, f"Task {task_id}", "", "", "main", since=since)


def shown_ids(view: ReviewList) -> list[int]:
    return [record.task_id for record in view.model.items]


def test_the_list_is_sorted_by_waiting_time_or_by_task_number_as_chosen(qtbot: QtBot) -> None:
    view = ReviewList()
    qtbot.addWidget(view)
    view.set_entries([entry(3, 1), entry(7, 9), entry(5, 4)])

    assert shown_ids(view) == [7, 5, 3]  # longest waiting first
    view.order_actions[ReviewOrder.ID].trigger()
    assert shown_ids(view) == [3, 5, 7]
    view.set_entries([entry(3, 1), entry(7, 9), entry(5, 4), entry(1, 2)])
    assert shown_ids(view) == [1, 3, 5, 7]  # the order chosen stays
    assert view.order_actions[ReviewOrder.ID].isChecked()


def test_a_row_shows_the_whole_title_first_then_how_long_it_waits(qtbot: QtBot) -> None:
    view = ReviewList()
    qtbot.addWidget(view)
    view.set_entries([entry(3, 5)])

    text = view.model.data(view.model.index(0, 0))

    first, second = text.split("\n")
    assert first == "#3  Task 3" and "done 5 h ago" in second and "awaits review" in second


def test_choosing_several_tasks_offers_the_batch_and_one_hides_it(qtbot: QtBot) -> None:
    view = ReviewList()
    qtbot.addWidget(view)
    view.show()
    view.set_entries([entry(3, 1), entry(7, 9), entry(5, 4)])

    view.table.selectAll()
    assert view.batch.isVisible() and view.chosen_label.text() == "3 tasks chosen:"
    assert [chosen.task_id for chosen in view.chosen()] == [7, 5, 3]
    view.table.selectRow(1)
    assert not view.batch.isVisible()


@pytest.fixture
def two_in_review(project: Path, services: Services) -> tuple[int, int]:
    """Two tasks in review with required checks: the first fails `tests`, the other passes."""
    make_repository(project, "main")
    update_config(services.paths, checks=[check.model_dump() for check in (TESTS, LINT)])
    commit_all(project, "checks")
    pending = [task.id for task in services.tasks.list(status=TaskStatus.PENDING)]
    failing, passing = pending[:2]
    for chosen, edits in ((failing, FIRST), (passing, {"ok": "", "src/second.py": "SECOND = 2\n"})):
        worktree = put_in_review(services, chosen, (edits, f"Work of #{chosen}"))
        services.checks.run([TESTS, LINT], worktree.path, purpose=CheckPurpose.SESSION, task_id=chosen)
    return failing, passing


def test_batch_approve_merges_each_task_and_says_which_one_failing_checks_kept_in_review(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, two_in_review: tuple[int, int]
) -> None:
    failing, passing = two_in_review
    view = reviews_tab(window)
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=WAIT_MS)
    view.table.selectAll()

    qtbot.mouseClick(view.list.approve_all, Qt.MouseButton.LeftButton)
    box = view.dialog
    assert isinstance(box, ConfirmBox) and f"#{failing}" in box.text() and f"#{passing}" in box.text()
    box.confirm_button.click()

    qtbot.waitUntil(lambda: services.tasks.get(passing).status is TaskStatus.DONE, timeout=WAIT_MS)
    assert git(project, "show", "main:src/second.py") == "SECOND = 2\n"
    assert services.tasks.get(failing).status is TaskStatus.IN_REVIEW
    qtbot.waitUntil(lambda: "1 of 2 done" in window.message_bar.text, timeout=WAIT_MS)
    assert f"#{failing}: not merged, its required checks fail (tests failed)" in window.message_bar.text
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=WAIT_MS)


def test_batch_request_changes_sends_every_chosen_task_back_with_the_message(
    qtbot: QtBot, window: MainWindow, services: Services, two_in_review: tuple[int, int]
) -> None:
    view = reviews_tab(window)
    qtbot.waitUntil(lambda: view.model.rowCount() == 2, timeout=WAIT_MS)
    view.table.selectAll()

    qtbot.mouseClick(view.list.changes_all, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    assert isinstance(dialog, RequestChangesDialog)
    dialog.message.setPlainText("Name the units of every height.")
    QApplication.processEvents()
    dialog.ok.click()

    for task in two_in_review:
        qtbot.waitUntil(
            lambda task=task: services.tasks.get(task).status is TaskStatus.PENDING, timeout=WAIT_MS
        )
        bodies = [comment.body for comment in services.reviews.comments(task)]
        assert "Name the units of every height." in bodies
    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty, timeout=WAIT_MS)
