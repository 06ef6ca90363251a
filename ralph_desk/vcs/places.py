"""Where git works (a folder, or a task worktree through the repository that made it) and how it fails."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Checkout:
    """A task worktree reached through the repository that made it: its git folder and its files."""

    work_tree: Path
    git_dir: Path

    def location(self) -> tuple[str, ...]:
        """The options that point git here, whatever `<work_tree>/.git` says."""
        return (f"--git-dir={self.git_dir}", f"--work-tree={self.work_tree}")


Where = Path | Checkout


class GitError(RuntimeError):
    """A git command that failed, with the command and git's own words."""

    def __init__(self, args: tuple[str, ...], returncode: int, stderr: str) -> None:
        shown = " ".join(args)
        detail = stderr.strip() or f"exit code {returncode}"
        super().__init__(f"git {shown}: {detail}")
        self.returncode = returncode
        self.stderr = stderr
