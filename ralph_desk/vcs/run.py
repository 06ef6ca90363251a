"""Running `git`: one call shape, with hooks, signing and external diff programs switched off."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_TIMEOUT_S = 120
AGENT_NAME = "ralph-desk agent"
AGENT_EMAIL = "agent@ralph-desk.invalid"

# A project folder may be hostile: its hooks and its signing programs never run on our behalf.
SAFE_OPTIONS = (
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "core.quotePath=false",
)


class GitError(RuntimeError):
    """A git command that failed, with the command and git's own words."""

    def __init__(self, args: tuple[str, ...], returncode: int, stderr: str) -> None:
        shown = " ".join(args)
        detail = stderr.strip() or f"exit code {returncode}"
        super().__init__(f"git {shown}: {detail}")
        self.returncode = returncode
        self.stderr = stderr


def run(
    repo: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    ok_codes: tuple[int, ...] | None = (0,),
) -> subprocess.CompletedProcess[str]:
    """Run `git args` in `repo`; GitError unless its exit code is one of `ok_codes` (None: any, read it)."""
    if not repo.is_dir():
        raise GitError(args, 2, f"{repo}: no such folder")
    try:
        result = subprocess.run(
            ["git", *SAFE_OPTIONS, *args],
            cwd=repo,
            input=stdin,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, **(env or {})},
            check=False,
        )
    except FileNotFoundError:
        raise GitError(args, 127, "the git program is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(args, -1, f"no answer within {GIT_TIMEOUT_S} s") from None
    if ok_codes is not None and result.returncode not in ok_codes:
        raise GitError(args, result.returncode, result.stderr)
    return result


def out(repo: Path, *args: str) -> str:
    """The stripped standard output of `git args` (GitError when it fails)."""
    return run(repo, *args).stdout.strip()


def agent_identity() -> dict[str, str]:
    """The environment that makes git write as the ralph-desk agent."""
    return {
        "GIT_AUTHOR_NAME": AGENT_NAME,
        "GIT_AUTHOR_EMAIL": AGENT_EMAIL,
        "GIT_COMMITTER_NAME": AGENT_NAME,
        "GIT_COMMITTER_EMAIL": AGENT_EMAIL,
    }


def is_repository(path: Path) -> bool:
    """Whether `path` is inside a git work tree with at least one commit."""
    try:
        return run(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1)).returncode == 0
    except (GitError, OSError):
        return False


def rev(repo: Path, name: str) -> str | None:
    """The commit `name` points at, or None when there is none."""
    result = run(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", ok_codes=(0, 1))
    return result.stdout.strip() or None


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """Whether commit `older` is reachable from `newer`."""
    return run(repo, "merge-base", "--is-ancestor", older, newer, ok_codes=(0, 1)).returncode == 0


def current_branch(repo: Path) -> str | None:
    """The branch checked out in `repo` (None on a detached head)."""
    result = run(repo, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
    return result.stdout.strip() or None
