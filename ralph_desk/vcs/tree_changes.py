"""What changes between two commits, path by path, with the blob each side has there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ralph_desk.vcs.run import run

_ABSENT = frozenset({"0" * 40, "0" * 64})


@dataclass(frozen=True)
class Change:
    """One path that differs: its blob (or gitlink) on each side, None where the path is absent."""

    path: str
    old: str | None
    new: str | None


def between(repo: Path, old: str, new: str) -> tuple[Change, ...]:
    """Every path whose entry differs from commit `old` to `new` (a rename is a removal and an addition)."""
    fields = run(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new).stdout.split("\0")
    found: list[Change] = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        words = meta.split()
        if len(words) < 5:
            continue
        before, after = words[2], words[3]
        found.append(Change(path, None if before in _ABSENT else before, None if after in _ABSENT else after))
    return tuple(found)
