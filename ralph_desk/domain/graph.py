"""Task dependency graphs: finding the cycle a new dependency would close (no I/O)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

Edge = tuple[int, int]
"""`(task_id, depends_on_id)`: the first task may start only once the second is done."""


def find_cycle(edges: Iterable[Edge], new_edge: Edge) -> list[int] | None:
    """The cycle that adding `new_edge` to `edges` would close, as a path from and back to its task.

    `find_cycle([(5, 3)], (3, 5))` is `[3, 5, 3]`: #3 would depend on #5, which depends on #3.
    The shortest such path is returned; None when the new edge closes no cycle.
    """
    task_id, depends_on_id = new_edge
    if task_id == depends_on_id:
        return [task_id, task_id]
    successors: dict[int, set[int]] = {}
    for source, target in edges:
        successors.setdefault(source, set()).add(target)
    came_from: dict[int, int] = {}
    queue = deque([depends_on_id])
    seen = {depends_on_id}
    while queue:
        current = queue.popleft()
        if current == task_id:
            return [task_id, *_path_to(current, depends_on_id, came_from)]
        for following in sorted(successors.get(current, ())):
            if following not in seen:
                seen.add(following)
                came_from[following] = current
                queue.append(following)
    return None


def _path_to(end: int, start: int, came_from: dict[int, int]) -> list[int]:
    path = [end]
    while path[-1] != start:
        path.append(came_from[path[-1]])
    path.reverse()
    return path


def format_path(path: Iterable[int]) -> str:
    """A path of task ids as people read it: `#3 → #5 → #3`."""
    return " → ".join(f"#{task_id}" for task_id in path)
