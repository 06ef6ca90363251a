"""Within a changed line, the words that changed are marked: found word by word, laid out, painted."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from ralph_desk.domain.diffs import FileDiff, parse_diff
from ralph_desk.gui.panes.inbox.reviews.diff_model import DiffDelegate, DiffModel
from ralph_desk.gui.panes.inbox.reviews.rows import DiffRow, RowKind, layout
from ralph_desk.gui.panes.inbox.reviews.words import changed_spans
from tests.support.git_changes import git

OLD = "def tide(level):\n    return level * 3 + low(level)\nkeep = True\n"
NEW = "def tide(level):\n    return level * 3 + high(level)\nkeep = True\nsomething = entirely(different)\n"


@pytest.fixture
def files(tmp_path: Path) -> list[FileDiff]:
    """A real git diff: one word of a line changed, and a line added with no partner."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "tides.py").write_text(OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "tides.py").write_text(NEW)
    return parse_diff(git(root, "diff"))


def test_the_changed_word_of_a_line_is_found_on_both_sides() -> None:
    old, new = "    return level * 3 + low(level)", "    return level * 3 + high(level)"

    old_spans, new_spans = changed_spans(old, new)

    assert [old[start:end] for start, end in old_spans] == ["low"]
    assert [new[start:end] for start, end in new_spans] == ["high"]


def test_lines_with_little_in_common_mark_no_words() -> None:
    assert changed_spans("keep = True", "something = entirely(different)") == ((), ())


def _changed_rows(rows: list[DiffRow]) -> list[DiffRow]:
    return [row for row in rows if row.kind is RowKind.LINE and (row.old_words or row.new_words)]


@pytest.mark.parametrize("split", [False, True], ids=["unified", "side by side"])
def test_the_layout_carries_the_changed_words_of_paired_lines_only(
    files: list[FileDiff], split: bool
) -> None:
    rows = _changed_rows(layout(files, split=split).rows)

    marked = {
        (row.old or row.new).text[start:end]  # type: ignore[union-attr]
        for row in rows
        for start, end in (row.old_words if row.old is not None and row.old_words else row.new_words)
    }
    assert marked <= {"low", "high"} and marked
    texts = {(row.new.text if row.new else "") for row in rows}
    assert "something = entirely(different)" not in texts


def test_the_changed_word_is_painted_more_strongly_than_the_rest_of_its_line(
    qtbot: QtBot, files: list[FileDiff]
) -> None:
    model = DiffModel()
    laid_out = layout(files)
    model.set_layout(files, laid_out, False)
    delegate = DiffDelegate(model)
    number = next(n for n, row in enumerate(laid_out.rows) if row.new is not None and row.new_words)
    row = laid_out.rows[number]
    assert row.new is not None
    image = QImage(900, delegate.row_height(), QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, 900, delegate.row_height())
    delegate.paint(painter, option, model.index(number))
    painter.end()
    text_left = 2 * delegate.number_width() + 6 + delegate.char * 2
    start, _end = row.new_words[0]
    word_x = text_left + delegate.metrics.horizontalAdvance(row.new.text[:start]) + 1
    plain_x = text_left + delegate.metrics.horizontalAdvance("    return")  # the space after "return"

    word = image.pixelColor(word_x, 1)
    plain = image.pixelColor(plain_x, 1)

    assert word.lightness() < plain.lightness() - 15  # the word's tint is the stronger
