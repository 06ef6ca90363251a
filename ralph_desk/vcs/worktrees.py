"""A worktree and a branch per task: `.ralph/worktrees/<id>-<slug>` on `refs/heads/ralph/<id>-<slug>`.

Which branch is whose is the caller's record (the database), never a name matched by prefix: these
functions take full refs, make only refs that do not exist, and delete only with the value they expect.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ralph_desk.domain.branches import BRANCH_PREFIX, HEADS, TASK_REF, is_task_ref
from ralph_desk.vcs import commits, soundness, worktree_git
from ralph_desk.vcs.names import is_object_id
from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.refs import is_ancestor, rev
from ralph_desk.vcs.run import out, run

log = logging.getLogger("ralph_desk.vcs")

SLUG_LIMIT = 40
TASK_REFS = HEADS + BRANCH_PREFIX

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class TaskWorktree:
    """Where a task's sessions work: its folder, its branch and the branch it will merge into."""

    task_id: int
    path: Path
    branch: str
    base: str

    @property
    def ref(self) -> str:
        """The task branch's full ref (`refs/heads/ralph/…`): what git is given, never the short name."""
        return HEADS + self.branch

    @property
    def base_ref(self) -> str:
        """The base branch's full ref (`refs/heads/<base>`), which no tag can shadow."""
        return HEADS + self.base


def slug(title: str) -> str:
    """A branch-safe short form of a title (`Add the login form` → `add-the-login-form`)."""
    words = _NOT_SLUG.sub("-", title.lower()).strip("-")
    return words[:SLUG_LIMIT].rstrip("-") or "task"


def branch_for(task_id: int, title: str) -> str:
    """The short name a new task branch is first offered (`ralph/<id>-<slug>`)."""
    return f"{BRANCH_PREFIX}{task_id}-{slug(title)}"


def folder_name(ref: str) -> str:
    """The folder under `.ralph/worktrees` of a task ref's worktree (`<id>-<slug>`)."""
    return ref.removeprefix(TASK_REFS)


def task_refs(repo: Path) -> list[str]:
    """Every ref under `refs/heads/ralph/` that has the shape of a task branch (whoever made it)."""
    listing = out(repo, "for-each-ref", "--format=%(refname)", TASK_REFS)
    return [ref for ref in listing.splitlines() if is_task_ref(ref)]


def free_ref(repo: Path, worktrees_dir: Path, task_id: int, title: str, taken: Iterable[str]) -> str:
    """A full ref for a new task branch that no branch, record (`taken`) or worktree folder has already:
    `refs/heads/ralph/<id>-<slug>`, else the same with `-2`, `-3`…"""
    existing = set(out(repo, "for-each-ref", "--format=%(refname)", TASK_REFS).splitlines())
    held = set(taken)
    first = HEADS + branch_for(task_id, title)
    for number in itertools.count(1):
        ref = first if number == 1 else f"{first}-{number}"
        clash = ref in existing or ref in held or any(name.startswith(ref + "/") for name in existing)
        if not clash and not os.path.lexists(worktrees_dir / folder_name(ref)):
            return ref
    raise AssertionError("unreachable")


def create(repo: Path, ref: str, start_ref: str) -> str:
    """Make the task branch `ref` at the commit the full ref `start_ref` (the base, or discarded work kept)
    is on; its commit. GitError if `ref` exists already (an existing branch is never adopted) or the start
    is gone."""
    _check_task_ref(ref)
    oid = rev(repo, start_ref)
    if oid is None:
        raise GitError(("rev-parse", start_ref), 1, f"{start_ref} does not exist")
    run(repo, "update-ref", "-m", "ralph-desk: task branch", "--end-of-options", ref, oid, "0" * len(oid))
    return oid


def delete_ref(repo: Path, ref: str, expected: str) -> None:
    """Delete the task branch `ref` if it is still at `expected` (GitError when it moved: nothing deleted)."""
    _check_task_ref(ref)
    run(repo, "update-ref", "-d", "--end-of-options", ref, expected)


def checkouts(repo: Path) -> dict[str, Path]:
    """The folder each checked-out branch lives in (the person's checkout and every worktree)."""
    return {branch: path for path, branch in _registered(repo).items() if branch is not None}


def _registered(repo: Path) -> dict[Path, str | None]:
    """Every folder git knows as a worktree of `repo`, with the branch checked out there (None: detached)."""
    listing = out(repo, "worktree", "list", "--porcelain")
    found: dict[Path, str | None] = {}
    path: Path | None = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = Path(line.removeprefix("worktree "))
            found[path] = None
        elif line.startswith("branch " + HEADS) and path is not None:
            found[path] = line.removeprefix("branch " + HEADS)
    return found


