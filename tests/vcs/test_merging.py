"""An approval never harms the person's checkout: no merge while git is in the middle of something there (it
says which, and how to end it), and no file git does not track (an ignored `.env` with a secret, an untracked
draft) is overwritten — the merge is refused naming them, and nothing moves."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.container import Services
from ralph_desk.services.merge_queue import MergeTurnError
from ralph_desk.services.reviews import ReviewError
from tests.support.git_repo import GIT, commit_all, git
from tests.support.review_project import open_review_project, read_tip


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"app.py": "old\n", "notes.txt": "keep\n"}, "Merge")
    yield services
    services.close()


def _in_review(desk: Services, files: dict[str, str], forced: tuple[str, ...] = ()) -> int:
    """A task in review whose branch writes `files` (`forced` ones added past .gitignore, as an agent can)."""
    task = desk.tasks.create("core", "backend", "Greet")
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    for name, text in files.items():
        (worktree.path / name).parent.mkdir(parents=True, exist_ok=True)
        (worktree.path / name).write_text(text)
    if forced:
        git(worktree.path, "add", "--force", "--", *forced)
    desk.workspaces.commit_session(worktree, task.title, "s-1", "done", "Greeted.", True)
    desk.tasks.move(task.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
    return task.id


def _attempt(repo: Path, *args: str) -> None:
    """Run git as the person where it may stop on a conflict (the state the test wants)."""
    subprocess.run([*GIT, *args], cwd=repo, capture_output=True, check=False, timeout=60)


def _diverged(root: Path) -> None:
    """`main` and `other` change notes.txt each their own way: a rebase, merge or pick of one onto the other
    stops on a conflict."""
    git(root, "checkout", "-q", "-b", "other")
    (root / "notes.txt").write_text("theirs\n")
    commit_all(root, "theirs")
    git(root, "checkout", "-q", "main")
    (root / "notes.txt").write_text("ours\n")
    commit_all(root, "ours")


def _revert_stopped(root: Path) -> None:
    (root / "notes.txt").write_text("ours, later\n")
    commit_all(root, "ours, later")
    _attempt(root, "revert", "--no-edit", "HEAD~1")


def _am_stopped(root: Path) -> None:
    patch = git(root, "format-patch", "-1", "--stdout", "other")
    subprocess.run([*GIT, "am"], cwd=root, input=patch + "\n", text=True, capture_output=True, check=False)


IN_PROGRESS = {
    "rebase": (
        "a rebase is in progress",
        "git rebase --abort",
        lambda root: _attempt(root, "rebase", "other"),
    ),
    "rebase-apply": (
        "a rebase is in progress",
        "git rebase --abort",
        lambda root: _attempt(root, "rebase", "--apply", "other"),
    ),
    "merge": ("a merge is in progress", "git merge --abort", lambda root: _attempt(root, "merge", "other")),
    "cherry-pick": (
        "a cherry-pick is in progress",
        "git cherry-pick --abort",
        lambda root: _attempt(root, "cherry-pick", "other"),
    ),
    "revert": ("a revert is in progress", "git revert --abort", _revert_stopped),
    "am": ("a `git am` is in progress", "git am --abort", _am_stopped),
    "bisect": (
        "a bisect is in progress",
        "git bisect reset",
        lambda root: _attempt(root, "bisect", "start", "HEAD", "HEAD~2"),  # a commit between: HEAD detached
    ),
}


@pytest.mark.parametrize("operation", list(IN_PROGRESS))
def test_an_approval_while_the_checkout_is_in_the_middle_of_a_git_operation_is_refused_saying_which(
    desk: Services, operation: str
) -> None:
    what, abort, start = IN_PROGRESS[operation]
    root = desk.paths.root
    task_id = _in_review(desk, {"app.py": "new\n"})
    _diverged(root)
    start(root)
    before, status = git(root, "rev-parse", "refs/heads/main"), git(root, "status", "--porcelain")

    with pytest.raises(ReviewError, match=f"{re.escape(what)} in {re.escape(str(root))}.*{re.escape(abort)}"):
        desk.reviews.approve(task_id, read_tip(desk, task_id))

    assert git(root, "rev-parse", "refs/heads/main") == before
    assert git(root, "status", "--porcelain") == status
    assert desk.tasks.get(task_id).status is TaskStatus.IN_REVIEW
    git(root, *abort.split()[1:])
    assert desk.reviews.approve(task_id, read_tip(desk, task_id)).status == TaskStatus.DONE.value
    assert git(root, "show", "main:app.py") == "new" and (root / "app.py").read_text() == "new\n"


def test_a_merge_in_progress_where_a_linked_worktree_holds_the_base_is_refused_naming_that_folder(
    desk: Services, tmp_path: Path
) -> None:
    root = desk.paths.root
    task_id = _in_review(desk, {"app.py": "new\n"})
    _diverged(root)
    git(root, "checkout", "-q", "other")
    linked = tmp_path / "person-main"
    git(root, "worktree", "add", "-q", str(linked), "main")
    _attempt(linked, "merge", "other")
    before = git(root, "rev-parse", "refs/heads/main")

    with pytest.raises(ReviewError, match=f"a merge is in progress in {re.escape(str(linked))}"):
        desk.reviews.approve(task_id, read_tip(desk, task_id))

    assert git(root, "rev-parse", "refs/heads/main") == before
    assert (linked / ".git").is_file() and "UU notes.txt" in git(linked, "status", "--porcelain")


def test_an_ignored_env_file_the_branch_adds_is_never_overwritten(desk: Services) -> None:
    root = desk.paths.root
    (root / ".gitignore").write_text(".env\n")
    commit_all(root, "ignore .env")
    task_id = _in_review(desk, {"app.py": "new\n", ".env": "SECRET=the agent's\n"}, forced=(".env",))
    (root / ".env").write_text("SECRET=the person's own\n")
    before = git(root, "rev-parse", "refs/heads/main")
    status = git(root, "status", "--porcelain", "--ignored", "--", ".env", "app.py")

    with pytest.raises(ReviewError, match=r"files git does not track: \.env \(ignored\) — move them"):
        desk.reviews.approve(task_id, read_tip(desk, task_id))

    assert (root / ".env").read_text() == "SECRET=the person's own\n"
    assert git(root, "rev-parse", "refs/heads/main") == before
    assert git(root, "status", "--porcelain", "--ignored", "--", ".env", "app.py") == status
    assert not (root / ".ralph" / "merge-journal.json").exists()


@pytest.mark.parametrize(
    ("added", "in_the_way"), [("plan.md", "plan.md"), ("conf/site.toml", "conf")], ids=["file", "its-folder"]
)
def test_an_untracked_file_in_the_way_of_what_the_branch_adds_is_refused_naming_it(
    desk: Services, added: str, in_the_way: str
) -> None:
    root = desk.paths.root
    task_id = _in_review(desk, {"app.py": "new\n", added: "the agent's\n"})
    (root / in_the_way).write_text("the person's draft\n")
    before, status = git(root, "rev-parse", "refs/heads/main"), git(root, "status", "--porcelain")

    with pytest.raises(
        ReviewError, match=rf"files git does not track: {re.escape(in_the_way)} \(untracked\)"
    ):
        desk.reviews.approve(task_id, read_tip(desk, task_id))

    assert (root / in_the_way).read_text() == "the person's draft\n"
    assert git(root, "rev-parse", "refs/heads/main") == before
    assert git(root, "status", "--porcelain") == status


def test_a_merge_journal_that_is_not_ours_stops_the_merge_turn_saying_what_to_do(desk: Services) -> None:
    root = desk.paths.root
    task_id = _in_review(desk, {"app.py": "new\n"})
    (root / ".ralph" / "merge-journal.json").write_text('{"checkout": "/", "changes": "nonsense"}')
    before = git(root, "rev-parse", "refs/heads/main")

    with pytest.raises(MergeTurnError, match=r"merge-journal\.json cannot be read .*then remove it"):
        desk.reviews.approve(task_id, read_tip(desk, task_id))

    assert git(root, "rev-parse", "refs/heads/main") == before
    (root / ".ralph" / "merge-journal.json").unlink()
    assert desk.reviews.approve(task_id, read_tip(desk, task_id)).status == TaskStatus.DONE.value
