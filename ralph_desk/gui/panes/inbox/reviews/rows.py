"""A parsed diff laid out as the rows a diff view shows, unified or side by side, with the line comments.

Qt-free: the rows are plain records, built in one pass, so a view can show any slice of them at once.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ralph_desk.domain.diffs import (
    MAX_CONTEXT_LINES,
    DiffLine,
    FileChange,
    FileDiff,
    Gap,
    Hunk,
    LineKind,
    gaps_of,
    side_by_side,
)
from ralph_desk.domain.enums import DiffSide, ReviewCommentState
from ralph_desk.domain.reviews import where
from ralph_desk.gui.panes.inbox.reviews.words import Span, spans_of, word_spans


class RowKind(StrEnum):
    """What a row of the diff view is."""

    FILE = "file"
    HUNK = "hunk"
    LINE = "line"
    INFO = "info"
    COMMENT = "comment"
    GAP = "gap"  # unchanged lines left out, to show on a click


GAP_STEP = 20
"""Unchanged lines one click on a long gap shows (a gap this short, or up to half as long again, shows
whole)."""


@dataclass(frozen=True)
class LineComment:
    """A review comment on a line (of the new file, or a removed one of the old), a file, or the change.

    `pending`: the human's own comment, not yet sent; it can be edited or deleted (by its `id`).
    """

    text: str
    file: str | None = None
    line: int | None = None
    author: str = ""
    state: str = ReviewCommentState.OPEN.value
    side: DiffSide = DiffSide.NEW
    id: int = 0
    pending: bool = False

    @property
    def place(self) -> str:
        """`path:line`, `path:line (removed, old file)`, `path`, or empty."""
        return where(self.file, self.line, self.side)

    @property
    def key(self) -> tuple[DiffSide, int] | None:
        """The side and line the comment is on, or None for a comment on a file or the change."""
        return (self.side, self.line) if self.file and self.line else None


@dataclass(slots=True)  # not frozen: a frozen dataclass is made 3× slower, and a diff has many rows
class DiffRow:
    """One row: a file or hunk header, a line (or a pair of lines side by side), a note or a comment.

    `anchor` is the line a comment row is about (on its comment's side). Rows are not changed once
    laid out.
    """

    kind: RowKind
    file: int
    text: str = ""
    old: DiffLine | None = None
    new: DiffLine | None = None
    anchor: int | None = None
    comment: LineComment | None = None
    old_words: tuple[Span, ...] = ()
    """The ranges of the old line that changed, word by word (marked within the line)."""
    new_words: tuple[Span, ...] = ()
    """The ranges of the new line that changed, word by word."""
    gap: Gap | None = None
    """The unchanged lines a gap row stands for."""
    hidden: int | None = None
    """How many of them are still left out (None: to the end of the file, not known yet)."""

    @property
    def line(self) -> DiffLine | None:
        """The line a unified row shows (the new side's, else the old side's)."""
        return self.new or self.old


@dataclass
class Expansion:
    """The unchanged lines shown beyond the diff's own: each file's, read from the whole files of the
    reviewed commits, and how many of each gap are shown from its top and from its bottom."""

    lines: dict[int, dict[int, DiffLine]] = field(default_factory=dict)
    """File number → the file's unchanged lines by old line number (empty until the whole files are read)."""
    shown: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """(file number, `Gap.before`) → lines shown from the gap's top, and from its bottom."""

    def count(self, file: int, gap: Gap) -> int | None:
        """How many lines the gap holds (one running to the file's end: known once the files are read)."""
        if gap.count is not None:
            return gap.count
        known = self.lines.get(file)
        if known is None:
            return None
        end = gap.old_start
        while end in known:
            end += 1
        return end - gap.old_start

    def widen(self, file: int, gap: Gap, hunks: int, everything: bool = False) -> None:
        """Show more of a gap: all of it, or `GAP_STEP` lines beside the changes around it."""
        top, bottom = self.shown.get((file, gap.before), (0, 0))
        count = self.count(file, gap)
        hidden = None if count is None else max(0, count - top - bottom)
        if hidden is None:
            step = MAX_CONTEXT_LINES if everything else GAP_STEP
        else:
            step = hidden if everything or hidden <= GAP_STEP * 3 // 2 else GAP_STEP
        if gap.before == 0:
            bottom += step  # above the first change: the lines nearest it
        elif gap.before == hunks:
            top += step  # below the last change
        else:
            top += step // 2
            bottom += step - step // 2
        self.shown[(file, gap.before)] = (top, bottom)


@dataclass(frozen=True)
class DiffLayout:
    """The rows of a diff and what a view needs to size them."""

    rows: list[DiffRow]
    file_rows: list[int]
    widest: int
    largest_number: int
    split: bool = False


def file_notes(diff: FileDiff) -> list[str]:
    """What a file's change is beyond its lines: binary, renamed, mode, empty."""
    notes: list[str] = []
    if diff.binary:
        notes.append("Binary file — its content is not shown")
    if diff.change is FileChange.RENAMED:
        similarity = f" ({diff.similarity}% similar)" if diff.similarity is not None else ""
        notes.append(f"Renamed from {diff.old_path}{similarity}")
    if diff.change is FileChange.COPIED:
        notes.append(f"Copied from {diff.old_path}")
    if diff.old_mode and diff.new_mode and diff.old_mode != diff.new_mode:
        notes.append(f"Mode {diff.old_mode} → {diff.new_mode}")
    if not diff.hunks and not diff.binary and diff.change in (FileChange.ADDED, FileChange.DELETED):
        notes.append(f"Empty file {diff.change.value}")
    return notes


def file_fingerprint(diff: FileDiff) -> str:
    """What identifies a file's change: its paths, kind and every line of it (a changed file differs)."""
    digest = hashlib.sha1(usedforsecurity=False)
    head = (diff.old_path, diff.new_path, diff.change.value, diff.binary, diff.old_mode, diff.new_mode)
    digest.update(repr(head).encode())
    for hunk in diff.hunks:
        digest.update(hunk.header.encode())
        for line in hunk.lines:
            digest.update(f"\n{line.kind.value}{line.text}".encode())
    return digest.hexdigest()[:20]


def file_badge(diff: FileDiff) -> str:
    """A word for what happened to the file, for its header."""
    if diff.binary:
        return f"binary, {diff.change.value}" if diff.change is not FileChange.MODIFIED else "binary"
    return diff.change.value


def _unified(hunk: Hunk, file: int, words: dict[int, tuple[Span, ...]] | None = None) -> Iterable[DiffRow]:
    changed = words or {}
    for line in hunk.lines:
        kind = line.kind
        if kind is LineKind.NOTE or kind is LineKind.REMOVED:
            yield DiffRow(RowKind.LINE, file, "", line, old_words=spans_of(line, changed))
        elif kind is LineKind.ADDED:
            yield DiffRow(RowKind.LINE, file, "", None, line, new_words=spans_of(line, changed))
        else:
            yield DiffRow(RowKind.LINE, file, "", line, line)


def _split(hunk: Hunk, file: int, words: dict[int, tuple[Span, ...]]) -> Iterable[DiffRow]:
    for old, new in side_by_side(hunk):
        yield DiffRow(
            RowKind.LINE, file, "", old, new, old_words=spans_of(old, words), new_words=spans_of(new, words)
        )


def line_keys(row: DiffRow) -> list[tuple[DiffSide, int]]:
    """The lines a row shows that take comments: a removed line (old side), a line of the new file."""
    keys: list[tuple[DiffSide, int]] = []
    old, new = row.old, row.new
    if old is not None and old.kind is LineKind.REMOVED and old.old_no is not None:
        keys.append((DiffSide.OLD, old.old_no))
    if new is not None and new.kind is not LineKind.NOTE and new.new_no is not None:
        keys.append((DiffSide.NEW, new.new_no))
    return keys


def target(row: DiffRow, old_half: bool = False) -> tuple[DiffSide, int] | None:
    """The line a comment on this row is about: the removed line when there is one and it is chosen
    (its half of a side-by-side row clicked) or alone, else the new file's line; None for no line."""
    if row.kind is not RowKind.LINE:
        return None
    keys = line_keys(row)
    if not keys:
        return None
    return keys[0] if old_half or len(keys) == 1 else keys[-1]


def _with_comments(
    rows: Iterable[DiffRow], file: int, mine: dict[tuple[DiffSide, int], list[LineComment]]
) -> Iterable[DiffRow]:
    """The rows, each line's comments under the first row that shows the line on the comment's side."""
    placed: set[tuple[DiffSide, int]] = set()
    for row in rows:
        yield row
        if row.kind is not RowKind.LINE:
            continue
        for key in line_keys(row):
            if key in mine and key not in placed:
                placed.add(key)
                for comment in mine[key]:
                    yield DiffRow(RowKind.COMMENT, file, comment.text, anchor=key[1], comment=comment)


def gap_text(hidden: int | None) -> str:
    """What a gap row says: how many unchanged lines it hides, and what a click shows."""
    if hidden is None:
        return "⋯ the rest of the file — show"
    noun = "line" if hidden == 1 else "lines"
    if hidden <= GAP_STEP * 3 // 2:
        return f"⋯ {hidden} unchanged {noun} — show"
    return f"⋯ {hidden} unchanged {noun} — show {GAP_STEP} (Shift: all)"


def _gap_rows(gap: Gap, file: int, expansion: Expansion) -> list[DiffRow]:
    """A gap's shown lines from its top, the row standing for the rest, its shown lines from its bottom."""
    count = expansion.count(file, gap)
    if count == 0:
        return []
    known = expansion.lines.get(file, {})
    top, bottom = expansion.shown.get((file, gap.before), (0, 0)) if known else (0, 0)
    if count is None:
        return [DiffRow(RowKind.GAP, file, gap_text(None), gap=gap)]
    top = min(top, count)
    bottom = min(bottom, count - top)
    hidden = count - top - bottom

    def lines(start: int, end: int) -> list[DiffRow]:
        found = (known.get(number) for number in range(start, end))
        return [DiffRow(RowKind.LINE, file, "", line, line) for line in found if line is not None]

    rows = lines(gap.old_start, gap.old_start + top)
    if hidden:
        rows.append(DiffRow(RowKind.GAP, file, gap_text(hidden), gap=gap, hidden=hidden))
    rows += lines(gap.old_start + count - bottom, gap.old_start + count)
    return rows


def _body(diff: FileDiff, number: int, split: bool, expansion: Expansion) -> list[DiffRow]:
    """A file's hunks, each with its header unless the lines before it are all shown, and its gaps."""
    gaps = {gap.before: gap for gap in gaps_of(diff)}
    rows: list[DiffRow] = []
    for index, hunk in enumerate(diff.hunks):
        gap = gaps.get(index)
        between = _gap_rows(gap, number, expansion) if gap is not None else []
        rows += between
        if not between or any(row.kind is RowKind.GAP for row in between):
            rows.append(DiffRow(RowKind.HUNK, number, hunk.header))
        words = word_spans(hunk)
        rows.extend(_split(hunk, number, words) if split else _unified(hunk, number, words))
    last = gaps.get(len(diff.hunks))
    if last is not None:
        rows += _gap_rows(last, number, expansion)
    return rows


def layout(
    files: Sequence[FileDiff],
    comments: Sequence[LineComment] = (),
    split: bool = False,
    expansion: Expansion | None = None,
) -> DiffLayout:
    """Lay the files out as rows: header, notes, file comments, then each hunk with its line comments and
    the unchanged lines between hunks, shown as far as `expansion` says."""
    on_line: dict[str, dict[tuple[DiffSide, int], list[LineComment]]] = defaultdict(dict)
    on_file: dict[str, list[LineComment]] = defaultdict(list)
    for comment in comments:
        key = comment.key
        if comment.file and key is not None:
            on_line[comment.file].setdefault(key, []).append(comment)
        elif comment.file:
            on_file[comment.file].append(comment)
    rows: list[DiffRow] = []
    file_rows: list[int] = []
    widest = largest = 0
    for number, diff in enumerate(files):
        file_rows.append(len(rows))
        rows.append(DiffRow(RowKind.FILE, number, diff.title))
        rows.extend(DiffRow(RowKind.INFO, number, note) for note in file_notes(diff))
        mine = on_line.get(diff.path, {})
        body = _body(diff, number, split, expansion or Expansion())
        shown = {key for row in body if row.kind is RowKind.LINE for key in line_keys(row)} if mine else set()
        outside = [comment for key, found in mine.items() if key not in shown for comment in found]
        for comment in [*on_file.get(diff.path, []), *outside]:
            rows.append(DiffRow(RowKind.COMMENT, number, comment.text, anchor=comment.line, comment=comment))
        for hunk in diff.hunks:
            largest = max(largest, hunk.old_start + hunk.old_count, hunk.new_start + hunk.new_count)
            widest = max(widest, max((len(line.text) for line in hunk.lines), default=0))
        if expansion is not None and number in expansion.lines:
            for row in body:
                if row.kind is RowKind.LINE and row.old is not None and row.old.kind is LineKind.CONTEXT:
                    widest = max(widest, len(row.old.text))
                    largest = max(largest, row.old.old_no or 0, row.old.new_no or 0)
        rows.extend(_with_comments(body, number, mine) if mine else body)
    return DiffLayout(rows, file_rows, widest, largest, split)
