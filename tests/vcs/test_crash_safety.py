"""A process killed in the middle of a merge or a commit leaves a sound repository, a base branch either
before or after the merge, and work that resumes: each test kills a real process at a git step."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.services.container import Services
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import open_review_project

REACH_TIMEOUT_S = 120.0
# A `git` that runs the real one, except at the step named by RALPH_TEST_STOP_AT: there it says so in a
# file and blocks (before the step, or after it with RALPH_TEST_AFTER) until the test kills it; a dry
# run (`read-tree -n`) passes. RALPH_TEST_LOCK leaves the index lock a git killed mid-commit leaves.
WRAPPER = """#!/bin/sh
dry=""
for word in "$@"; do [ "$word" = "-n" ] && dry=1; done
for word in "$@"; do
  if [ "$word" = "$RALPH_TEST_STOP_AT" ] && [ -z "$dry" ]; then
    lock="$(REAL_GIT rev-parse --path-format=absolute --git-path index.lock)"
    if [ -n "$RALPH_TEST_LOCK" ]; then : > "$lock"; fi
    if [ -n "$RALPH_TEST_AFTER" ]; then REAL_GIT "$@"; fi
    : > "$RALPH_TEST_READY"
    exec tail -f /dev/null
  fi
done
exec REAL_GIT "$@"
"""

OPEN = (
    "from ralph_desk.services.container import Services; from ralph_desk.project import ProjectPaths; "
    "s = Services.open(ProjectPaths.at({root!r})); "
)
APPROVE = OPEN + "s.reviews.approve({task})"
COMMIT = (
    OPEN + "s.workspaces.commit_session(s.workspaces.existing({task}), 'Greet', 's-2', 'done', 'again', True)"
)


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Services]:
    services = open_review_project(tmp_path / "repo", {"app.py": "old\n", "notes.txt": "keep\n"}, "Crash")
    yield services
    services.close()


def _in_review(desk: Services) -> int:
    task = desk.tasks.create("core", "backend", "Greet")
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    (worktree.path / "app.py").write_text("new\n")
    desk.workspaces.commit_session(worktree, task.title, "s-1", "done", "Greeted.", True)
    desk.tasks.set_status(task.id, TaskStatus.IN_REVIEW.value)
    return task.id


def _kill_at(tmp_path: Path, code: str, step: str, after: bool = False, lock: bool = False) -> None:
    """Run `code` in a new Python process, wait until its git reaches `step`, and kill the whole group."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    real = shutil.which("git")
    assert real is not None
    wrapper = bin_dir / "git"
    wrapper.write_text(WRAPPER.replace("REAL_GIT", real))
    wrapper.chmod(0o755)
    ready = tmp_path / f"ready-{step}"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RALPH_TEST_STOP_AT": step,
        "RALPH_TEST_READY": str(ready),
        "RALPH_TEST_AFTER": "1" if after else "",
        "RALPH_TEST_LOCK": "1" if lock else "",
    }
    process = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + REACH_TIMEOUT_S
    try:
        while not ready.exists():
            assert time.monotonic() < deadline, f"the process never reached git {step}"
            try:
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            raise AssertionError(f"the process ended before git {step}: {process.stderr.read()!r}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stderr is not None
        process.stderr.close()


@pytest.mark.parametrize(
    ("step", "after"),
    [
        ("merge-tree", False),
        ("commit-tree", True),
        ("read-tree", False),
        ("update-ref", False),
        ("update-ref", True),
    ],
    ids=["computing", "commit-written", "moving-checkout", "before-ref", "after-ref"],
)
def test_a_merge_killed_at_any_step_leaves_a_sound_repository_and_approves_on_retry(
    desk: Services, tmp_path: Path, step: str, after: bool
) -> None:
    task_id = _in_review(desk)
    root = desk.paths.root
    (root / "notes.txt").write_text("the person's unsaved notes\n")
    before = git(root, "rev-parse", "main")

    _kill_at(tmp_path, APPROVE.format(root=str(root), task=task_id), step, after=after)

    assert fsck_ok(root)
    base = git(root, "rev-parse", "main")
    assert base == before or git(root, "show", "main:app.py") == "new"
    assert git(root, "show", f"{base}:app.py") in ("old", "new")
    assert (root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert desk.tasks.get(task_id).status is TaskStatus.IN_REVIEW

    assert desk.reviews.approve(task_id).status == TaskStatus.DONE.value
    assert git(root, "show", "main:app.py") == "new" and (root / "app.py").read_text() == "new\n"
    assert git(root, "status", "--porcelain", "--", "app.py") == ""
    assert (root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert fsck_ok(root)


@pytest.mark.parametrize(
    ("after", "lock"), [(False, True), (True, False)], ids=["holding-the-lock", "committed"]
)
def test_a_session_commit_killed_midway_leaves_the_work_to_commit_again(
    desk: Services, tmp_path: Path, after: bool, lock: bool
) -> None:
    task_id = _in_review(desk)
    worktree = desk.workspaces.existing(task_id)
    assert worktree is not None
    (worktree.path / "app.py").write_text("newer\n")

    _kill_at(
        tmp_path, COMMIT.format(root=str(desk.paths.root), task=task_id), "update-ref", after=after, lock=lock
    )

    assert fsck_ok(desk.paths.root)
    resumed = desk.workspaces.prepare(task_id, "Greet")  # the next session's start
    assert resumed is not None
    desk.workspaces.commit_session(resumed, "Greet", "s-3", "done", "resumed", True)
    assert git(desk.paths.root, "show", f"{resumed.branch}:app.py") == "newer"
    assert git(resumed.path, "status", "--porcelain") == ""
