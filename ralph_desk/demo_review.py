"""Work put in review the way the loop puts it there: sessions' edits committed on a task's branch.

For the screenshots of the Reviews tab and the tests of reviewing; the project must be a git repository.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ralph_desk.domain.enums import Recipe, TaskStatus, Verb
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.container import Services
from ralph_desk.vcs.worktrees import TaskWorktree

__all__ = ["Edits", "put_in_review", "run_session"]

Edits = Mapping[str, str | bytes | None]
"""Files a session writes (text or bytes) or deletes (None), by path in the worktree."""


def _write(folder: Path, edits: Edits) -> None:
    for name, content in edits.items():
        path = folder / name
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_session(services: Services, task_id: int, number: int, edits: Edits, summary: str) -> TaskWorktree:
    """One finished session of a task: it edits files in the task's worktree and its work is committed."""
    task = services.tasks.get(task_id)
    worktree = services.workspaces.prepare(task.id, task.title)
    if worktree is None:
        raise ValueError(f"{services.paths.root} is not a git repository: no task worktree can be made")
    session_id = f"review-{task_id}-{number}"
    started = datetime.now(UTC) - timedelta(minutes=30 - number)
    before = services.workspaces.head(worktree)
    services.sessions.start_session(
        session_id, task.id, Recipe.TASK_EXECUTION, "claude", "sonnet", head_before=before, started_at=started
    )
    _write(worktree.path, edits)
    commit = services.workspaces.commit_session(worktree, task.title, session_id, "done", summary, True)
    services.sessions.finish_session(
        session_id, head_after=commit.after, outcome="done", closing_verb="done", changed_files=sorted(edits)
    )
    services.signals.record(task.id, session_id, Verb.DONE, summary=summary)
    return worktree


def put_in_review(services: Services, task_id: int, *sessions: tuple[Edits, str]) -> TaskWorktree:
    """Run these sessions (edits, summary) on a task, then put it in review as `done` does with the gate."""
    if not sessions:
        raise ValueError("a task in review has at least one session")
    worktrees = [
        run_session(services, task_id, number, edits, summary)
        for number, (edits, summary) in enumerate(sessions, start=1)
    ]
    services.tasks.move(task_id, TaskStatus.IN_REVIEW, Mover.IMPORT)
    return worktrees[-1]
