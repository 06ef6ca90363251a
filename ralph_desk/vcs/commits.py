"""A commit per session on the task branch: what the session left uncommitted, with trailers naming it.

The commit is made from the worktree's files in a temporary index that starts from the task ref's tip
(`commit-tree`), and only the task ref moves, from the tip it was read at (`update-ref <ref> <new>
<tip>`): whatever the worktree's HEAD points at, no other ref is ever written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.vcs.names import branch_ref, object_id, task_ref
from ralph_desk.vcs.places import Checkout
from ralph_desk.vcs.refs import is_ancestor, rev
from ralph_desk.vcs.run import agent_identity, out, run
from ralph_desk.vcs.worktree_git import WorktreeIntegrityError

SUBJECT_LIMIT = 72
BODY_LIMIT = 2000
# The project's own state never goes onto a task branch.
PATHSPEC = (".", ":(exclude).ralph")
INDEX_NAME = "index"


@dataclass(frozen=True)
class Committed:
    """One session's commit on the task ref: the tip before and after, and what the desk had to mend."""

    before: str
    after: str
    head_was: str | None = None  # where the worktree's HEAD pointed, when not at the task ref
    left_out: tuple[str, ...] = ()  # nested repositories, never committed as gitlinks


def message(task_id: int, title: str, verb: str | None, summary: str | None, session_id: str) -> str:
    """`Task #7: Title`, the closing verb's words, then the Ralph-Task and Ralph-Session trailers."""
    subject = " ".join(f"Task #{task_id}: {title}".split())
    if len(subject) > SUBJECT_LIMIT:
        subject = subject[: SUBJECT_LIMIT - 1] + "…"
    said = (summary or "").strip()[:BODY_LIMIT]
    body = f"{verb}: {said}" if verb and said else (verb or said)
    parts = [subject, body] if body else [subject]
    parts.append(f"Ralph-Task: {task_id}\nRalph-Session: {session_id}")
    return "\n\n".join(parts) + "\n"


def has_changes(checkout: Checkout) -> bool:
    """Whether the worktree holds anything uncommitted (outside `.ralph/`)."""
    listing = run(checkout, "status", "--porcelain", "--untracked-files=all", "--", *PATHSPEC).stdout
    return bool(listing.strip())


def merge_head(checkout: Checkout) -> str | None:
    """The commit a merge under way in the worktree brings in (its conclusion is a merge commit), if any."""
    found = run(checkout, "rev-parse", "--verify", "--quiet", "MERGE_HEAD", ok_codes=(0, 1)).stdout.strip()
    return object_id(found) if found else None


def in_merge(checkout: Checkout) -> bool:
    """Whether a merge is under way in the worktree."""
    return merge_head(checkout) is not None


def tip_of(checkout: Checkout, ref: str) -> str:
    """The commit the task ref stands on; WorktreeIntegrityError when the branch is gone."""
    tip = rev(checkout, task_ref(ref))
    if tip is None:
        raise WorktreeIntegrityError(f"the task branch {ref} no longer exists")
    return tip


def head_elsewhere(checkout: Checkout, ref: str) -> str | None:
    """Where the worktree's HEAD points when it is not the task ref (a branch, or a detached commit)."""
    named = run(checkout, "symbolic-ref", "--quiet", "HEAD", ok_codes=(0, 1)).stdout.strip()
    if named == ref:
        return None
    if named:
        return named
    detached = run(checkout, "rev-parse", "--verify", "--quiet", "HEAD", ok_codes=(0, 1)).stdout.strip()
    return f"the detached commit {detached}" if detached else "nothing (HEAD was unreadable)"


def commit_to(checkout: Checkout, ref: str, text: str) -> Committed:
    """Commit the worktree's files (outside `.ralph/`) on the task ref as the ralph-desk agent."""
    tip = tip_of(checkout, ref)
    head_was = head_elsewhere(checkout, ref)
    merging = merge_head(checkout) if head_was is None else None
    # Beside the worktree's own index, so that it can take that index's place in one rename.
    with tempfile.TemporaryDirectory(prefix="ralph-desk-index-", dir=checkout.git_dir) as folder:
        index = Path(folder) / INDEX_NAME
        env = {"GIT_INDEX_FILE": str(index)}
        _seed(checkout, index, tip, own_index=head_was is None)
        nested = nested_repositories(checkout, env)
        skipped = tuple(f":(exclude,literal){path}" for path in nested)
        run(checkout, "add", "--all", "--", *PATHSPEC, *skipped, env=env)
        nested += _drop_new_gitlinks(checkout, tip, env)
        tree = object_id(run(checkout, "write-tree", env=env).stdout.strip())
        new = tip
        if merging is not None or tree != out(checkout, "rev-parse", f"{tip}^{{tree}}"):
            parents = ("-p", tip, *(("-p", merging) if merging else ()))
            made = run(checkout, "commit-tree", tree, *parents, "-F", "-", env=agent_identity(), stdin=text)
            new = object_id(made.stdout.strip())
            run(checkout, "update-ref", "-m", "ralph-desk: session commit", ref, new, tip)
        if head_was is not None:
            put_head_back(checkout, ref)
        # The temporary index holds exactly the new commit, with the files' stat facts: the worktree's now.
        os.replace(index, checkout.git_dir / INDEX_NAME)
    if merging is not None:
        run(checkout, "merge", "--quit")
    return Committed(tip, new, head_was, nested)


