"""Unchanged lines around a review's changes: each gap between hunks shows its lines on a click or a key,
read from the reviewed commits (not the worktree, not a branch tip that moved since)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.demo_review import put_in_review, run_session
from ralph_desk.domain.diffs import LineKind, parse_diff
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.reviews.diff_view import ALL_LINES, CHANGES_ONLY, DiffView
from ralph_desk.gui.panes.inbox.reviews.rows import RowKind
from ralph_desk.services.container import Services
from ralph_desk.services.errors import InvalidValueError
from ralph_desk.vcs.initialise import make_repository
from tests.gui.test_reviews import reviews_tab, wait_for_diff
from tests.support.demo_rows import task_id

WAIT_MS = 10_000
LONG = "".join(f"def tide_{n}(height):\n    return height * {n}\n" for n in range(1, 41))
LINES = LONG.splitlines()
EDITED = {
    "src/long.py": LONG.replace("height * 5\n", "height * 5.5\n").replace("height * 30\n", "height * 30.5\n")
}
# line 10 and line 60 of 80 change: hidden are lines 1–6, 14–56 (43) and 64–80 (17, to the end)


@pytest.fixture
def in_review(project: Path, services: Services) -> int:
    """A task in review whose two changes sit far apart in a long file that the base already has."""
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "long.py").write_text(LONG, encoding="utf-8")
    make_repository(project, "main")
    chosen = task_id(services, "Mark high and low water on the chart")
    put_in_review(services, chosen, (EDITED, "Two changes far apart"))
    return chosen


def context_texts(view: DiffView) -> list[str]:
    return [
        row.line.text
        for row in view.model.layout.rows
        if row.kind is RowKind.LINE and row.line is not None and row.line.kind is LineKind.CONTEXT
    ]


def gap_rows(view: DiffView) -> list[int]:
    return [number for number, row in enumerate(view.model.layout.rows) if row.kind is RowKind.GAP]


def gap_texts(view: DiffView) -> list[str]:
    return [view.model.layout.rows[number].text for number in gap_rows(view)]


def click(
    qtbot: QtBot, view: DiffView, row: int, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    index = view.model.index(row)
    view.lines.scrollTo(index)
    qtbot.mouseClick(
        view.lines.viewport(), Qt.MouseButton.LeftButton, modifier, view.lines.visualRect(index).center()
    )


def lines(first: int, last: int) -> list[str]:
    """The file's lines `first` to `last`, numbered from 1."""
    return LINES[first - 1 : last]


def test_the_review_service_reads_more_context_and_refuses_a_bad_count(
    services: Services, in_review: int
) -> None:
    usual = parse_diff(services.reviews.diff(in_review).text)
    whole = parse_diff(services.reviews.diff(in_review, context=100_000).text)

    assert sum(len(hunk.lines) for hunk in usual[0].hunks) == 2 * (3 + 2 + 3)
    assert sum(len(hunk.lines) for hunk in whole[0].hunks) == len(LINES) + 2
    with pytest.raises(InvalidValueError, match="context"):
        services.reviews.diff(in_review, context=-1)


def test_a_gap_between_hunks_shows_its_unchanged_lines_from_the_reviewed_commit_twenty_at_a_time(
    qtbot: QtBot, window: MainWindow, services: Services, in_review: int
) -> None:
    diff = wait_for_diff(qtbot, reviews_tab(window), in_review)
    assert gap_texts(diff) == [
        "⋯ 6 unchanged lines — show",
        "⋯ 43 unchanged lines — show 20 (Shift: all)",
        "⋯ the rest of the file — show",
    ]
    worktree = services.workspaces.existing(in_review)
    assert worktree is not None
    (worktree.path / "src" / "long.py").write_text(LONG.replace("tide_20", "NOT COMMITTED"), encoding="utf-8")
    shown = context_texts(diff)

    click(qtbot, diff, gap_rows(diff)[1])

    qtbot.waitUntil(lambda: len(context_texts(diff)) == len(shown) + 20, timeout=WAIT_MS)
    assert context_texts(diff) == [*shown[:6], *lines(14, 23), *lines(47, 56), *shown[6:]]
    assert gap_texts(diff)[1] == "⋯ 23 unchanged lines — show"
    assert diff.all_lines.text() == CHANGES_ONLY

    click(qtbot, diff, gap_rows(diff)[1])  # the rest at once: one hunk now, its second header gone

    assert context_texts(diff)[3:52] == lines(11, 13) + lines(14, 56) + lines(57, 59)
    assert len(gap_rows(diff)) == 2
    assert [row.kind for row in diff.model.layout.rows].count(RowKind.HUNK) == 1
    assert "NOT COMMITTED" not in str(context_texts(diff))


def test_enter_on_a_gap_shows_it_shift_shows_all_and_show_all_lines_goes_back_to_the_changes(
    qtbot: QtBot, window: MainWindow, in_review: int
) -> None:
    diff = wait_for_diff(qtbot, reviews_tab(window), in_review)
    diff.lines.setFocus()
    diff.lines.setCurrentIndex(diff.model.index(gap_rows(diff)[-1]))

    qtbot.keyClick(diff.lines, Qt.Key.Key_Return)

    qtbot.waitUntil(lambda: len(gap_rows(diff)) == 2, timeout=WAIT_MS)
    assert context_texts(diff)[-17:] == lines(64, 80)  # the 17 to the end: all, as they are fewer than 30
    diff.lines.setCurrentIndex(diff.model.index(gap_rows(diff)[1]))
    qtbot.keyClick(diff.lines, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert len(gap_rows(diff)) == 1
    assert context_texts(diff)[6:49] == lines(14, 56)

    qtbot.mouseClick(diff.all_lines, Qt.MouseButton.LeftButton)
    assert diff.all_lines.text() == ALL_LINES
    assert len(context_texts(diff)) == 12 and len(gap_rows(diff)) == 3

    qtbot.mouseClick(diff.all_lines, Qt.MouseButton.LeftButton)
    assert gap_rows(diff) == []
    assert context_texts(diff) == [text for text in LINES if "* 5" not in text and "* 30" not in text]


def test_a_gap_opened_after_the_branch_moved_shows_the_new_diff_and_says_so_not_the_new_tips_lines(
    qtbot: QtBot, window: MainWindow, services: Services, in_review: int
) -> None:
    view = reviews_tab(window)
    diff = wait_for_diff(qtbot, view, in_review)
    shown_pin = diff.pin
    moved = {"src/long.py": EDITED["src/long.py"].replace("height * 20\n", "height * 20.5\n")}
    run_session(services, in_review, 2, moved, "One more change")

    click(qtbot, diff, gap_rows(diff)[1])

    qtbot.waitUntil(lambda: view.detail.moved.isVisible() and diff.pin != shown_pin, timeout=WAIT_MS)
    assert diff.pin is not None and view.pin == diff.pin.tip
    assert len(gap_rows(diff)) == 4  # the new diff: three hunks, none of its gaps opened
    assert diff.all_lines.text() == ALL_LINES and diff.all_lines.isEnabled()
