"""A worktree and a branch per task: `.ralph/worktrees/<id>-<slug>` on branch `ralph/<id>-<slug>`."""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.vcs import commits, worktree_git
from ralph_desk.vcs.run import GitError, is_ancestor, out, rev, run

log = logging.getLogger("ralph_desk.vcs")

BRANCH_PREFIX = "ralph/"
SLUG_LIMIT = 40

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class TaskWorktree:
    """Where a task's sessions work: its folder, its branch and the branch it will merge into."""

    task_id: int
    path: Path
    branch: str
    base: str


def slug(title: str) -> str:
    """A branch-safe short form of a title (`Add the login form` → `add-the-login-form`)."""
    words = _NOT_SLUG.sub("-", title.lower()).strip("-")
    return words[:SLUG_LIMIT].rstrip("-") or "task"


def branch_for(task_id: int, title: str) -> str:
    """The branch a new task worktree gets."""
    return f"{BRANCH_PREFIX}{task_id}-{slug(title)}"


def task_branches(repo: Path) -> dict[int, str]:
    """Every task branch in the repository, by task id."""
    listing = out(repo, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{BRANCH_PREFIX}")
    found: dict[int, str] = {}
    for name in listing.splitlines():
        match = re.fullmatch(rf"{re.escape(BRANCH_PREFIX)}(\d+)-[a-z0-9-]+", name)
        if match:
            found.setdefault(int(match.group(1)), name)
    return found


def find_branch(repo: Path, task_id: int) -> str | None:
    """The branch of a task, if it has one."""
    return task_branches(repo).get(task_id)


def checkouts(repo: Path) -> dict[str, Path]:
    """The folder each checked-out branch lives in (the person's checkout and every worktree)."""
    listing = out(repo, "worktree", "list", "--porcelain")
    found: dict[str, Path] = {}
    path: Path | None = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = Path(line.removeprefix("worktree "))
        elif line.startswith("branch refs/heads/") and path is not None:
            found[line.removeprefix("branch refs/heads/")] = path
    return found


def ensure(repo: Path, worktrees_dir: Path, task_id: int, title: str, base: str) -> TaskWorktree:
    """The task's worktree, made (branch from the existing `base`) or repaired; GitError if git refuses."""
    found = find_branch(repo, task_id)
    branch = found or branch_for(task_id, title)
    path = worktrees_dir / branch.removeprefix(BRANCH_PREFIX)
    if found is not None:
        if checkouts(repo).get(branch) == path and (path / ".git").is_file():
            _clear_stale_lock(path)
            return TaskWorktree(task_id, path, branch, base)
        run(repo, "worktree", "prune")  # a registration whose folder vanished would refuse the add
    if path.exists():
        shutil.rmtree(path)  # a leftover folder git no longer knows: its work is on the branch
    worktrees_dir.mkdir(parents=True, exist_ok=True)
    if found is not None:
        run(repo, "worktree", "add", "--quiet", str(path), branch)
    else:
        run(repo, "worktree", "add", "--quiet", "-b", branch, str(path), base)
    return TaskWorktree(task_id, path, branch, base)


def _clear_stale_lock(path: Path) -> None:
    """Remove the index lock a killed git left in a task worktree (one loop per project works there)."""
    pointer = (path / ".git").read_text(encoding="utf-8", errors="surrogateescape").strip()
    if pointer.startswith("gitdir:"):
        gitdir = Path(pointer.removeprefix("gitdir:").strip())
        (gitdir if gitdir.is_absolute() else path / gitdir).joinpath("index.lock").unlink(missing_ok=True)


def remove(repo: Path, worktrees_dir: Path, task_id: int, delete_branch: bool = True) -> tuple[str, ...]:
    """Remove a task's worktree (its folder and git's record of it) and, unless told not to, its branch.

    A worktree holding a repository of its own that no commit holds is kept, with its branch (deleting it
    would lose that repository's only copy): those folders are returned, and logged.
    """
    branch = find_branch(repo, task_id)
    if branch is None:
        return ()
    path = checkouts(repo).get(branch)
    if path is not None and path.is_relative_to(worktrees_dir):
        nested = nested_repositories(repo, path)
        if nested:
            log.warning(
                "kept the worktree %s and its branch %s: it holds repositories no commit holds: %s",
                path,
                branch,
                ", ".join(nested),
            )
            return nested
        run(repo, "worktree", "remove", "--force", "--force", str(path), ok_codes=(0, 128))
        if path.exists():
            shutil.rmtree(path)
    run(repo, "worktree", "prune")
    if delete_branch:
        run(repo, "branch", "-D", "--quiet", branch)
    return ()


def nested_repositories(repo: Path, path: Path) -> tuple[str, ...]:
    """The folders of a worktree that hold a git repository of their own and are not committed."""
    try:
        checkout = worktree_git.checkout_of(repo, path)
    except worktree_git.WorktreeIntegrityError:
        return _nested_on_disk(path)
    return commits.nested_repositories(checkout, {})


def _nested_on_disk(path: Path) -> tuple[str, ...]:
    """Folders below `path` holding a `.git` (its own `.git` aside), found without git."""
    found: list[str] = []
    for folder, subfolders, files in os.walk(path):
        here = Path(folder)
        if here != path and (".git" in subfolders or ".git" in files):
            found.append(here.relative_to(path).as_posix())
            subfolders.clear()
        elif here == path:
            subfolders[:] = [name for name in subfolders if name != ".git"]
    return tuple(sorted(found))


def stale(repo: Path, worktrees_dir: Path, live_task_ids: set[int] | None = None) -> list[Path]:
    """Folders under `worktrees_dir` that git does not know as worktrees, or that no live task owns.

    With `live_task_ids` None, only git decides (no database at hand).
    """
    if not worktrees_dir.is_dir():
        return []
    known = {path.resolve() for path in checkouts(repo).values()}
    found: list[Path] = []
    for folder in sorted(worktrees_dir.iterdir()):
        match = re.match(r"(\d+)-", folder.name)
        orphan = live_task_ids is not None and (match is None or int(match.group(1)) not in live_task_ids)
        if folder.resolve() not in known or orphan:
            found.append(folder)
    return found


def repair(repo: Path, worktrees_dir: Path, live_task_ids: set[int] | None = None) -> list[Path]:
    """Remove stale worktree folders (their branches stay) and git's records of vanished ones; the folders."""
    run(repo, "worktree", "prune")
    removed = stale(repo, worktrees_dir, live_task_ids)
    for folder in removed:
        run(repo, "worktree", "remove", "--force", "--force", str(folder), ok_codes=(0, 128))
        if folder.exists():
            shutil.rmtree(folder)
    run(repo, "worktree", "prune")
    return removed


LEFTOVER = "ralph-desk: work left uncommitted in the worktree of task #{task_id}, kept on its branch\n"


@dataclass(frozen=True)
class Retired:
    """A task worktree taken away: its folder, its branch, and whether the branch was kept (it holds work)."""

    folder: Path | None
    branch: str | None
    branch_kept: bool
    nested: tuple[str, ...] = ()  # repositories of its own the folder holds: folder and branch were kept


def holds_unmerged_work(repo: Path, base: str, branch: str) -> bool:
    """Whether merging `branch` into `base` would change the base (work not on it yet, squashed or not)."""
    old, tip = rev(repo, f"refs/heads/{base}"), rev(repo, f"refs/heads/{branch}")
    if tip is None:
        return False
    if old is None:
        return True
    if is_ancestor(repo, tip, old):
        return False
    result = run(repo, "merge-tree", "--write-tree", old, tip, ok_codes=(0, 1))
    merged_tree = result.stdout.split("\n")[0].strip()
    return result.returncode == 1 or merged_tree != out(repo, "rev-parse", f"{old}^{{tree}}")


def retire(repo: Path, worktrees_dir: Path, task_id: int, base: str) -> Retired:
    """Take a task's worktree away without losing work: what was left uncommitted is committed on its branch
    first, and the branch is deleted only when all its work is on `base` (else it is kept)."""
    branch = find_branch(repo, task_id)
    if branch is None:
        return Retired(None, None, False)
    folder = checkouts(repo).get(branch)
    if folder is not None and folder.is_relative_to(worktrees_dir) and (folder / ".git").is_file():
        try:
            checkout = worktree_git.checkout_of(repo, folder)
            commits.commit_to(checkout, f"refs/heads/{branch}", LEFTOVER.format(task_id=task_id))
        except worktree_git.WorktreeIntegrityError:
            log.warning("the worktree %s was tampered with: what it holds was not committed", folder)
    else:
        folder = None
    kept = holds_unmerged_work(repo, base, branch)
    nested = remove(repo, worktrees_dir, task_id, delete_branch=not kept)
    return Retired(folder, branch, kept or bool(nested), nested)


def sweep(repo: Path, worktrees_dir: Path, owned: Callable[[], set[int]], base: str) -> list[Retired]:
    """Retire the worktrees under `worktrees_dir` that no task in `owned()` owns, and remove folders git does
    not know; links are removed themselves, never followed. `owned` is asked after the folders are listed, so
    a task made meanwhile is never taken for a stale one."""
    if not worktrees_dir.is_dir() or worktrees_dir.is_symlink():
        return []
    entries = sorted(os.scandir(worktrees_dir), key=lambda entry: entry.name)
    live = owned()
    run(repo, "worktree", "prune")
    known = {path: branch for branch, path in checkouts(repo).items()}
    swept: list[Retired] = []
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            path.unlink()
            swept.append(Retired(path, None, False))
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        match = re.match(r"(\d+)-", entry.name)
        task_id = int(match.group(1)) if match else None
        if path not in known:
            shutil.rmtree(path)  # git no longer knows it (a crash, a hand-made change): no branch is its
            swept.append(Retired(path, None, False))
        elif task_id is not None and task_id not in live and known[path] == find_branch(repo, task_id):
            try:
                swept.append(retire(repo, worktrees_dir, task_id, base))
            except GitError:
                log.warning("could not retire the worktree %s", path, exc_info=True)
    run(repo, "worktree", "prune")
    return swept