def ensure(repo: Path, worktrees_dir: Path, task_id: int, ref: str, base: str) -> TaskWorktree:
    """The worktree of the task branch `ref` (which must exist), made or repaired; GitError if git refuses."""
    _check_task_ref(ref)
    if rev(repo, ref) is None:
        raise GitError(("rev-parse", ref), 1, f"the task branch {ref} does not exist")
    branch = ref.removeprefix(HEADS)
    path = worktrees_dir / folder_name(ref)
    if _registered(repo).get(path) == branch and soundness.mend(repo, path):
        _clear_stale_lock(repo, path)
        return TaskWorktree(task_id, path, branch, base)
    discard_folder(repo, path)  # a leftover, wrecked or other-head folder: the task's work is on its branch
    worktrees_dir.mkdir(parents=True, exist_ok=True)
    # `worktree add` takes no full ref for a branch to check out (it would detach); given the short name
    # of a branch that exists, it checks out `refs/heads/<name>` itself, whatever tag has the same name.
    run(repo, "worktree", "add", "--quiet", str(path), branch)
    return TaskWorktree(task_id, path, branch, base)


def discard_folder(repo: Path, path: Path) -> None:
    """Remove the folder at `path` (a link itself, never followed) and git's record of it, and of any
    worktree whose folder vanished (such a record would refuse the next `worktree add`)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        run(repo, "worktree", "remove", "--force", "--force", str(path), ok_codes=(0, 128))
        if path.exists():
            shutil.rmtree(path)
    run(repo, "worktree", "prune")


def _check_task_ref(ref: str) -> None:
    """Refuse a ref that is not a task branch's full ref (a database value is never handed to git raw)."""
    if not is_task_ref(ref):
        raise GitError(("update-ref", ref), 2, f"{ref!r} is not a task branch ref ({TASK_REF.pattern})")


def _clear_stale_lock(repo: Path, path: Path) -> None:
    """Remove the index lock a killed git left in a task worktree (one loop per project works there): in the
    git folder the repository keeps for it, never where the worktree's `.git` says."""
    record = worktree_git.record_of(repo, path)
    if record is not None:
        (record / "index.lock").unlink(missing_ok=True)


@dataclass(frozen=True)
class Removed:
    """What removing a task's worktree came to: whether its ref is gone, and the nested repositories that
    kept the worktree and its branch (deleting them would lose those repositories' only copy)."""

    ref_gone: bool
    nested: tuple[str, ...] = ()


def remove(repo: Path, worktrees_dir: Path, ref: str, delete_branch: bool = True) -> Removed:
    """Remove the worktree of task branch `ref` (its folder and git's record of it) and, unless told not to,
    the ref itself, only at the commit it is on now.

    A branch checked out outside `worktrees_dir` (the person's own checkout) keeps its ref; a worktree
    holding a repository of its own that no commit holds is kept, with its branch, and logged."""
    _check_task_ref(ref)
    branch = ref.removeprefix(HEADS)
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
            return Removed(False, nested)
        run(repo, "worktree", "remove", "--force", "--force", str(path), ok_codes=(0, 128))
        if path.exists():
            shutil.rmtree(path)
    run(repo, "worktree", "prune")
    tip = rev(repo, ref)
    if tip is None:
        return Removed(True)
    if not delete_branch:
        return Removed(False)
    elsewhere = checkouts(repo).get(branch)
    if elsewhere is not None:
        log.warning("kept the branch %s: it is checked out in %s", ref, elsewhere)
        return Removed(False)
    delete_ref(repo, ref, tip)
    return Removed(True)


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


def stale(repo: Path, worktrees_dir: Path) -> list[Path]:
    """Folders under `worktrees_dir` that git does not know as worktrees."""
    if not worktrees_dir.is_dir():
        return []
    known = {path.resolve() for path in _registered(repo)}
    return [folder for folder in sorted(worktrees_dir.iterdir()) if folder.resolve() not in known]


def repair(repo: Path, worktrees_dir: Path) -> list[Path]:
    """Remove worktree folders git does not know (their branches stay) and git's records of vanished ones."""
    run(repo, "worktree", "prune")
    removed = stale(repo, worktrees_dir)
    for folder in removed:
        run(repo, "worktree", "remove", "--force", "--force", str(folder), ok_codes=(0, 128))
        if folder.exists():
            shutil.rmtree(folder)
    run(repo, "worktree", "prune")
    return removed


