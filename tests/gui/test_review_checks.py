"""The checks of a task in review, in the window: the strip from the records, a check's output, Run checks
again, and Merge anyway asked when a required check fails; over real services and a real git project."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.checks import Check, CheckPurpose, CheckStatus
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui.dialogs.confirm import ConfirmBox
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.checks import ChecksStrip
from ralph_desk.gui.panes.inbox.reviews.view import ReviewsView
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository
from tests.gui.conftest import settle
from tests.gui.test_reviews import FIRST, WAIT_MS, reviews_tab, wait_for_diff
from tests.support.demo_rows import task_id
from tests.support.git_changes import git
from tests.support.git_repo import commit_all

PY = sys.executable
# Passes once a file named `ok` is in the folder it runs in; prints a numbered line per step either way.
TESTS = Check(
    name="tests",
    run=f"{PY} -c \"import pathlib, sys; print(*range(300), sep=chr(10)); print('FAILED t::x'); "
    f"sys.exit(0 if pathlib.Path('ok').exists() else 1)\"",
    timeout_s=60,
)
LINT = Check(name="lint", run=f"{PY} -c \"print('clean')\"", timeout_s=60)
TYPES = Check(name="types", run=f"{PY} -c \"print('typed')\"", timeout_s=60, required=False)


@pytest.fixture
def checked(project: Path, services: Services) -> int:
    """A task in review whose `tests` failed and `lint` passed after its done; `types` never ran."""
    make_repository(project, "main")
    update_config(services.paths, checks=[check.model_dump() for check in (TESTS, LINT, TYPES)])
    commit_all(project, "checks")
    chosen = task_id(services, "Mark high and low water on the chart")
    worktree = put_in_review(services, chosen, (FIRST, "Wrote the tide functions"))
    services.checks.run([TESTS, LINT], worktree.path, purpose=CheckPurpose.SESSION, task_id=chosen)
    return chosen


def strip_of(qtbot: QtBot, window: MainWindow, task: int) -> tuple[ReviewsView, ChecksStrip]:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, task)
    strip = view.detail.checks
    qtbot.waitUntil(lambda: strip.isVisible() and len(strip.buttons) == 3, timeout=WAIT_MS)
    return view, strip


def test_the_strip_shows_each_configured_check_with_its_latest_result(
    qtbot: QtBot, window: MainWindow, checked: int
) -> None:
    _view, strip = strip_of(qtbot, window, checked)

    shown = [widget.text() for widget in strip.buttons]
    assert shown[0].startswith("✗ tests ") and shown[0].endswith(" s")
    assert shown[1].startswith("✓ lint ") and shown[1].endswith(" s")
    assert shown[2] == "– types"
    assert "exit code 1" in strip.buttons[0].toolTip()
    assert "not run" in strip.buttons[2].toolTip()
    assert strip.status.text() == "required failing: tests"


def test_clicking_a_check_shows_the_end_of_its_full_output(
    qtbot: QtBot, window: MainWindow, checked: int
) -> None:
    _view, strip = strip_of(qtbot, window, checked)

    qtbot.mouseClick(strip.buttons[0], Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: "FAILED t::x" in strip.output.text(), timeout=WAIT_MS)
    assert strip.output.isVisible() and strip.output.isReadOnly()
    assert strip.output.text().startswith("0\n1\n2\n")  # the full log, not only the recorded tail
    assert "tests: failed" in strip.output_title.text()
    qtbot.mouseClick(strip.buttons[2], Qt.MouseButton.LeftButton)
    assert strip.output_title.text() == "types: not run yet" and strip.output.text() == ""


def test_run_checks_again_runs_them_in_the_worktree_streams_their_output_and_updates_the_strip(
    qtbot: QtBot, window: MainWindow, services: Services, checked: int
) -> None:
    _view, strip = strip_of(qtbot, window, checked)
    worktree = services.workspaces.existing(checked)
    assert worktree is not None
    (worktree.path / "ok").write_text("fixed\n")

    qtbot.mouseClick(strip.run_again, Qt.MouseButton.LeftButton)

    assert not strip.run_again.isEnabled() and strip.stop.isVisible()
    qtbot.waitUntil(lambda: strip.buttons[0].text().startswith("✓ tests"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: strip.buttons[2].text().startswith("✓ types"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: strip.run_again.isEnabled(), timeout=WAIT_MS)
    assert "299\nFAILED t::x" in strip.output.text() and "typed" in strip.output.text()
    assert not strip.stop.isVisible() and strip.status.text() == ""
    assert "the checks pass (3 run)" in window.message_bar.text
    latest = {run.name: run for run in services.checks.latest(checked)}
    assert latest["tests"].status is CheckStatus.PASSED and latest["tests"].purpose is CheckPurpose.RERUN


def approve_and_ask(qtbot: QtBot, window: MainWindow, view: ReviewsView) -> ConfirmBox:
    qtbot.mouseClick(view.detail.approve, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: isinstance(view.dialog, ConfirmBox) and view.dialog.isVisible(), timeout=WAIT_MS)
    box = view.dialog
    assert isinstance(box, ConfirmBox)
    return box


@pytest.mark.parametrize("key", [Qt.Key.Key_Return, Qt.Key.Key_Escape])
def test_approving_with_a_failing_required_check_asks_and_enter_or_escape_leaves_it_in_review(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, checked: int, key: Qt.Key
) -> None:
    view, _strip = strip_of(qtbot, window, checked)
    base = git(project, "rev-parse", "main")

    box = approve_and_ask(qtbot, window, view)

    assert box.windowTitle() == "Merge anyway?" and "tests failed" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    QTest.keyClick(box, key)
    qtbot.waitUntil(lambda: not box.isVisible(), timeout=WAIT_MS)
    settle(qtbot, window)
    assert services.tasks.get(checked).status is TaskStatus.IN_REVIEW
    assert git(project, "rev-parse", "main") == base and services.reviews.queued(checked) is None


def test_merge_anyway_merges_and_records_the_choice(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path, checked: int
) -> None:
    view, _strip = strip_of(qtbot, window, checked)

    box = approve_and_ask(qtbot, window, view)
    qtbot.mouseClick(box.confirm_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: services.tasks.get(checked).status is TaskStatus.DONE, timeout=WAIT_MS)
    assert "def tide_1" in git(project, "show", "main:src/tides.py")
    assert any("Merge anyway" in comment.body for comment in services.reviews.comments(checked))
    settle(qtbot, window)


def test_checks_a_cloned_config_names_are_not_run_again_until_allowed(
    qtbot: QtBot, window: MainWindow, services: Services, checked: int
) -> None:
    _view, strip = strip_of(qtbot, window, checked)
    config = services.paths.config_file
    config.write_text(config.read_text().replace("print('clean')", "print('changed behind my back')"))
    before = len(services.checks.history(checked))

    qtbot.mouseClick(strip.run_again, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: "has not allowed them" in window.message_bar.text, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: strip.run_again.isEnabled(), timeout=WAIT_MS)
    settle(qtbot, window)
    assert len(services.checks.history(checked)) == before


def test_stop_ends_the_checks_running_again(
    qtbot: QtBot, window: MainWindow, services: Services, checked: int
) -> None:
    slow = Check(name="tests", run=f"{PY} -c \"import time; print('started', flush=True); time.sleep(60)\"")
    update_config(services.paths, checks=[slow.model_dump()])
    _view, strip = strip_of_one(qtbot, window, checked)

    qtbot.mouseClick(strip.run_again, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "started" in strip.output.text(), timeout=WAIT_MS)
    qtbot.mouseClick(strip.stop, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: strip.run_again.isEnabled(), timeout=WAIT_MS)
    assert "the checks were stopped" in window.message_bar.text
    qtbot.waitUntil(lambda: strip.buttons[0].text().startswith("– tests"), timeout=WAIT_MS)
    latest = {run.name: run for run in services.checks.latest(checked)}
    assert latest["tests"].status is CheckStatus.STOPPED and latest["tests"].purpose is CheckPurpose.RERUN


def strip_of_one(qtbot: QtBot, window: MainWindow, task: int) -> tuple[ReviewsView, ChecksStrip]:
    view = reviews_tab(window)
    wait_for_diff(qtbot, view, task)
    strip = view.detail.checks
    qtbot.waitUntil(lambda: strip.isVisible() and len(strip.buttons) == 1, timeout=WAIT_MS)
    return view, strip
