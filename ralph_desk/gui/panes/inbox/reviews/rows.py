"""A parsed diff laid out as the rows a diff view shows, unified or side by side, with the line comments.

Qt-free: the rows are plain records, built in one pass, so a view can show any slice of them at once.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ralph_desk.domain.diffs import DiffLine, FileChange, FileDiff, Hunk, LineKind, side_by_side
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


def layout(
    files: Sequence[FileDiff], comments: Sequence[LineComment] = (), split: bool = False
) -> DiffLayout:
    """Lay the files out as rows: header, notes, file comments, then each hunk with its line comments."""
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
        shown = (
            {key for hunk in diff.hunks for row in _unified(hunk, number) for key in line_keys(row)}
            if mine
            else set()
        )
        outside = [comment for key, found in mine.items() if key not in shown for comment in found]
        for comment in [*on_file.get(diff.path, []), *outside]:
            rows.append(DiffRow(RowKind.COMMENT, number, comment.text, anchor=comment.line, comment=comment))
        for hunk in diff.hunks:
            rows.append(DiffRow(RowKind.HUNK, number, hunk.header))
            largest = max(largest, hunk.old_start + hunk.old_count, hunk.new_start + hunk.new_count)
            widest = max(widest, max((len(line.text) for line in hunk.lines), default=0))
            words = word_spans(hunk)
            lines = _split(hunk, number, words) if split else _unified(hunk, number, words)
            rows.extend(_with_comments(lines, number, mine) if mine else lines)
    return DiffLayout(rows, file_rows, widest, largest, split)
