"""Deleting a task takes its worktree and branch along, never its unmerged work; the sweep at a loop's start
removes the worktrees of tasks that are gone and folders git forgot, and never follows a link."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.demo_review import put_in_review
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ConflictError
from tests.support.git_repo import git
from tests.support.review_project import open_review_project


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"README.md": "# tides\n"}, "Retiring")
    yield services
    services.close()


def has_branch(root: Path, branch: str) -> bool:
    """Whether `refs/heads/<branch>` exists in the repository."""
    return git(root, "for-each-ref", "--format=%(refname)", f"refs/heads/{branch}") == f"refs/heads/{branch}"


def delete_in_terminal(desk: Services, task_id: int) -> subprocess.CompletedProcess[str]:
    """`ralph-desk delete ID`, as a person types it."""
    command = [sys.executable, "-m", "ralph_desk", "delete", str(task_id), "--root", str(desk.paths.root)]
    return subprocess.run(
        [*command, "--db-url", desk.db.url],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_deleting_a_task_with_unmerged_work_removes_its_worktree_and_keeps_its_branch_saying_so(
    desk: Services,
) -> None:
    root = desk.paths.root
    task = desk.tasks.create("core", "backend", "Chart the tides")
    worktree = put_in_review(desk, task.id, ({"tides.txt": "high 2\n"}, "charted"))
    (worktree.path / "notes.txt").write_text("left uncommitted\n")  # a session's leftovers

    deleted = delete_in_terminal(desk, task.id)

    assert deleted.returncode == 0, deleted.stderr
    assert f"kept the branch {worktree.branch}: it holds work not on main" in deleted.stdout
    assert not worktree.path.exists()
    assert has_branch(root, worktree.branch)
    assert git(root, "show", f"{worktree.branch}:tides.txt") == "high 2"
    assert git(root, "show", f"{worktree.branch}:notes.txt") == "left uncommitted"  # nothing lost
    assert str(worktree.path) not in git(root, "worktree", "list")
    assert desk.tasks.list() == []


def test_deleting_a_task_whose_branch_holds_nothing_new_removes_the_worktree_and_the_branch(
    desk: Services,
) -> None:
    root = desk.paths.root
    task = desk.tasks.create("core", "backend", "Never started")
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None and worktree.path.is_dir()

    told = desk.retiring.delete_task(task.id)

    assert told == f"removed the branch {worktree.branch} (all its work is on main)"
    assert not worktree.path.exists() and not has_branch(root, worktree.branch)


def test_a_refused_deletion_leaves_the_worktree_and_branch_alone(desk: Services) -> None:
    task = desk.tasks.create("core", "backend", "Needed by another")
    desk.tasks.create("core", "backend", "Depends on it", depends_on=[task.id])
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None

    with pytest.raises(ConflictError, match="depended on"):
        desk.retiring.delete_task(task.id)

    assert worktree.path.is_dir() and has_branch(desk.paths.root, worktree.branch)


def test_the_sweep_retires_worktrees_of_gone_tasks_and_forgotten_folders_and_never_follows_a_link(
    desk: Services, tmp_path: Path
) -> None:
    root = desk.paths.root
    live = desk.tasks.create("core", "backend", "Still here")
    live_tree = put_in_review(desk, live.id, ({"live.txt": "live\n"}, "done"))
    gone = desk.tasks.create("core", "backend", "Deleted elsewhere")
    gone_tree = put_in_review(desk, gone.id, ({"gone.txt": "gone\n"}, "done"))
    desk.tasks.delete(gone.id)  # by a process that knew nothing of worktrees
    forgotten = desk.paths.worktrees_dir / "77-forgotten"
    forgotten.mkdir()
    (forgotten / "stray.txt").write_text("stray\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me\n")
    link = desk.paths.worktrees_dir / "78-link"
    link.symlink_to(outside, target_is_directory=True)

    told = desk.retiring.sweep()

    assert sorted(told) == sorted(
        [
            f"kept the branch {gone_tree.branch}: it holds work not on main "
            f"(merge it, or `git branch -D {gone_tree.branch}` to drop it)",
            f"removed the stale worktree folder {forgotten}",
            f"removed the stale worktree folder {link}",
        ]
    )
    assert not gone_tree.path.exists() and git(root, "show", f"{gone_tree.branch}:gone.txt") == "gone"
    assert not forgotten.exists() and not link.is_symlink()
    assert (outside / "precious.txt").read_text() == "keep me\n"  # what the link pointed to is untouched
    assert live_tree.path.is_dir() and (live_tree.path / "live.txt").is_file()
    assert desk.retiring.sweep() == []


@pytest.mark.sqlite_only  # the row is spoilt through the SQLite file
def test_the_sweep_leaves_the_worktree_of_a_task_whose_row_does_not_read(desk: Services) -> None:
    task = desk.tasks.create("core", "backend", "Written over by another tool")
    tree = put_in_review(desk, task.id, ({"tides.txt": "high 2\n"}, "charted"))
    (tree.path / "draft.txt").write_text("the agent's draft\n")
    with sqlite3.connect(desk.paths.db_file) as connection:  # not UTF-8: the task list leaves it out
        connection.execute("UPDATE tasks SET title = CAST(X'41EDA08042FF' AS TEXT) WHERE id = ?", (task.id,))
    assert [error.id for error in desk.tasks.list().errors] == [task.id]

    assert desk.retiring.sweep() == []

    assert (tree.path / "draft.txt").read_text() == "the agent's draft\n"
    assert has_branch(desk.paths.root, tree.branch)
