"""What a repository's HEAD and refs say: is it one, which commit a name points at, ancestry."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs.names import object_id
from ralph_desk.vcs.places import GitError, Where
from ralph_desk.vcs.run import run


def is_repository(path: Path) -> bool:
    """Whether `path` is inside a git work tree with at least one commit."""
    try:
        return run(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1)).returncode == 0
    except (GitError, OSError):
        return False


def rev(repo: Where, name: str) -> str | None:
    """The commit `name` (a full ref or an object id) points at, or None when there is none."""
    result = run(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}", ok_codes=(0, 1)
    )
    found = result.stdout.strip()
    return object_id(found) if found else None


def is_ancestor(repo: Where, older: str, newer: str) -> bool:
    """Whether commit `older` is reachable from `newer`."""
    found = run(repo, "merge-base", "--is-ancestor", "--end-of-options", older, newer, ok_codes=(0, 1))
    return found.returncode == 0


def current_branch(repo: Where) -> str | None:
    """The branch checked out in `repo` (None on a detached head)."""
    result = run(repo, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
    return result.stdout.strip() or None
