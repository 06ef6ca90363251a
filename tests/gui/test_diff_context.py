"""More context around a review's changes: read again from git with more unchanged lines, to whole files."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.diffs import LineKind, parse_diff
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.diff_view import CONTEXT_STEPS, DiffView
from ralph_desk.gui.panes.inbox.reviews.rows import RowKind
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.vcs.initialise import make_repository
from tests.gui.test_reviews import reviews_tab, wait_for_diff
from tests.support.demo_rows import task_id

WAIT_MS = 10_000
LONG = "".join(f"def tide_{n}(height):\n    return height * {n}\n" for n in range(1, 41))
EDITED = {"src/long.py": LONG.replace("height * 20\n", "height * 20.5\n")}


@pytest.fixture
def in_review(project: Path, services: Services) -> int:
    """A task in review whose one change sits in the middle of a long file that the base already has."""
    make_repository(project, "main")
    chosen = task_id(services, "Mark high and low water on the chart")
    put_in_review(services, chosen, ({"src/long.py": LONG}, "The file"), (EDITED, "One change in its middle"))
    return chosen


def context_lines(view: DiffView) -> int:
    return sum(
        1
        for row in view.model.layout.rows
        if row.kind is RowKind.LINE and row.line is not None and row.line.kind is LineKind.CONTEXT
    )


def test_the_review_service_reads_more_context_and_refuses_a_bad_count(
    services: Services, in_review: int
) -> None:
    item = next(item for item in services.reviews.list() if item.task.id == in_review)
    session = max(item.sessions, key=lambda found: found.started_at).id  # the last: the one change
    usual = parse_diff(services.reviews.diff(in_review, session).text)
    whole = parse_diff(services.reviews.diff(in_review, session, 100_000).text)

    assert sum(len(hunk.lines) for hunk in usual[0].hunks) == 3 + 2 + 3
    assert sum(len(hunk.lines) for hunk in whole[0].hunks) == LONG.count("\n") + 1
    with pytest.raises(InvalidValueError, match="context"):
        services.reviews.diff(in_review, session, -1)


def test_more_context_shows_more_unchanged_lines_then_whole_files_then_goes_back(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)
    view.detail.session.setCurrentIndex(view.detail.session.count() - 1)  # the second session: one change
    qtbot.waitUntil(lambda: context_lines(diff) == 6, timeout=WAIT_MS)

    qtbot.mouseClick(diff.more_context, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: context_lines(diff) == 2 * CONTEXT_STEPS[1], timeout=WAIT_MS)
    while diff.context < CONTEXT_STEPS[-1]:
        qtbot.mouseClick(diff.more_context, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: context_lines(diff) == LONG.count("\n") - 1, timeout=WAIT_MS)
    assert diff.more_context.text() == "Less context"

    qtbot.mouseClick(diff.more_context, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: context_lines(diff) == 6, timeout=WAIT_MS)
