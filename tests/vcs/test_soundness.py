"""A task worktree is checked from the files git keeps, never by running git in the folder its agent had."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ralph_desk.vcs import soundness
from tests.support.git_repo import git, make_repo


@pytest.fixture
def worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A repository and one linked worktree of it, on branch `ralph/1-task`."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# repo\n"})
    path = repo / ".ralph" / "worktrees" / "1-task"
    git(repo, "worktree", "add", "-q", "-b", "ralph/1-task", str(path))
    return repo, path


def test_a_worktree_as_git_made_it_is_sound(worktree: tuple[Path, Path]) -> None:
    assert soundness.damage(*worktree) is None


def test_a_dot_git_aimed_at_another_repository_is_damage_and_mend_aims_it_home(
    worktree: tuple[Path, Path], tmp_path: Path
) -> None:
    repo, path = worktree
    other = make_repo(tmp_path / "other", {"x": "y\n"})
    (path / ".git").write_text(f"gitdir: {other / '.git'}\n")
    (path / "work.txt").write_text("uncommitted\n")

    assert (
        soundness.damage(repo, path)
        == "has a .git file that no longer points to its record in the repository"
    )
    assert soundness.mend(repo, path)
    assert soundness.damage(repo, path) is None
    assert (path / "work.txt").read_text() == "uncommitted\n"  # repaired in place: nothing lost


def test_a_deleted_folder_and_a_deleted_record_are_told_apart(worktree: tuple[Path, Path]) -> None:
    repo, path = worktree
    shutil.rmtree(repo / ".git" / "worktrees" / "1-task")
    assert (
        soundness.damage(repo, path) == "is no longer known to git (its record under .git/worktrees is gone)"
    )
    assert not soundness.mend(repo, path)  # no record to aim at: the caller makes the worktree again
    shutil.rmtree(path)
    assert soundness.damage(repo, path) == "was deleted"


def test_a_linked_dot_git_is_damage_whatever_it_points_to(worktree: tuple[Path, Path]) -> None:
    repo, path = worktree
    target = path.parent / "pointer"
    (path / ".git").rename(target)
    (path / ".git").symlink_to(target)
    assert soundness.damage(repo, path) == "lost its .git file"
