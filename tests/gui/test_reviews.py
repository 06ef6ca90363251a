"""The Reviews tab in the window, over real services and a real git repository with real task branches."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.enums import ReviewCommentState, TaskStatus
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.pane import REVIEWS
from ralph_desk.gui.panes.inbox.reviews import wiring as reviews_wiring
from ralph_desk.gui.panes.inbox.reviews.diff_view import DiffView
from ralph_desk.gui.panes.inbox.reviews.rows import RowKind
from ralph_desk.gui.panes.inbox.reviews.view import ReviewsView
from ralph_desk.gui.worker import Worker
from ralph_desk.services.container import Services
from ralph_desk.services.merge_queue import merge_turn
from ralph_desk.services.reviews import ReviewService
from ralph_desk.vcs.initialise import make_repository
from tests.gui.conftest import controller, settle
from tests.support.demo_rows import task_id
from tests.support.git_changes import git

WAIT_MS = 10_000
TIDES = "".join(f"def tide_{n}(height):\n    return height * {n}\n" for n in range(1, 6))
FIRST = {"src/tides.py": TIDES, "docs/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00first"}
SECOND = {"src/tides.py": TIDES.replace("height * 3", "height * 3.5"), "src/alerts.py": "ALERT = 'low'\n"}


@pytest.fixture
def in_review(project: Path, services: Services) -> int:
    """The demo made a git project, and a pending task put in review after two sessions."""
    make_repository(project, "main")
    chosen = task_id(services, "Mark high and low water on the chart")
    put_in_review(services, chosen, (FIRST, "Wrote the tide functions"), (SECOND, "Corrected tide 3; alerts"))
    return chosen


def reviews_tab(window: MainWindow) -> ReviewsView:
    """The Reviews tab, shown."""
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    return window.inbox.reviews


def wait_for_diff(qtbot: QtBot, view: ReviewsView, task: int) -> DiffView:
    """Wait until the tab shows the task with its diff."""
    qtbot.waitUntil(lambda: view.current is not None and view.current.task_id == task, timeout=WAIT_MS)
    diff = view.detail.diff
    qtbot.waitUntil(lambda: diff.model.rowCount() > 0, timeout=WAIT_MS)
    return diff


def choose_session(view: ReviewsView, session_id: str) -> None:
    """Ask for the diff of one session."""
    view.detail.session.setCurrentIndex(view.detail.session.findData(session_id))


def files_listed(diff: DiffView) -> dict[str, tuple[str, str]]:
    model = diff.file_model
    return {
        model.data(model.index(row, 0)): (model.data(model.index(row, 1)), model.data(model.index(row, 2)))
        for row in range(model.rowCount())
    }


def test_a_task_in_review_arrives_through_the_change_feed_with_its_account_and_its_branch_diff(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)

    assert window.inbox.tabs.tabText(REVIEWS) == "Reviews (1)"
    assert window.inbox.summary.text().endswith(" · 1 task in review")
    assert f"({sum(window.inbox.counts) + 1})" in window.windowTitle()  # the Inbox badge counts it too
    detail = view.detail
    assert "Corrected tide 3; alerts" in detail.summary.text()
    assert detail.branch.text().startswith(f"ralph/{in_review}-") and detail.branch.text().endswith("→ main")
    assert detail.signals.text().count("done") == 2
    sessions = [detail.session.itemData(index) for index in range(detail.session.count())]
    assert sessions[0] == "" and sessions[-2:] == [f"review-{in_review}-1", f"review-{in_review}-2"]
    assert files_listed(diff) == {
        "docs/logo.png (binary)": ("—", "—"),
        "src/alerts.py": ("1", "0"),
        "src/tides.py": ("10", "0"),
    }
    assert any(row.text == "Binary file — its content is not shown" for row in diff.model.layout.rows)


def test_one_sessions_diff_shows_only_what_that_session_changed(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)

    choose_session(view, f"review-{in_review}-2")
    qtbot.waitUntil(lambda: len(files_listed(diff)) == 2, timeout=WAIT_MS)

    assert files_listed(diff) == {"src/alerts.py": ("1", "0"), "src/tides.py": ("1", "1")}
    choose_session(view, f"review-{in_review}-1")
    qtbot.waitUntil(lambda: "docs/logo.png (binary)" in files_listed(diff), timeout=WAIT_MS)
    assert "src/alerts.py" not in files_listed(diff)


def test_a_line_comment_is_kept_on_the_task_and_shown_under_its_line(
    qtbot: QtBot, window: MainWindow, services: Services, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)
    row = diff.row_of_line("src/tides.py", 6)
    assert row is not None
    index = diff.model.index(row)
    diff.lines.scrollTo(index)

    qtbot.mouseClick(
        diff.lines.viewport(), Qt.MouseButton.LeftButton, pos=diff.lines.visualRect(index).center()
    )
    qtbot.keyClicks(diff.comment_box.text, "Use the harmonic constant here")
    qtbot.keyClick(diff.comment_box.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    qtbot.waitUntil(lambda: diff.model.row(row + 1).kind is RowKind.COMMENT, timeout=WAIT_MS)
    (kept,) = services.reviews.comments(in_review)
    assert (kept.body, kept.file, kept.line, kept.state) == (
        "Use the harmonic constant here",
        "src/tides.py",
        6,
        ReviewCommentState.OPEN,
    )
    assert diff.model.row(row + 1).text == "Use the harmonic constant here"


def test_approve_and_merge_puts_the_work_on_the_base_and_the_task_leaves_the_tab(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)

    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty, timeout=WAIT_MS)
    assert services.tasks.get(in_review).status is TaskStatus.DONE
    assert git(project, "show", "main:src/alerts.py") == "ALERT = 'low'\n"
    assert (project / "src" / "alerts.py").read_text() == "ALERT = 'low'\n"  # the checkout follows main
    assert window.inbox.tabs.tabText(REVIEWS) == "Reviews"
    assert "in review" not in window.inbox.summary.text()
    assert f"({sum(window.inbox.counts)})" in window.windowTitle()
    assert "merged" in window.message_bar.text


def test_approving_after_the_branch_moved_merges_nothing_and_shows_the_new_diff_to_approve_again(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)
    assert "src/sneaky.py" not in files_listed(diff)
    worktree = services.workspaces.existing(in_review)
    assert worktree is not None
    (worktree.path / "src" / "sneaky.py").write_text("STEAL = True\n")  # while the person reads the diff
    git(worktree.path, "add", "-A")
    git(worktree.path, "commit", "-q", "-m", "one more thing")
    base = git(project, "rev-parse", "main")

    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: "src/sneaky.py" in files_listed(diff), timeout=WAIT_MS)
    assert "The work changed since you opened it; here is the new diff" in view.detail.moved.text()
    assert view.detail.moved.isVisible() and "was not merged" in window.message_bar.text
    assert git(project, "rev-parse", "main") == base and not (project / "src" / "sneaky.py").exists()
    assert services.tasks.get(in_review).status is TaskStatus.IN_REVIEW
    assert services.reviews.queued(in_review) is None

    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)  # seen now: approved again

    qtbot.waitUntil(lambda: services.tasks.get(in_review).status is TaskStatus.DONE, timeout=WAIT_MS)
    assert git(project, "show", "main:src/sneaky.py") == "STEAL = True\n"


def test_a_branch_changing_the_project_s_rules_is_flagged_above_its_diff_and_not_merged(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    worktree = services.workspaces.existing(in_review)
    assert worktree is not None
    (worktree.path / ".ralph" / "config.json").write_text('{"review_gate": false}\n')
    git(worktree.path, "add", "-f", ".ralph/config.json")
    git(worktree.path, "commit", "-q", "-m", "no more reviews")
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    qtbot.waitUntil(lambda: view.detail.rules.isVisible(), timeout=WAIT_MS)
    assert ".ralph/config.json" in view.detail.rules.text()
    base = git(project, "rev-parse", "main")

    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(
        lambda: "remove those changes from the branch" in window.message_bar.text, timeout=WAIT_MS
    )
    assert git(project, "rev-parse", "main") == base
    assert services.tasks.get(in_review).status is TaskStatus.IN_REVIEW


def test_a_merge_that_would_conflict_is_refused_in_the_window_and_the_task_goes_back(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    (project / "src").mkdir()
    (project / "src" / "alerts.py").write_text("ALERT = 'high'\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "The person wrote alerts too")
    base = git(project, "rev-parse", "main")

    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: "was not merged" in window.message_bar.text, timeout=WAIT_MS)
    assert "src/alerts.py" in window.message_bar.text
    assert git(project, "rev-parse", "main") == base
    assert services.tasks.get(in_review).status is TaskStatus.PENDING
    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty, timeout=WAIT_MS)


def test_request_changes_sends_the_task_back_with_its_line_comments_and_the_message(
    qtbot: QtBot, window: MainWindow, services: Services, in_review: int
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    services.reviews.add_comment(in_review, "Name the constant", "src/tides.py", 2)
    qtbot.waitUntil(lambda: len(view.comments) == 1, timeout=WAIT_MS)  # through the change feed

    qtbot.mouseClick(view.detail.request, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.message, "And add a test for tide 3")
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty, timeout=WAIT_MS)
    assert services.tasks.get(in_review).status is TaskStatus.PENDING
    sent = services.reviews.requested(in_review)
    assert [(comment.body, comment.file, comment.line) for comment in sent] == [
        ("Name the constant", "src/tides.py", 2),
        ("And add a test for tide 3", None, None),
    ]


@pytest.mark.parametrize("skip", [False, True])
def test_discard_removes_the_branch_and_starts_the_task_again_or_skips_it(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, in_review: int, skip: bool
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    branch = view.detail.branch.text().split(" → ")[0]

    qtbot.mouseClick(view.detail.discard, Qt.MouseButton.LeftButton)
    dialog = view.dialog
    assert dialog is not None
    qtbot.waitExposed(dialog)
    if skip:
        qtbot.mouseClick(dialog.skip, Qt.MouseButton.LeftButton, pos=QPoint(6, dialog.skip.height() // 2))
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: view.stack.currentWidget() is view.empty, timeout=WAIT_MS)
    expected = TaskStatus.SKIPPED if skip else TaskStatus.PENDING
    assert services.tasks.get(in_review).status is expected
    assert git(project, "branch", "--list", branch) == ""
    settle(qtbot, window)


def test_the_reviews_tab_with_a_diff_fits_a_laptop_screen_in_both_views(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    laptop = QSize(1280, 720)
    window.resize(laptop)
    qtbot.waitUntil(lambda: window.size() == laptop)
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)

    for split in (True, False):
        diff.set_split(split)
        QApplication.processEvents()  # layouts ask for room through posted events
        assert window.size() == laptop
    assert window.minimumSizeHint().width() <= 1000


def test_a_change_to_a_task_not_in_review_reads_no_review_and_a_change_to_one_does(
    qtbot: QtBot, window: MainWindow, services: Services, in_review: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    settle(qtbot, window)
    wiring = controller(window).reviews
    listed: list[int] = []
    shown: list[object] = []
    read_reviews, show = ReviewService.list, wiring._show
    monkeypatch.setattr(ReviewService, "list", lambda self: listed.append(1) or read_reviews(self))
    monkeypatch.setattr(wiring, "_show", lambda read: shown.append(read) or show(read))

    services.tasks.update(task_id(services, "Dark mode for the tide chart"), priority="critical")
    qtbot.waitUntil(lambda: bool(shown), timeout=WAIT_MS)
    settle(qtbot, window)

    assert listed == [] and set(shown) == {None}
    services.tasks.update(in_review, priority="critical")
    qtbot.waitUntil(lambda: shown[-1] is not None, timeout=WAIT_MS)
    assert listed


def test_an_approval_while_another_merges_waits_queued_and_the_worker_goes_on(
    qtbot: QtBot,
    window: MainWindow,
    services: Services,
    project: Path,
    in_review: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reviews_wiring, "WINDOW_WAIT_S", 0.2)  # the turn is held throughout: no race
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, in_review)
    worker = window.findChild(Worker)
    assert worker is not None

    with merge_turn(services.paths):  # another merge holds the turn (it would for minutes)
        qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)
        # Before, the window's worker waited up to 10 min per lock, every read queued behind it.
        qtbot.waitUntil(lambda: "approved and queued" in window.message_bar.text, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: worker.idle, timeout=WAIT_MS)
        assert f"#{in_review}" in window.message_bar.text
        assert services.tasks.get(in_review).status is TaskStatus.IN_REVIEW
        assert services.reviews.queued(in_review) is not None  # the approval is kept

    merged = services.reviews.merge_queued()  # the holder merges the queue in turn

    assert in_review in merged and services.tasks.get(in_review).status is TaskStatus.DONE
    assert git(project, "show", "main:src/alerts.py") == "ALERT = 'low'\n"
