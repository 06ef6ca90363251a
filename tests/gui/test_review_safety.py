"""The review desk cannot lose work by accident, in the window: Enter never discards, a discard is undone,
a task in review is not made done in the Tasks pane, and Approve & merge asks about unsent comments."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from ralph_desk.domain.enums import ReviewCommentState, TaskStatus
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.dialogs import DiscardDialog, FinishReviewBox
from ralph_desk.gui.panes.inbox.reviews.view import ReviewsView
from ralph_desk.services.container import Services
from tests.gui import test_reviews as reviews
from tests.gui.conftest import controller, settle
from tests.gui.test_reviews import reviews_tab, wait_for_diff
from tests.support.git_changes import git

in_review = reviews.in_review  # the demo as a git project, one task in review after two sessions

WAIT_MS = 10_000


def tip_of(services: Services, task_id: int) -> str | None:
    held = services.workspaces.existing(task_id)
    return services.workspaces.head(held) if held is not None else None


def open_discard(qtbot: QtBot, view: ReviewsView) -> DiscardDialog:
    qtbot.mouseClick(view.detail.discard, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    assert isinstance(dialog, DiscardDialog)
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT_MS)
    return dialog


def test_enter_in_discard_cancels_and_the_branch_and_worktree_stay(
    qtbot: QtBot, window: MainWindow, services: Services, in_review: int
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    tip = tip_of(services, in_review)

    dialog = open_discard(qtbot, view)
    qtbot.keyClick(dialog, Qt.Key.Key_Return)
    assert not dialog.isVisible() and dialog.result() == QDialog.DialogCode.Rejected
    dialog = open_discard(qtbot, view)
    dialog.skip.setFocus()
    qtbot.keyClick(dialog.skip, Qt.Key.Key_Enter)
    settle(qtbot, window)

    assert dialog.result() == QDialog.DialogCode.Rejected
    assert services.tasks.get(in_review).status is TaskStatus.IN_REVIEW
    assert tip is not None and tip_of(services, in_review) == tip
    held = services.workspaces.existing(in_review)
    assert held is not None and held.path.is_dir()


def test_undo_after_a_discard_brings_the_work_back_in_review(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    tip = tip_of(services, in_review)
    assert tip is not None

    open_discard(qtbot, view).ok.click()
    toast = controller(window).pending.toast
    qtbot.waitUntil(toast.isVisible, timeout=WAIT_MS)
    assert services.tasks.get(in_review).status is TaskStatus.PENDING
    assert tip_of(services, in_review) is None
    kept = git(project, "for-each-ref", "--format=%(objectname)", "refs/ralph/discarded/").strip()
    assert kept == tip and f"Discarded the work of task #{in_review}" in toast.text.text()

    qtbot.mouseClick(toast.undo_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: services.tasks.get(in_review).status is TaskStatus.IN_REVIEW, timeout=WAIT_MS)
    assert tip_of(services, in_review) == tip
    wait_for_diff(qtbot, view, in_review)
    qtbot.waitUntil(lambda: "work restored on ralph/" in window.message_bar.text, timeout=WAIT_MS)


def test_done_set_in_the_tasks_pane_on_work_in_review_is_refused_saying_to_approve_it(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    tip = tip_of(services, in_review)
    base = git(project, "rev-parse", "main").strip()
    window.show_pane("tasks")
    assert window.tasks.select_task(in_review)
    fields = window.tasks.detail.fields
    qtbot.waitUntil(lambda: fields.task is not None and fields.task.id == in_review, timeout=WAIT_MS)

    fields.status.setCurrentIndex(fields.status.findData(TaskStatus.DONE.value))
    qtbot.mouseClick(fields.save, Qt.MouseButton.LeftButton)
    settle(qtbot, window)

    assert window.message_bar.level == "error"
    assert "approve it in Reviews" in window.message_bar.text
    assert f"`ralph-desk review approve {in_review}`" in window.message_bar.text
    assert services.tasks.get(in_review).status is TaskStatus.IN_REVIEW
    assert tip_of(services, in_review) == tip and git(project, "rev-parse", "main").strip() == base
    assert fields.status.currentData() == TaskStatus.IN_REVIEW.value and not fields.dirty


def approve_with_a_comment(
    qtbot: QtBot, window: MainWindow, services: Services, task: int
) -> FinishReviewBox:
    """An unsent line comment on the task, then Approve & merge: the window asks how to finish."""
    services.reviews.add_comment(task, "Name the units", "src/tides.py", 2)
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, task)
    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: isinstance(view.dialog, FinishReviewBox) and view.dialog.isVisible(), timeout=WAIT_MS
    )
    assert isinstance(view.dialog, FinishReviewBox)
    return view.dialog


def states(services: Services, task: int) -> list[ReviewCommentState]:
    return [comment.state for comment in services.reviews.comments(task)]


def test_approve_with_unsent_comments_asks_and_enter_merges_nothing(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    base = git(project, "rev-parse", "main").strip()

    box = approve_with_a_comment(qtbot, window, services, in_review)
    assert "1 comment you have not sent" in box.text()
    qtbot.keyClick(box, Qt.Key.Key_Return)
    settle(qtbot, window)

    assert not box.isVisible()
    assert services.tasks.get(in_review).status is TaskStatus.IN_REVIEW
    assert git(project, "rev-parse", "main").strip() == base
    assert states(services, in_review) == [ReviewCommentState.OPEN]


def test_sending_the_unsent_comments_requests_changes_instead_of_merging(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    base = git(project, "rev-parse", "main").strip()
    box = approve_with_a_comment(qtbot, window, services, in_review)

    box.send_button.click()

    qtbot.waitUntil(lambda: services.tasks.get(in_review).status is TaskStatus.PENDING, timeout=WAIT_MS)
    assert states(services, in_review) == [ReviewCommentState.REQUESTED]
    assert git(project, "rev-parse", "main").strip() == base


def test_merging_and_discarding_the_unsent_comments_merges(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    box = approve_with_a_comment(qtbot, window, services, in_review)

    box.drop_button.click()

    qtbot.waitUntil(lambda: services.tasks.get(in_review).status is TaskStatus.DONE, timeout=WAIT_MS)
    assert git(project, "show", "main:src/alerts.py") == "ALERT = 'low'\n"
    assert states(services, in_review) == [ReviewCommentState.ADDRESSED]