def _seed(checkout: Checkout, index: Path, tip: str, own_index: bool) -> None:
    """Start the commit's index from the worktree's own when HEAD is on the task ref (what the agent staged
    counts: a file it force-added despite an ignore rule), else from the task ref's tree. `.ralph/` is the
    task ref's either way: the project's own state never goes onto a task branch."""
    env = {"GIT_INDEX_FILE": str(index)}
    own = checkout.git_dir / INDEX_NAME
    if own_index and own.is_file() and not own.is_symlink():
        shutil.copy2(own, index)  # its time too: git tells racily clean entries by the index file's mtime
        readable = (
            run(checkout, "ls-files", "--stage", "--", ".ralph", env=env, ok_codes=None).returncode == 0
        )
        if readable:
            run(checkout, "reset", "--quiet", tip, "--", ".ralph", env=env)
            return
    run(checkout, "read-tree", tip, env=env)


def _drop_new_gitlinks(checkout: Checkout, tip: str, env: dict[str, str]) -> tuple[str, ...]:
    """Take out of the index the gitlinks the task ref's tree does not hold (an agent may stage a nested
    repository itself): each names a commit that exists only in that repository's own folder."""
    staged = run(checkout, "ls-files", "--stage", "-z", "--", *PATHSPEC, env=env).stdout.split("\0")
    links = {entry.split("\t", 1)[1] for entry in staged if entry.startswith("160000 ") and "\t" in entry}
    if not links:
        return ()
    kept = run(checkout, "ls-tree", "-r", "-z", "--full-tree", tip).stdout.split("\0")
    known = {entry.split("\t", 1)[1] for entry in kept if entry.startswith("160000 ") and "\t" in entry}
    new = sorted(links - known)
    if new:
        literal = [f":(literal){path}" for path in new]
        run(checkout, "rm", "--cached", "--force", "--quiet", "-r", "--", *literal, env=env)
    return tuple(new)


def put_head_back(checkout: Checkout, ref: str) -> None:
    """Point the worktree's HEAD at the task ref again."""
    run(checkout, "symbolic-ref", "-m", "ralph-desk: HEAD back on the task branch", "HEAD", ref)


def nested_repositories(checkout: Checkout, index: dict[str, str]) -> tuple[str, ...]:
    """Untracked folders that hold a repository of their own (git would commit each as a gitlink)."""
    listing = run(
        checkout, "ls-files", "-z", "--others", "--exclude-standard", "--", *PATHSPEC, env=index
    ).stdout
    return tuple(path.rstrip("/") for path in listing.split("\0") if path.endswith("/"))


def stash_all(checkout: Checkout, ref: str, text: str) -> tuple[bool, str | None]:
    """Put every uncommitted change (untracked files too) aside in a stash named `text`.

    (True if anything was put aside, where HEAD pointed when it was not the task ref.)
    """
    head_was = head_elsewhere(checkout, ref)
    if head_was is not None:
        put_head_back(checkout, ref)
        run(checkout, "read-tree", "--reset", tip_of(checkout, ref))
        run(checkout, "update-index", "-q", "--refresh", ok_codes=(0, 1))
    if not has_changes(checkout):
        return False, head_was
    run(checkout, "stash", "push", "--quiet", "--include-untracked", "-m", text, "--", *PATHSPEC)
    return True, head_was


def catch_up(checkout: Checkout, ref: str, base: str) -> tuple[str, ...]:
    """Merge a base that moved on into the task branch; the files left with conflict markers, if any.

    Nothing happens while the worktree has uncommitted work, a merge under way or a HEAD away from the
    task ref: the session's commit concludes (or mends) those first.
    """
    base_ref = branch_ref(f"refs/heads/{base}")
    base_tip = rev(checkout, base_ref)
    tip = tip_of(checkout, ref)
    if base_tip is None or is_ancestor(checkout, base_tip, tip):
        return ()
    if head_elsewhere(checkout, ref) is not None or in_merge(checkout) or has_changes(checkout):
        return ()
    # By its full name (a tag cannot shadow it), so that the conflict markers say which side is the base.
    merged = run(
        checkout,
        "merge",
        "--no-edit",
        "--quiet",
        "--end-of-options",
        base_ref,
        env=agent_identity(),
        ok_codes=(0, 1),
    )
    if merged.returncode == 0:
        return ()
    listing = run(checkout, "diff", "--name-only", "-z", "--diff-filter=U").stdout
    return tuple(path for path in listing.split("\0") if path)
