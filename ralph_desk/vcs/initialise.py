"""Making a plain project folder a git repository, with a first commit of what it holds."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs.refs import current_branch, is_repository
from ralph_desk.vcs.run import agent_identity, run

FIRST_MESSAGE = "The project as it was when ralph-desk made it a git repository"


class AlreadyRepositoryError(ValueError):
    """The folder is a git repository with a commit already."""


def make_repository(root: Path, branch: str | None = None) -> str:
    """`git init` (on `branch`, else git's default), commit all git does not ignore; the branch now."""
    if is_repository(root):
        raise AlreadyRepositoryError(f"{root} is a git repository already; nothing was changed")
    run(root, "init", "--quiet", *([f"--initial-branch={branch}"] if branch else []))
    run(root, "add", "--all")
    run(root, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", FIRST_MESSAGE, env=agent_identity())
    return current_branch(root) or "HEAD"
