"""A git unified diff read into files, hunks and lines, with +/− counts; renamed and binary files known."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum

NULL_PATH = "/dev/null"
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
CONTEXT_LINES = 3
"""Unchanged lines shown around each change, as git shows them."""
MAX_CONTEXT_LINES = 100_000
"""Context enough to show whole files."""
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


class LineKind(StrEnum):
    """What a line of a hunk is."""

    CONTEXT = "context"
    ADDED = "added"
    REMOVED = "removed"
    NOTE = "note"  # "\ No newline at end of file"


class FileChange(StrEnum):
    """What happened to a file."""

    MODIFIED = "modified"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk, with its number on the old side, the new side, or both."""

    kind: LineKind
    text: str
    old_no: int | None = None
    new_no: int | None = None


@dataclass(frozen=True)
class Hunk:
    """A run of changed lines with their context, as one `@@` header introduces it."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str
    lines: tuple[DiffLine, ...]

    @property
    def header(self) -> str:
        """The `@@ -a,b +c,d @@ section` line."""
        head = f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"
        return f"{head} {self.section}" if self.section else head


@dataclass(frozen=True)
class FileDiff:
    """The change of one file: its paths, what happened to it, and its hunks (none when binary)."""

    old_path: str | None
    new_path: str | None
    change: FileChange = FileChange.MODIFIED
    binary: bool = False
    similarity: int | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    hunks: tuple[Hunk, ...] = ()
    added: int = 0
    removed: int = 0

    @property
    def path(self) -> str:
        """The file's path after the change (before it, for a deleted file)."""
        return self.new_path or self.old_path or ""

    @property
    def title(self) -> str:
        """The path, or `old → new` for a renamed or copied file."""
        if self.change in (FileChange.RENAMED, FileChange.COPIED) and self.old_path != self.new_path:
            return f"{self.old_path} → {self.new_path}"
        return self.path

    def line_count(self) -> int:
        """How many lines its hunks hold."""
        return sum(len(hunk.lines) for hunk in self.hunks)


@dataclass
class _FileBuilder:
    """A file being read: the header facts first (a `FileDiff` without hunks), then the hunks."""

    head: FileDiff
    hunks: list[Hunk] = field(default_factory=list)

    def build(self) -> FileDiff:
        lines = [line.kind for hunk in self.hunks for line in hunk.lines]
        return replace(
            self.head,
            hunks=tuple(self.hunks),
            added=lines.count(LineKind.ADDED),
            removed=lines.count(LineKind.REMOVED),
        )


