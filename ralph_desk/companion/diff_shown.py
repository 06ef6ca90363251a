"""How much of a diff a phone is given: every file named, lines up to a budget, long lines cut."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ralph_desk.domain.diffs import DiffLine, FileDiff, Hunk

MAX_LINES = 1500
"""Lines of all files together; past them files are named with their counts only."""
MAX_LINE_CHARS = 1000
CUT = "…"


@dataclass(frozen=True)
class ShownFile:
    """One file as shown: its hunks up to the budget, and how many of its lines were left out."""

    diff: FileDiff
    hunks: tuple[Hunk, ...]
    left_out: int = 0


@dataclass(frozen=True)
class ShownDiff:
    """A diff cut to fit a phone; `left_out` lines in all (0: shown whole)."""

    files: tuple[ShownFile, ...]
    left_out: int = 0

    @property
    def added(self) -> int:
        """Lines added in all files."""
        return sum(file.diff.added for file in self.files)

    @property
    def removed(self) -> int:
        """Lines removed in all files."""
        return sum(file.diff.removed for file in self.files)


def _line(line: DiffLine, limit: int) -> DiffLine:
    return line if len(line.text) <= limit else replace(line, text=line.text[: limit - 1] + CUT)


def shown(files: list[FileDiff], max_lines: int = MAX_LINES, max_chars: int = MAX_LINE_CHARS) -> ShownDiff:
    """The files of a diff with at most `max_lines` lines in all, each at most `max_chars` long."""
    budget = max_lines
    result: list[ShownFile] = []
    for diff in files:
        hunks: list[Hunk] = []
        for hunk in diff.hunks:
            if budget <= 0:
                break
            kept = tuple(_line(line, max_chars) for line in hunk.lines[:budget])
            budget -= len(kept)
            hunks.append(replace(hunk, lines=kept))
        left_out = diff.line_count() - sum(len(hunk.lines) for hunk in hunks)
        result.append(ShownFile(diff, tuple(hunks), left_out))
    return ShownDiff(tuple(result), sum(file.left_out for file in result))
