"""The Reviews tab's widgets alone, on real git diffs: files, lines, views, comments and the actions asked."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from ralph_desk.domain.diffs import FileDiff, parse_diff
from ralph_desk.domain.enums import DiffSide, Verb
from ralph_desk.domain.records import AgentSession
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.gui.panes.inbox.pane import REVIEWS, InboxPane
from ralph_desk.gui.panes.inbox.reviews import highlight
from ralph_desk.gui.panes.inbox.reviews.diff_model import DiffDelegate
from ralph_desk.gui.panes.inbox.reviews.diff_view import DiffView
from ralph_desk.gui.panes.inbox.reviews.entry import ReviewEntry
from ralph_desk.gui.panes.inbox.reviews.rows import LineComment, RowKind
from ralph_desk.gui.panes.inbox.reviews.view import ReviewsView
from tests.support.git_changes import big_change, change_everything, commit_base

STARTED = datetime(2026, 11, 26, 9, 0)
WAIT_MS = 3000


@pytest.fixture
def files(tmp_path: Path) -> list[FileDiff]:
    """A real diff with an edit, an addition, a deletion, a rename and a binary change."""
    return parse_diff(change_everything(commit_base(tmp_path / "repo")))


@pytest.fixture
def view(qtbot: QtBot) -> DiffView:
    """A diff view, shown."""
    shown = DiffView()
    qtbot.addWidget(shown)
    shown.resize(1200, 700)
    shown.show()
    qtbot.waitExposed(shown)
    return shown


def file_texts(view: DiffView) -> dict[str, tuple[str, str]]:
    model = view.file_model
    return {
        model.data(model.index(row, 0)): (model.data(model.index(row, 1)), model.data(model.index(row, 2)))
        for row in range(model.rowCount())
    }


def rows_of(view: DiffView, path: str) -> list[tuple[RowKind, str]]:
    model = view.model
    return [
        (row.kind, model.data(model.index(number)))
        for number, row in enumerate(model.layout.rows)
        if model.path(row) == path
    ]


def click_row(qtbot: QtBot, view: DiffView, row: int) -> None:
    index = view.model.index(row)
    view.lines.scrollTo(index)
    qtbot.mouseClick(
        view.lines.viewport(), Qt.MouseButton.LeftButton, pos=view.lines.visualRect(index).center()
    )


# --- the diff view --------------------------------------------------------------------------------


def test_the_file_list_shows_each_file_with_its_counts_and_binary_and_renamed_files_as_such(
    view: DiffView, files: list[FileDiff]
) -> None:
    view.show_files(files)

    listed = file_texts(view)
    assert listed["tides.py"] == ("3", "3")  # the last line lost its newline: removed and added
    assert listed["fresh.py"] == ("2", "0")
    assert listed["gone.md"] == ("0", "3")
    assert listed["logo.png (binary)"] == ("—", "—")
    assert listed["old name.txt → new\tname.txt"] == ("0", "0")
    assert "+5" in view.totals.text() and "−8" in view.totals.text()
    assert (RowKind.INFO, "Binary file — its content is not shown") in rows_of(view, "logo.png")
    assert (RowKind.INFO, "Renamed from old name.txt (100% similar)") in rows_of(view, "new\tname.txt")


def test_unified_shows_removed_then_added_lines_and_side_by_side_pairs_them(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.show_files(files)
    unified = [text for kind, text in rows_of(view, "tides.py") if kind is RowKind.LINE]
    assert unified[unified.index("line 3") + 1] == "line three"

    qtbot.mouseClick(view.split, Qt.MouseButton.LeftButton)

    assert view.is_split and view.model.split
    paired = [text for kind, text in rows_of(view, "tides.py") if kind is RowKind.LINE]
    assert "line 3\tline three" in paired
    assert len(paired) == len(unified) - 2  # each removal sits beside an addition
    qtbot.mouseClick(view.unified, Qt.MouseButton.LeftButton)
    assert not view.model.split


def test_choosing_a_file_in_the_list_brings_its_header_to_the_top(view: DiffView, tmp_path: Path) -> None:
    view.show_files(parse_diff(big_change(commit_base(tmp_path / "repo"), lines=2000, files=4)))
    last = view.file_model.rowCount() - 1

    view.file_table.selectRow(last)

    header_row = view.model.layout.file_rows[view.file_model.record(last).number]
    assert header_row > 1000
    assert view.lines.indexAt(QPoint(10, 2)).row() == header_row


def test_a_five_thousand_line_diff_opens_at_once_painting_only_the_rows_in_sight(
    qtbot: QtBot, view: DiffView, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = parse_diff(big_change(commit_base(tmp_path / "repo"), lines=5000, files=10))
    painted: list[int] = []
    original = DiffDelegate.paint

    def counting(
        self: DiffDelegate,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        painted.append(index.row())
        original(self, painter, option, index)

    monkeypatch.setattr(DiffDelegate, "paint", counting)
    view.show_files(files)
    view.lines.viewport().repaint()

    assert view.model.rowCount() > 5000
    in_sight = view.lines.viewport().height() // view.delegate.row_height() + 2
    assert 0 < len(set(painted)) <= in_sight
    assert max(painted) < in_sight


def test_python_lines_are_highlighted_and_unknown_files_stay_plain() -> None:
    coloured = highlight.spans("harbour.py", "def tide(height): return 'high'  # note")
    assert ("def", highlight._color(highlight.Keyword, False)) in coloured
    assert any(color is not None and text == "'high'" for text, color in coloured)
    assert highlight.spans("notes.unknown-kind", "def tide") == (("def tide", None),)


def test_clicking_a_line_opens_the_comment_box_and_ctrl_enter_asks_for_the_comment(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.show_files(files)
    row = view.row_of_line("tides.py", 11)
    assert row is not None and view.model.row(row).line is not None
    assert view.model.row(row).line.text == "inserted"  # type: ignore[union-attr]

    click_row(qtbot, view, row)

    assert view.comment_box.isVisible()
    assert view.comment_box.place.text() == "Comment on tides.py:11"
    qtbot.keyClicks(view.comment_box.text, "Why insert this?")
    with qtbot.waitSignal(view.sig_comment_requested, timeout=WAIT_MS) as asked:
        qtbot.keyClick(view.comment_box.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert asked.args == ["tides.py", 11, "Why insert this?", "new"]
    assert not view.comment_box.isVisible()


def test_a_comment_on_a_removed_line_is_about_that_line_of_the_old_file(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.show_files(files)
    removed = view.row_of_line("tides.py", 3, DiffSide.OLD)
    assert removed is not None and view.model.row(removed).new is None

    click_row(qtbot, view, removed)

    assert view.comment_box.place.text() == "Comment on tides.py:3 (removed, old file)"
    qtbot.keyClicks(view.comment_box.text, "Keep the digit")
    with qtbot.waitSignal(view.sig_comment_requested, timeout=WAIT_MS) as asked:
        qtbot.mouseClick(view.comment_box.add, Qt.MouseButton.LeftButton)
    assert asked.args == ["tides.py", 3, "Keep the digit", "old"]


def click_half(qtbot: QtBot, view: DiffView, row: int, left: bool) -> None:
    """Click the left (old file) or right (new file) half of a side-by-side row."""
    index = view.model.index(row)
    view.lines.scrollTo(index)
    rect = view.lines.visualRect(index)
    x = rect.left() + rect.width() // 4 if left else rect.right() - rect.width() // 4
    qtbot.mouseClick(view.lines.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, rect.center().y()))


def test_side_by_side_each_half_of_a_changed_row_is_commented_on_its_own_file(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.set_split(True)
    view.show_files(files)
    row = view.row_of_line("tides.py", 3, DiffSide.OLD)
    assert row is not None and row == view.row_of_line("tides.py", 3)  # "line 3" beside "line three"

    click_half(qtbot, view, row, left=True)
    assert view.comment_box.place.text() == "Comment on tides.py:3 (removed, old file)"
    assert view.comment_box.side is DiffSide.OLD
    click_half(qtbot, view, row, left=False)
    assert view.comment_box.place.text() == "Comment on tides.py:3"
    assert view.comment_box.side is DiffSide.NEW


def test_a_comment_on_a_removed_line_is_shown_under_it_and_one_on_the_new_line_under_that(
    view: DiffView, files: list[FileDiff]
) -> None:
    comments = [
        LineComment("Why drop it?", "tides.py", 17, "human", side=DiffSide.OLD),
        LineComment("Fine here", "tides.py", 17, "human"),
    ]
    for split in (False, True):
        view.set_split(split)
        view.show_files(files, comments)
        model = view.model
        removed = view.row_of_line("tides.py", 17, DiffSide.OLD)
        added = view.row_of_line("tides.py", 17)
        assert removed is not None and added is not None and removed != added
        assert model.row(removed).old is not None and model.row(removed).old.text == "line 17"  # type: ignore[union-attr]
        under_removed = model.row(removed + 1)
        assert (under_removed.kind, under_removed.text) == (RowKind.COMMENT, "Why drop it?")
        assert model.data(model.index(removed + 1)).startswith("Why drop it?")
        tip = model.data(model.index(removed + 1), Qt.ItemDataRole.ToolTipRole)
        assert "tides.py:17 (removed, old file)" in tip and "removed line 17 · human: Why drop it?" in tip
        under_added = model.row(added + 1)
        assert (under_added.kind, under_added.text) == (RowKind.COMMENT, "Fine here")


def test_clicking_an_unsent_comment_of_yours_edits_or_deletes_it(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    mine = LineComment("Why drop it?", "tides.py", 17, "human", side=DiffSide.OLD, id=5, pending=True)
    sent = LineComment("Fine here", "tides.py", 11, "human", "requested", id=6)
    view.set_split(True)
    view.show_files(files, [mine, sent])
    removed = view.row_of_line("tides.py", 17, DiffSide.OLD)
    inserted = view.row_of_line("tides.py", 11)
    assert removed is not None and inserted is not None

    click_row(qtbot, view, inserted + 1)  # a sent comment is no longer yours to change
    assert not view.comment_box.isVisible()
    tip = view.model.data(view.model.index(removed + 1), Qt.ItemDataRole.ToolTipRole)
    assert "human: Why drop it? (not sent yet)" in tip and "click to edit or delete" in tip

    click_row(qtbot, view, removed + 1)
    box = view.comment_box
    assert box.isVisible() and box.delete.isVisible() and box.add.text() == "Save"
    assert box.place.text() == "Your comment on tides.py:17 (removed, old file)"
    assert box.text.toPlainText() == "Why drop it?"
    qtbot.keyClicks(box.text, " It is used by the chart.")
    with qtbot.waitSignal(view.sig_edit_requested, timeout=WAIT_MS) as edited:
        qtbot.keyClick(box.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert edited.args == [5, "Why drop it? It is used by the chart."]

    click_row(qtbot, view, removed + 1)
    with qtbot.waitSignal(view.sig_delete_requested, timeout=WAIT_MS) as deleted:
        qtbot.mouseClick(box.delete, Qt.MouseButton.LeftButton)
    assert deleted.args == [5]
    assert not box.isVisible()

    click_row(qtbot, view, removed)  # a new comment again: no Delete
    assert box.add.text() == "Add comment" and not box.delete.isVisible()


def test_once_the_task_is_approved_its_comments_cannot_be_changed_in_the_tab(
    qtbot: QtBot, reviews: ReviewsView, files: list[FileDiff]
) -> None:
    mine = LineComment("Why drop it?", "tides.py", 17, "human", side=DiffSide.OLD, id=5, pending=True)
    approved = replace(entry(), merge="approved: merging next")
    reviews.show_items([approved])
    reviews.show_diff(7, files, [mine])
    diff = reviews.detail.diff
    removed = diff.row_of_line("tides.py", 17, DiffSide.OLD)
    assert removed is not None

    with qtbot.assertNotEmitted(reviews.sig_comment_edit_requested):
        click_row(qtbot, diff, removed + 1)
    assert not diff.comment_box.isVisible()

    reviews.show_items([entry()])  # its merge refused and withdrawn: in review again
    click_row(qtbot, diff, removed + 1)
    with qtbot.waitSignal(reviews.sig_comment_delete_requested, timeout=WAIT_MS) as deleted:
        qtbot.mouseClick(diff.comment_box.delete, Qt.MouseButton.LeftButton)
    assert deleted.args == [7, 5]


def test_an_empty_comment_is_not_sent(qtbot: QtBot, view: DiffView, files: list[FileDiff]) -> None:
    view.show_files(files)
    view.comment_on(view.model.row(view.row_of_line("fresh.py", 1) or 0))
    with qtbot.assertNotEmitted(view.sig_comment_requested):
        qtbot.mouseClick(view.comment_box.add, Qt.MouseButton.LeftButton)
    assert view.comment_box.isVisible()


def test_comments_appear_under_their_line_and_on_their_file_in_both_views(
    view: DiffView, files: list[FileDiff]
) -> None:
    comments = [
        LineComment("Why insert this?", "tides.py", 11, "human"),
        LineComment("Not needed at all", "fresh.py", None, "opus_review", "requested"),
    ]
    for split in (False, True):
        view.set_split(split)
        view.show_files(files, comments)
        row = view.row_of_line("tides.py", 11)
        assert row is not None
        below = view.model.row(row + 1)
        assert (below.kind, below.text, below.anchor) == (RowKind.COMMENT, "Why insert this?", 11)
        fresh = rows_of(view, "fresh.py")
        assert fresh[1] == (RowKind.COMMENT, "Not needed at all")
        fresh_header = next(n for n, row in enumerate(view.model.layout.rows) if row.text == "fresh.py")
        tip = view.model.data(view.model.index(fresh_header + 1), Qt.ItemDataRole.ToolTipRole)
        assert "opus_review: Not needed at all (sent to the agent)" in tip


def test_the_diff_model_is_a_sound_qt_model(
    qtmodeltester: ModelTester, view: DiffView, files: list[FileDiff]
) -> None:
    view.show_files(files, [LineComment("A note", "tides.py", 11)])
    qtmodeltester.check(view.model)
    view.set_split(True)
    qtmodeltester.check(view.model)


# --- the tab --------------------------------------------------------------------------------------


def session(session_id: str, minutes: int) -> AgentSession:
    """A finished session of task 7."""
    return AgentSession(
        session_id, 7, "implement", None, 1, "claude", "sonnet", "backend", "charts",
        STARTED.replace(minute=minutes), STARTED.replace(minute=minutes + 5), 0, "done", "done",
        0.1, 100, 50, 3, None, ("tides.py",), "aaa", "bbb", None,
    )  # fmt: skip


def entry(task_id: int = 7, title: str = "Chart the spring tides") -> ReviewEntry:
    """A task in review with two sessions and its done signal."""
    done = SignalRecord(1, task_id, "s-2", Verb.DONE, STARTED, summary="Charted the tides with a new table")
    return ReviewEntry(
        task_id, title, "Charted the tides with a new table", f"ralph/{task_id}-chart", "main",
        (session("s-1", 0), session("s-2", 10)), (done,), "charts",
    )  # fmt: skip


@pytest.fixture
def reviews(qtbot: QtBot) -> ReviewsView:
    """The Reviews tab, on its own, shown."""
    shown = ReviewsView()
    qtbot.addWidget(shown)
    shown.resize(1300, 800)
    shown.show()
    qtbot.waitExposed(shown)
    return shown


def test_without_tasks_in_review_the_tab_says_what_comes_here(reviews: ReviewsView) -> None:
    reviews.show_items([])
    assert reviews.stack.currentWidget() is reviews.empty


def test_a_task_in_review_shows_the_agents_account_and_asks_for_its_whole_diff(
    qtbot: QtBot, reviews: ReviewsView
) -> None:
    with qtbot.waitSignal(reviews.sig_diff_requested, timeout=WAIT_MS) as asked:
        reviews.show_items([entry()])

    assert asked.args == [7, ""]
    detail = reviews.detail
    assert "Charted the tides with a new table" in detail.summary.text()
    assert "done" in detail.signals.text()
    assert detail.branch.text() == "ralph/7-chart → main"
    assert [detail.session.itemText(i).split(" · ")[0] for i in range(detail.session.count())] == [
        "Whole task",
        "Session 1",
        "Session 2",
    ]


def test_choosing_a_session_asks_for_that_sessions_diff_and_a_stale_diff_is_ignored(
    qtbot: QtBot, reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry(7), entry(8, "Tabulate neap tides")])
    with qtbot.waitSignal(reviews.sig_diff_requested, timeout=WAIT_MS) as asked:
        reviews.detail.session.setCurrentIndex(2)
    assert asked.args == [7, "s-2"]

    reviews.show_diff(8, files, [])
    assert reviews.detail.diff.model.rowCount() == 0
    reviews.show_diff(7, files, [])
    assert reviews.detail.diff.model.rowCount() > 0


def test_a_comment_written_on_a_line_is_asked_for_on_the_task(
    qtbot: QtBot, reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry()])
    reviews.show_diff(7, files, [])
    diff = reviews.detail.diff
    diff.comment_on(diff.model.row(diff.row_of_line("tides.py", 11) or 0))
    qtbot.keyClicks(diff.comment_box.text, "Explain")

    with qtbot.waitSignal(reviews.sig_comment_requested, timeout=WAIT_MS) as asked:
        qtbot.mouseClick(diff.comment_box.add, Qt.MouseButton.LeftButton)

    assert asked.args == [7, "tides.py", 11, "Explain", "new"]


TIP = "1" * 40
NEWER = "2" * 40


def test_approve_and_merge_is_asked_for_the_commit_of_the_whole_diff_shown(
    qtbot: QtBot, reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry()])
    reviews.show_diff(7, files, [], tip=TIP)
    reviews.detail.session.setCurrentIndex(2)  # one session's diff: the approval stays that of the whole
    reviews.show_diff(7, files[:1], [])

    with qtbot.waitSignal(reviews.sig_approve_requested, timeout=WAIT_MS) as asked:
        qtbot.mouseClick(reviews.detail.approve, Qt.MouseButton.LeftButton)
    assert asked.args == [7, TIP, False, False]  # neither anyway nor dropping comments: those are asked


def test_approve_before_the_diff_is_shown_asks_nothing_and_says_so(
    qtbot: QtBot, reviews: ReviewsView
) -> None:
    reviews.show_items([entry()])
    with qtbot.assertNotEmitted(reviews.sig_approve_requested):
        qtbot.mouseClick(reviews.detail.approve, Qt.MouseButton.LeftButton)
    assert reviews.detail.status.text() == "The diff is still being read: approve once it is shown."


def test_a_branch_that_moved_is_said_and_its_whole_diff_asked_again_with_a_new_pin(
    qtbot: QtBot, reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry()])
    reviews.show_diff(7, files, [], tip=TIP)
    reviews.detail.session.setCurrentIndex(1)

    with qtbot.waitSignal(reviews.sig_diff_requested, timeout=WAIT_MS) as asked:
        reviews.show_moved(7)

    assert asked.args == [7, ""] and reviews.detail.session.currentIndex() == 0
    assert (
        reviews.detail.moved.isVisible()
        and "The work changed since you opened it" in reviews.detail.moved.text()
    )
    with qtbot.assertNotEmitted(reviews.sig_approve_requested):  # nothing until the new diff is shown
        qtbot.mouseClick(reviews.detail.approve, Qt.MouseButton.LeftButton)
    reviews.show_diff(7, files, [], tip=NEWER)
    with qtbot.waitSignal(reviews.sig_approve_requested, timeout=WAIT_MS) as approved:
        qtbot.mouseClick(reviews.detail.approve, Qt.MouseButton.LeftButton)
    assert approved.args == [7, NEWER, False, False] and not reviews.detail.moved.isVisible()


def test_changes_to_the_project_s_rules_are_flagged_above_the_diff(
    reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry()])
    reviews.show_diff(7, files, [], tip=TIP, rules=(".ralph/config.json",))

    assert reviews.detail.rules.isVisible()
    assert (
        ".ralph/config.json" in reviews.detail.rules.text()
        and "approving is refused" in reviews.detail.rules.text()
    )
    reviews.show_diff(7, files, [], tip=TIP)
    assert not reviews.detail.rules.isVisible()


def test_request_changes_needs_a_comment_or_a_message_and_sends_the_message(
    qtbot: QtBot, reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry()])
    reviews.show_diff(7, files, [])
    qtbot.mouseClick(reviews.detail.request, Qt.MouseButton.LeftButton)
    dialog = reviews.dialog
    assert dialog is not None and not dialog.ok.isEnabled()
    dialog.reject()

    reviews.show_comments(7, [LineComment("Sent last round", "tides.py", 3, "human", "addressed")])
    qtbot.mouseClick(reviews.detail.request, Qt.MouseButton.LeftButton)
    dialog = reviews.dialog
    assert dialog is not None and not dialog.ok.isEnabled()  # nothing new to send yet
    dialog.reject()

    comments = [LineComment("Explain", "tides.py", 11, "human")]
    reviews.show_comments(7, comments)
    qtbot.mouseClick(reviews.detail.request, Qt.MouseButton.LeftButton)
    dialog = reviews.dialog
    assert dialog is not None and dialog.ok.isEnabled()
    qtbot.keyClicks(dialog.message, "Also add a test")
    with qtbot.waitSignal(reviews.sig_changes_requested, timeout=WAIT_MS) as asked:
        qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    assert asked.args == [7, "Also add a test"]


@pytest.mark.parametrize("skip", [False, True])
def test_discard_asks_whether_to_start_again_from_the_base_or_skip(
    qtbot: QtBot, reviews: ReviewsView, skip: bool
) -> None:
    reviews.show_items([entry()])
    qtbot.mouseClick(reviews.detail.discard, Qt.MouseButton.LeftButton)
    dialog = reviews.dialog
    assert dialog is not None and "main" in dialog.again.text()
    qtbot.waitExposed(dialog)
    if skip:
        indicator = QPoint(6, dialog.skip.height() // 2)  # a radio button takes clicks on its box and text
        qtbot.mouseClick(dialog.skip, Qt.MouseButton.LeftButton, pos=indicator)
    with qtbot.waitSignal(reviews.sig_discard_requested, timeout=WAIT_MS) as asked:
        qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    assert asked.args == [7, skip]


def test_when_the_task_shown_leaves_review_the_next_one_is_shown(qtbot: QtBot, reviews: ReviewsView) -> None:
    reviews.show_items([entry(7), entry(8, "Tabulate neap tides")])
    assert reviews.current is not None and reviews.current.task_id == 7

    with qtbot.waitSignal(reviews.sig_diff_requested, timeout=WAIT_MS) as asked:
        reviews.show_items([entry(8, "Tabulate neap tides")])

    assert asked.args == [8, ""]
    assert reviews.current is not None and reviews.current.task_id == 8


def test_a_very_long_line_is_drawn_plain_and_cut_at_what_a_screen_can_show() -> None:
    minified = "var a=1;" * 2000

    (only,) = highlight.spans("bundle.js", minified)

    assert only == (minified[: highlight.SHOWN_CHARS], None)


def test_enter_on_the_current_line_opens_the_comment_box(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.show_files(files)
    row = view.row_of_line("fresh.py", 2)
    assert row is not None
    view.select_row(row)
    view.lines.setFocus()

    qtbot.keyClick(view.lines, Qt.Key.Key_Return)

    assert view.comment_box.isVisible()
    assert view.comment_box.place.text() == "Comment on fresh.py:2"


def test_comments_on_the_whole_task_are_listed_above_the_diff(
    reviews: ReviewsView, files: list[FileDiff]
) -> None:
    reviews.show_items([entry()])
    comments = [
        LineComment("Add a test for the equinox", None, None, "human", "requested"),
        LineComment("Why insert this?", "tides.py", 11, "human"),
    ]

    reviews.show_diff(7, files, comments)

    notes = reviews.detail.notes
    assert not notes.isHidden()
    assert "Add a test for the equinox" in notes.text() and "sent to the agent" in notes.text()
    assert "Why insert this?" not in notes.text()
    reviews.show_comments(7, comments[1:])
    assert notes.isHidden()


def test_tasks_in_review_are_counted_on_their_tab_and_in_what_waits(qtbot: QtBot) -> None:
    pane = InboxPane()
    qtbot.addWidget(pane)

    pane.set_review_count(2)

    assert pane.tabs.tabText(REVIEWS) == "Reviews (2)"
    assert pane.summary.text().endswith("0 open flags · 2 tasks in review")
    pane.set_review_count(0)
    assert pane.tabs.tabText(REVIEWS) == "Reviews" and pane.summary.text().startswith("Nothing waits")


def halves(view: DiffView, row: int) -> tuple[QColor, QColor]:
    """The colours of a side-by-side row's left and right halves (beside their text), as painted."""
    view.lines.viewport().repaint()
    shown = view.lines.viewport().grab().toImage()
    rect = view.lines.visualRect(view.model.index(row))
    y = rect.top() + 1
    return shown.pixelColor(rect.center().x() - 4, y), shown.pixelColor(rect.right() - 4, y)