def unquote(text: str) -> str:
    """A path as git writes it: C-quoted (`"a\\tb"`, octal bytes as UTF-8) when it holds odd characters."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    body, out, index = text[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 >= len(body):
            out += char.encode()
            index += 1
            continue
        following = body[index + 1]
        if following in "01234567" and re.match(r"[0-7]{3}", body[index + 1 : index + 4]):
            out.append(int(body[index + 1 : index + 4], 8))
            index += 4
        else:
            out += _ESCAPES.get(following, following).encode()
            index += 2
    return out.decode("utf-8", errors="replace")


def _strip_prefix(path: str) -> str | None:
    """`a/x` → `x`; `/dev/null` → None."""
    path = unquote(path.rstrip("\t"))
    if path == NULL_PATH:
        return None
    return path[2:] if len(path) > 2 and path[1] == "/" else path


def _git_line_paths(rest: str) -> tuple[str | None, str | None]:
    """The two paths of `diff --git a/x b/y` (spaces in paths allowed when both are the same)."""
    if rest.startswith('"'):
        match = re.match(r'("(?:[^"\\]|\\.)*") (.*)$', rest)
        if match:
            return _strip_prefix(match.group(1)), _strip_prefix(match.group(2))
    if rest.endswith('"'):
        match = re.match(r'(.*?) ("(?:[^"\\]|\\.)*")$', rest)
        if match:
            return _strip_prefix(match.group(1)), _strip_prefix(match.group(2))
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[2:half] == rest[half + 3 :]:
        return _strip_prefix(rest[:half]), _strip_prefix(rest[half + 1 :])
    old, _, new = rest.partition(" b/")
    return _strip_prefix(old), new or None


def _file_header(head: FileDiff, line: str) -> FileDiff:
    """Take one extended header line (`rename from`, `new file mode`, `Binary files … differ`…)."""
    if line.startswith("new file mode "):
        return replace(head, change=FileChange.ADDED, old_path=None, new_mode=line[14:])
    if line.startswith("deleted file mode "):
        return replace(head, change=FileChange.DELETED, new_path=None, old_mode=line[18:])
    if line.startswith("old mode "):
        return replace(head, old_mode=line[9:])
    if line.startswith("new mode "):
        return replace(head, new_mode=line[9:])
    if line.startswith(("rename from ", "copy from ")):
        return replace(head, old_path=unquote(line.split(" ", 2)[2]))
    if line.startswith(("rename to ", "copy to ")):
        change = FileChange.RENAMED if line.startswith("rename") else FileChange.COPIED
        return replace(head, new_path=unquote(line.split(" ", 2)[2]), change=change)
    if line.startswith("similarity index "):
        return replace(head, similarity=int(line[17:].rstrip("%") or 0))
    if line.startswith("Binary files ") or line == "GIT binary patch":
        return replace(head, binary=True)
    if line.startswith(("--- ", "+++ ")):
        return _side_path(head, line.startswith("-"), _strip_prefix(line[4:]))
    return head


def _side_path(head: FileDiff, old: bool, path: str | None) -> FileDiff:
    """The path of a `---` (old) or `+++` (new) line: `/dev/null` there means added (deleted)."""
    gone = FileChange.ADDED if old else FileChange.DELETED
    if path is None:
        head = replace(head, change=gone)
    elif head.change is gone:
        return head
    return replace(head, old_path=path) if old else replace(head, new_path=path)


def _read_hunk(lines: list[str], start: int, match: re.Match[str]) -> tuple[Hunk, int]:
    """Read the hunk whose header matched at `start`; returns it and the index after it."""
    old_start, new_start = int(match.group(1)), int(match.group(3))
    old_count = int(match.group(2)) if match.group(2) is not None else 1
    new_count = int(match.group(4)) if match.group(4) is not None else 1
    old_left, new_left, old_no, new_no = old_count, new_count, old_start, new_start
    body: list[DiffLine] = []
    index = start + 1
    while index < len(lines):
        text = lines[index]
        if text.startswith("\\"):
            body.append(DiffLine(LineKind.NOTE, text[1:].strip()))
        elif old_left <= 0 and new_left <= 0:
            break
        elif text.startswith("+") and new_left > 0:
            body.append(DiffLine(LineKind.ADDED, text[1:].removesuffix("\r"), None, new_no))
            new_no, new_left = new_no + 1, new_left - 1
        elif text.startswith("-") and old_left > 0:
            body.append(DiffLine(LineKind.REMOVED, text[1:].removesuffix("\r"), old_no, None))
            old_no, old_left = old_no + 1, old_left - 1
        elif (text.startswith(" ") or text == "") and old_left > 0 and new_left > 0:
            body.append(DiffLine(LineKind.CONTEXT, text[1:].removesuffix("\r"), old_no, new_no))
            old_no, new_no = old_no + 1, new_no + 1
            old_left, new_left = old_left - 1, new_left - 1
        else:
            break  # a truncated hunk: what follows is not part of it
        index += 1
    hunk = Hunk(old_start, old_count, new_start, new_count, match.group(5), tuple(body))
    return hunk, index


def parse_diff(text: str) -> list[FileDiff]:
    """Read `git diff` output (renames found, binary files marked) into its files, in order."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files: list[FileDiff] = []
    current: _FileBuilder | None = None
    index = 0
    while index < len(lines):
        line = lines[index].removesuffix("\r")
        if line.startswith("diff --git "):
            if current is not None:
                files.append(current.build())
            current = _FileBuilder(FileDiff(*_git_line_paths(line[11:])))
            index += 1
            continue
        match = HUNK_HEADER.match(line)
        if match and current is not None:
            hunk, index = _read_hunk(lines, index, match)
            current.hunks.append(hunk)
            continue
        if current is None and line.startswith("--- "):
            current = _FileBuilder(FileDiff(None, None))  # a plain unified diff without git's header
        if current is not None:
            current.head = _file_header(current.head, line)
        index += 1
    if current is not None:
        files.append(current.build())
    return files


