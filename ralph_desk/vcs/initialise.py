"""Making a plain project folder a git repository, with a first commit of what it holds."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs.run import agent_identity, current_branch, is_repository, run

FIRST_MESSAGE = "The project as it was when ralph-desk made it a git repository"


class AlreadyRepositoryError(ValueError):
    """The folder is a git repository with a commit already."""


def make_repository(root: Path) -> str:
    """`git init`, then commit every file git does not ignore; the branch checked out."""
    if is_repository(root):
        raise AlreadyRepositoryError(f"{root} is a git repository already; nothing was changed")
    run(root, "init", "--quiet")
    run(root, "add", "--all")
    run(root, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", FIRST_MESSAGE, env=agent_identity())
    return current_branch(root) or "HEAD"
