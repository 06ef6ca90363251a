"""Diffs of a task: its branch against the base, or one session's commits; renames found, binaries marked."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs.run import run

# No external diff or text conversion programs (a hostile repository could name any), no colour.
OPTIONS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def between(repo: Path, older: str, newer: str) -> str:
    """The unified diff from `older` to `newer` (binary files shown as `Binary files … differ`)."""
    return run(repo, "diff", *OPTIONS, older, newer, "--").stdout


def of_branch(repo: Path, base: str, branch: str) -> str:
    """What `branch` changed since it left `base` (the diff against their merge base)."""
    return run(repo, "diff", *OPTIONS, f"{base}...{branch}", "--").stdout


def files_of_branch(repo: Path, base: str, branch: str) -> list[str]:
    """The paths `branch` changed since it left `base`."""
    listing = run(repo, "diff", "--name-only", "-z", "--no-renames", f"{base}...{branch}", "--").stdout
    return [path for path in listing.split("\0") if path]
