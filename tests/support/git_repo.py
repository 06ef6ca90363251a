"""A git repository for tests: made, committed to and read with the real `git` program."""

from __future__ import annotations

import subprocess
from pathlib import Path

PERSON = ("user.email=person@example.invalid", "user.name=Person", "init.defaultBranch=main")
GIT = ["git", *(word for setting in PERSON for word in ("-c", setting))]


def output(repo: Path, *args: str) -> str:
    """Run git as the person in `repo`; its standard output as it is (fails the test on an error)."""
    # Bytes, decoded: text mode would turn the \r\n of a file's lines in a diff into \n.
    result = subprocess.run([*GIT, *args], cwd=repo, capture_output=True, check=False, timeout=60)
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stderr.decode(errors='replace')}"
    return result.stdout.decode()


def git(repo: Path, *args: str) -> str:
    """Run git as the person in `repo`; its standard output, stripped (fails the test on an error)."""
    return output(repo, *args).strip()


def make_repo(root: Path, files: dict[str, str], branch: str = "main") -> Path:
    """A repository at `root` on `branch` with one commit holding `files`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", branch)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def commit_all(repo: Path, message: str) -> str:
    """Commit everything in `repo` as the person; the new commit."""
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def fsck_ok(repo: Path) -> bool:
    """Whether `git fsck` calls the repository sound."""
    return (
        subprocess.run(
            ["git", "fsck", "--no-progress"], cwd=repo, capture_output=True, check=False
        ).returncode
        == 0
    )