def legacy_branch(
    repo: Path,
    worktrees_dir: Path,
    task_id: int,
    commit: str,
    refs: Iterable[str],
    held: set[str],
    base_ref: str,
) -> str | None:
    """The branch an older ralph-desk made for task `task_id`, told by its name and by holding `commit` (a
    commit of the task's newest session, not on the base): not held by a record, not checked out outside this
    project's worktrees, and the only one that fits (None when none or several do)."""
    if not is_object_id(commit):
        return None
    base = rev(repo, base_ref)
    try:
        if base is None or is_ancestor(repo, commit, base):
            return None  # on the base: every branch made from it holds it, so it tells no branch apart
    except GitError:
        return None  # the commit is not in this repository
    where = checkouts(repo)
    fitting: list[str] = []
    for ref in refs:
        match = TASK_REF.fullmatch(ref)
        if match is None or int(match.group(1)) != task_id or ref in held:
            continue
        at = where.get(ref.removeprefix(HEADS))
        if at is not None and at != worktrees_dir / folder_name(ref):
            continue  # another project's (or the person's) checkout has it
        tip = rev(repo, ref)
        try:
            if tip is not None and is_ancestor(repo, commit, tip):
                fitting.append(ref)
        except GitError:
            continue  # the commit is not in this repository
    return fitting[0] if len(fitting) == 1 else None


LEFTOVER = "ralph-desk: work left uncommitted in the worktree of task #{task_id}, kept on its branch\n"


@dataclass(frozen=True)
class Retired:
    """A task worktree taken away: its folder, its branch, and whether the branch was kept (it holds work)."""

    folder: Path | None
    branch: str | None
    branch_kept: bool
    nested: tuple[str, ...] = ()  # repositories of its own the folder holds: folder and branch were kept


def holds_unmerged_work(repo: Path, base_ref: str, ref: str) -> bool:
    """Whether merging `ref` into `base_ref` would change the base (work not on it yet, squashed or not)."""
    old, tip = rev(repo, base_ref), rev(repo, ref)
    if tip is None:
        return False
    if old is None:
        return True
    if is_ancestor(repo, tip, old):
        return False
    result = run(repo, "merge-tree", "--write-tree", old, tip, ok_codes=(0, 1))
    merged_tree = result.stdout.split("\n")[0].strip()
    return result.returncode == 1 or merged_tree != out(repo, "rev-parse", f"{old}^{{tree}}")


def retire(repo: Path, worktrees_dir: Path, task_id: int, ref: str, base: str) -> Retired:
    """Take the worktree of a gone task's branch `ref` away without losing work: what was left uncommitted
    is committed on the branch first, and the branch is deleted only when all its work is on `base`."""
    _check_task_ref(ref)
    branch = ref.removeprefix(HEADS)
    if rev(repo, ref) is None:
        return Retired(None, None, False)
    folder = checkouts(repo).get(branch)
    if folder is not None and folder.is_relative_to(worktrees_dir) and (folder / ".git").is_file():
        try:
            checkout = worktree_git.checkout_of(repo, folder)
            commits.commit_to(checkout, ref, LEFTOVER.format(task_id=task_id))
        except worktree_git.WorktreeIntegrityError:
            log.warning("the worktree %s was tampered with: what it holds was not committed", folder)
    else:
        folder = None
    kept = holds_unmerged_work(repo, HEADS + base, ref)
    removed = remove(repo, worktrees_dir, ref, delete_branch=not kept)
    return Retired(folder, branch, not removed.ref_gone, removed.nested)


@dataclass(frozen=True)
class Claims:
    """What the records say of the task branches in this checkout: refs whose tasks live (their worktrees
    stay) and refs of tasks that are gone, with the id each task had."""

    live: frozenset[str] = frozenset()
    gone: Mapping[str, int] = field(default_factory=dict)


def sweep(repo: Path, worktrees_dir: Path, claims: Callable[[], Claims], base: str) -> list[Retired]:
    """Retire the worktrees under `worktrees_dir` whose branches the records give to gone tasks, and remove
    folders git does not know; links are removed themselves, never followed. A worktree no record claims
    is left alone. `claims` is asked after the folders are listed, so a task made meanwhile is never taken
    for a gone one."""
    if not worktrees_dir.is_dir() or worktrees_dir.is_symlink():
        return []
    entries = sorted(os.scandir(worktrees_dir), key=lambda entry: entry.name)
    claimed = claims()
    run(repo, "worktree", "prune")
    known = _registered(repo)
    swept: list[Retired] = []
    for entry in entries:
        path = Path(entry.path)
        if entry.is_symlink():
            path.unlink()
            swept.append(Retired(path, None, False))
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        if path not in known:
            shutil.rmtree(path)  # git no longer knows it (a crash, a hand-made change): no branch is its
            swept.append(Retired(path, None, False))
            continue
        branch = known[path]
        ref = HEADS + branch if branch is not None else None
        if ref is None or ref in claimed.live or ref not in claimed.gone:
            continue
        try:
            swept.append(retire(repo, worktrees_dir, claimed.gone[ref], ref, base))
        except GitError:
            log.warning("could not retire the worktree %s", path, exc_info=True)
    run(repo, "worktree", "prune")
    return swept
