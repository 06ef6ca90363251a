"""Files of a review marked viewed: kept per task with the fingerprint of each file's change, so that a file
whose change changed comes back unmarked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.diffs import DiffLine, FileDiff, parse_diff
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.diff_view import VIEWED_COLUMN, DiffView
from ralph_desk.gui.settings import DeskSettings
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository
from tests.gui.test_reviews import FIRST, SECOND, reviews_tab, wait_for_diff
from tests.support.demo_rows import task_id
from tests.support.git_changes import change_everything, commit_base

WAIT_MS = 10_000


@pytest.fixture
def in_review(project: Path, services: Services) -> int:
    """The demo made a git project, and a task put in review after two sessions."""
    make_repository(project, "main")
    chosen = task_id(services, "Mark high and low water on the chart")
    put_in_review(services, chosen, (FIRST, "Wrote the tide functions"), (SECOND, "Corrected tide 3; alerts"))
    return chosen


def viewed_column(view: DiffView) -> list[str]:
    model = view.file_model
    return [model.data(model.index(row, VIEWED_COLUMN)) for row in range(model.rowCount())]


def test_a_file_marked_viewed_is_remembered_for_its_task_and_shown_again(
    qtbot: QtBot, window: MainWindow, settings: QSettings, project: Path, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)
    assert set(viewed_column(diff)) == {""}
    diff.file_table.selectRow(0)
    assert diff.mark_viewed.isEnabled()

    qtbot.mouseClick(diff.mark_viewed, Qt.MouseButton.LeftButton)

    assert viewed_column(diff)[0] == "✓" and diff.mark_viewed.isChecked()
    assert len(DeskSettings(settings).viewed(project, in_review)) == 1
    diff.file_model.set_items([])  # as a new read shows it from scratch
    view.detail.session.setCurrentIndex(view.detail.session.count() - 1)  # one session's diff, then back
    view.detail.session.setCurrentIndex(0)
    qtbot.waitUntil(lambda: diff.file_model.rowCount() > 0 and viewed_column(diff)[0] == "✓", timeout=WAIT_MS)
    assert viewed_column(diff).count("✓") == 1


def _changed(diff: FileDiff) -> FileDiff:
    """The same file with one more line added (its change changed)."""
    hunk = diff.hunks[0]
    more = DiffLine(hunk.lines[-1].kind.ADDED, "one more line", None, 99)
    return replace(diff, hunks=(replace(hunk, lines=(*hunk.lines, more)), *diff.hunks[1:]))


def test_a_file_whose_change_changed_is_unmarked_and_the_others_stay_marked(
    qtbot: QtBot, tmp_path: Path
) -> None:
    files = [diff for diff in parse_diff(change_everything(commit_base(tmp_path / "repo"))) if diff.hunks]
    assert len(files) >= 2
    view = DiffView()
    qtbot.addWidget(view)
    view.show_files(files)
    marks: list[list[str]] = []
    view.sig_viewed_changed.connect(marks.append)
    for number in range(len(files)):
        view.toggle_viewed(number)
    assert set(viewed_column(view)) == {"✓"} and len(marks[-1]) == len(files)

    view.set_viewed(frozenset(marks[-1]))
    view.show_files([_changed(files[0]), *files[1:]])

    assert viewed_column(view) == ["", *["✓"] * (len(files) - 1)]
    view.toggle_viewed(1)
    assert viewed_column(view)[1] == ""