def side_by_side(hunk: Hunk) -> list[tuple[DiffLine | None, DiffLine | None]]:
    """The hunk as (old, new) rows: context on both sides, removals beside the additions after them."""
    rows: list[tuple[DiffLine | None, DiffLine | None]] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []

    def flush() -> None:
        for number in range(max(len(removed), len(added))):
            rows.append(
                (
                    removed[number] if number < len(removed) else None,
                    added[number] if number < len(added) else None,
                )
            )
        removed.clear()
        added.clear()

    for line in hunk.lines:
        if line.kind is LineKind.REMOVED:
            if added:
                flush()
            removed.append(line)
        elif line.kind is LineKind.ADDED:
            added.append(line)
        else:
            flush()
            rows.append((line, line) if line.kind is LineKind.CONTEXT else (line, None))
    flush()
    return rows


@dataclass(frozen=True)
class Gap:
    """Unchanged lines of a file that its hunks leave out: before hunk `before` (`len(hunks)`: after the
    last); `count` is None when they run to the end of the file, how many not known from the diff."""

    before: int
    old_start: int
    new_start: int
    count: int | None


def _first(hunk: Hunk) -> tuple[int, int]:
    """The old and new numbers of a hunk's first line (an empty side counts from the line after it)."""
    return (
        hunk.old_start if hunk.old_count else hunk.old_start + 1,
        hunk.new_start if hunk.new_count else hunk.new_start + 1,
    )


def _after(hunk: Hunk) -> tuple[int, int]:
    """The old and new numbers of the line after a hunk."""
    first_old, first_new = _first(hunk)
    return first_old + hunk.old_count, first_new + hunk.new_count


def _reaches_end(hunk: Hunk, context: int) -> bool:
    """Whether a hunk ends at its file's end: fewer unchanged lines after its last change than git shows."""
    lines = [line.kind for line in hunk.lines]
    if lines and lines[-1] is LineKind.NOTE:
        return True  # "no newline at end of file": the last line
    trailing = len(lines) - next(
        (number for number in range(len(lines), 0, -1) if lines[number - 1] is not LineKind.CONTEXT), 0
    )
    return trailing < context


def gaps_of(diff: FileDiff, context: int = CONTEXT_LINES) -> list[Gap]:
    """The unchanged lines a file's diff (read with `context` lines) leaves out, top to bottom."""
    if not diff.hunks or diff.binary or diff.change in (FileChange.ADDED, FileChange.DELETED):
        return []
    gaps: list[Gap] = []
    old_at, new_at = 1, 1
    for number, hunk in enumerate(diff.hunks):
        first_old = _first(hunk)[0]
        if first_old > old_at:
            gaps.append(Gap(number, old_at, new_at, first_old - old_at))
        old_at, new_at = _after(hunk)
    if not _reaches_end(diff.hunks[-1], context):
        gaps.append(Gap(len(diff.hunks), old_at, new_at, None))
    return gaps


def unchanged_lines(whole: FileDiff) -> dict[int, DiffLine]:
    """The unchanged lines of a file's diff read with whole files, by their number in the old file."""
    return {
        line.old_no: line
        for hunk in whole.hunks
        for line in hunk.lines
        if line.kind is LineKind.CONTEXT and line.old_no is not None
    }
