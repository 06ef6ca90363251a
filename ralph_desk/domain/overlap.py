"""Which runnable task starts beside the running ones: no shared context file, a free feature first (no I/O).

Two sessions editing the same file conflict at merge time, so a task naming a context file that a
running task also names (or a folder holding it) waits. Tasks of one feature tend to touch the same
code, so a task of a feature nobody works on is preferred; with only same-feature work left it runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class Footprint:
    """What a task may touch: its feature and its context files."""

    task_id: int
    feature: int | str
    context_files: tuple[str, ...] = ()


def normal_path(path: str) -> str:
    """A context file as a comparable relative path: `./src//a.py` and `src/a.py/` are `src/a.py`."""
    parts = [part for part in PurePosixPath(path.replace("\\", "/")).parts if part not in ("", ".", "/")]
    return "/".join(parts)


def _paths_overlap(first: str, second: str) -> bool:
    """Equal paths, or one a folder holding the other."""
    if not first or not second:
        return False
    return first == second or first.startswith(second + "/") or second.startswith(first + "/")


def shares_files(candidate: Footprint, running: Iterable[Footprint]) -> bool:
    """Whether a context file of `candidate` is (or holds, or lies in) a context file of a running task."""
    mine = [normal_path(path) for path in candidate.context_files]
    return any(
        _paths_overlap(path, normal_path(theirs))
        for other in running
        for theirs in other.context_files
        for path in mine
    )


def choose(candidates: Sequence[Footprint], running: Sequence[Footprint]) -> Footprint | None:
    """The first candidate (queue order) sharing no file with a running task; one of a free feature first."""
    allowed = [candidate for candidate in candidates if not shares_files(candidate, running)]
    busy = {other.feature for other in running}
    free = [candidate for candidate in allowed if candidate.feature not in busy]
    first = free or allowed
    return first[0] if first else None
