"""A parsed diff laid out as the rows a diff view shows, unified or side by side, with the line comments.

Qt-free: the rows are plain records, built in one pass, so a view can show any slice of them at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ralph_desk.domain.diffs import DiffLine, FileChange, FileDiff, Hunk, LineKind, side_by_side
from ralph_desk.domain.enums import ReviewCommentState


class RowKind(StrEnum):
    """What a row of the diff view is."""

    FILE = "file"
    HUNK = "hunk"
    LINE = "line"
    INFO = "info"
    COMMENT = "comment"


@dataclass(frozen=True)
class LineComment:
    """A review comment on a file's line (new side), on a file, or on the whole change."""

    text: str
    file: str | None = None
    line: int | None = None
    author: str = ""
    state: str = ReviewCommentState.OPEN.value

    @property
    def place(self) -> str:
        """`path:line`, `path`, or empty."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or ""


@dataclass(slots=True)  # not frozen: a frozen dataclass is made 3× slower, and a diff has many rows
class DiffRow:
    """One row: a file or hunk header, a line (or a pair of lines side by side), a note or a comment.

    `anchor` is the line on the new side a comment on this row is about: for a removed line, the
    line before which it was removed. Rows are not changed once laid out.
    """

    kind: RowKind
    file: int
    text: str = ""
    old: DiffLine | None = None
    new: DiffLine | None = None
    anchor: int | None = None
    comment: LineComment | None = None

    @property
    def line(self) -> DiffLine | None:
        """The line a unified row shows (the new side's, else the old side's)."""
        return self.new or self.old


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


def file_badge(diff: FileDiff) -> str:
    """A word for what happened to the file, for its header."""
    if diff.binary:
        return f"binary, {diff.change.value}" if diff.change is not FileChange.MODIFIED else "binary"
    return diff.change.value


def _unified(hunk: Hunk, file: int) -> Iterable[DiffRow]:
    previous_new = hunk.new_start - 1
    for line in hunk.lines:
        kind = line.kind
        if kind is LineKind.NOTE:
            yield DiffRow(RowKind.LINE, file, "", line)
        elif kind is LineKind.ADDED:
            previous_new = line.new_no or previous_new
            yield DiffRow(RowKind.LINE, file, "", None, line, previous_new)
        elif kind is LineKind.REMOVED:
            yield DiffRow(RowKind.LINE, file, "", line, None, previous_new + 1)
        else:
            previous_new = line.new_no or previous_new
            yield DiffRow(RowKind.LINE, file, "", line, line, previous_new)


def _split(hunk: Hunk, file: int) -> Iterable[DiffRow]:
    previous_new = hunk.new_start - 1
    for old, new in side_by_side(hunk):
        if new is not None and new.new_no is not None:
            previous_new = new.new_no
            anchor: int | None = new.new_no
        else:
            anchor = previous_new + 1 if old is not None and old.kind is not LineKind.NOTE else None
        yield DiffRow(RowKind.LINE, file, "", old, new, anchor)


def _with_comments(
    rows: Iterable[DiffRow], file: int, mine: dict[int, list[LineComment]]
) -> Iterable[DiffRow]:
    """The rows, each line's comments under its first row."""
    placed: set[int] = set()
    for row in rows:
        yield row
        line_no = row.new.new_no if row.new is not None else None
        if line_no is not None and line_no in mine and line_no not in placed:
            placed.add(line_no)
            for comment in mine[line_no]:
                yield DiffRow(RowKind.COMMENT, file, comment.text, anchor=line_no, comment=comment)


def layout(
    files: Sequence[FileDiff], comments: Sequence[LineComment] = (), split: bool = False
) -> DiffLayout:
    """Lay the files out as rows: header, notes, file comments, then each hunk with its line comments."""
    on_line: dict[tuple[str, int], list[LineComment]] = defaultdict(list)
    on_file: dict[str, list[LineComment]] = defaultdict(list)
    for comment in comments:
        if comment.file and comment.line:
            on_line[(comment.file, comment.line)].append(comment)
        elif comment.file:
            on_file[comment.file].append(comment)
    rows: list[DiffRow] = []
    file_rows: list[int] = []
    widest = largest = 0
    for number, diff in enumerate(files):
        file_rows.append(len(rows))
        rows.append(DiffRow(RowKind.FILE, number, diff.title))
        rows.extend(DiffRow(RowKind.INFO, number, note) for note in file_notes(diff))
        mine = {line: found for (path, line), found in on_line.items() if path == diff.path}
        shown = {line.new_no for hunk in diff.hunks for line in hunk.lines} if mine else set()
        outside = [comment for line, found in mine.items() if line not in shown for comment in found]
        for comment in [*on_file.get(diff.path, []), *outside]:
            rows.append(DiffRow(RowKind.COMMENT, number, comment.text, anchor=comment.line, comment=comment))
        for hunk in diff.hunks:
            rows.append(DiffRow(RowKind.HUNK, number, hunk.header))
            largest = max(largest, hunk.old_start + hunk.old_count, hunk.new_start + hunk.new_count)
            widest = max(widest, max((len(line.text) for line in hunk.lines), default=0))
            lines = _split(hunk, number) if split else _unified(hunk, number)
            rows.extend(_with_comments(lines, number, mine) if mine else lines)
    return DiffLayout(rows, file_rows, widest, largest, split)