def test_side_by_side_the_chosen_half_of_a_selected_row_is_tinted_and_the_other_stays_as_it_was(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.set_split(True)
    view.show_files(files)
    row = view.row_of_line("tides.py", 3, DiffSide.OLD)  # "line 3" beside "line three"
    assert row is not None
    view.lines.scrollTo(view.model.index(row))
    old_before, new_before = halves(view, row)

    click_half(qtbot, view, row, left=True)
    old_chosen, new_beside = halves(view, row)

    highlight_color = view.lines.palette().highlight().color()
    assert new_beside == new_before  # not the style's opaque highlight across the whole row
    assert old_chosen not in (old_before, highlight_color) and old_chosen.red() < old_before.red()


def test_opening_the_comment_box_on_a_long_path_leaves_the_file_list_as_wide_as_it_was(
    qtbot: QtBot, view: DiffView, files: list[FileDiff]
) -> None:
    view.resize(900, 600)
    view.show_files(files)
    qtbot.waitUntil(lambda: view.splitter.sizes()[0] > 0, timeout=WAIT_MS)
    before = view.splitter.sizes()
    long_path = "tidewater/stations/" + "harbour-" * 8 + "chart.py"

    view.comment_box.open_edit(
        LineComment("Keep", long_path, 19, "human", side=DiffSide.OLD, id=3, pending=True)
    )
    QApplication.processEvents()

    assert view.comment_box.isVisible() and view.splitter.sizes() == before
