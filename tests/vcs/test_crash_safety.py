"""A process killed in the middle of a merge or a commit leaves a sound repository, a base branch either
before or after the merge, a person's checkout either as it was or fully merged (never a staged half, once
the next merge turn has put it right), and work that resumes: each test kills a real process at a git step."""

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
from ralph_desk.services.merge_queue import merge_turn
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import open_review_project, read_tip

REACH_TIMEOUT_S = 120.0
# A `git` that runs the real one, except at the step named by RALPH_TEST_STOP_AT: there it says so in a
# file and blocks (before the step, or after it with RALPH_TEST_AFTER) until the test kills it; a dry
# run (`read-tree -n`) passes. RALPH_TEST_LOCK leaves the index lock a git killed mid-commit leaves;
# RALPH_TEST_HALF runs the step and then puts the old index back, as a git killed after writing the
# files and before writing the index leaves them.
WRAPPER = """#!/bin/sh
dry=""
for word in "$@"; do [ "$word" = "-n" ] && dry=1; done
for word in "$@"; do
  if [ "$word" = "$RALPH_TEST_STOP_AT" ] && [ -z "$dry" ]; then
    lock="$(REAL_GIT rev-parse --path-format=absolute --git-path index.lock)"
    index="$(REAL_GIT rev-parse --path-format=absolute --git-path index)"
    if [ -n "$RALPH_TEST_HALF" ]; then cp "$index" "$index.before"; fi
    if [ -n "$RALPH_TEST_AFTER" ] || [ -n "$RALPH_TEST_HALF" ]; then REAL_GIT "$@"; fi
    if [ -n "$RALPH_TEST_HALF" ]; then mv "$index.before" "$index"; fi
    if [ -n "$RALPH_TEST_LOCK" ] || [ -n "$RALPH_TEST_HALF" ]; then : > "$lock"; fi
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
    (worktree.path / "docs").mkdir()
    (worktree.path / "docs" / "greeting.txt").write_text("hello\n")  # a file (and a folder) the merge adds
    desk.workspaces.commit_session(worktree, task.title, "s-1", "done", "Greeted.", True)
    desk.tasks.set_status(task.id, TaskStatus.IN_REVIEW.value)
    return task.id


def _approve_process(root: Path, task_id: int, commit: str) -> list[str]:
    """`ralph-desk review approve --commit`, as the person runs it after reading the diff."""
    command = ["review", "approve", str(task_id), "--commit", commit, "--root", str(root)]
    return [sys.executable, "-m", "ralph_desk", *command]


def _python_process(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _kill_at(
    tmp_path: Path, command: list[str], step: str, after: bool = False, lock: bool = False, half: bool = False
) -> None:
    """Run `command`, wait until its git reaches `step`, and kill its whole process group."""
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
        "RALPH_TEST_HALF": "1" if half else "",
    }
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
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
    ("step", "after", "half"),
    [
        ("merge-tree", False, False),
        ("commit-tree", False, False),
        ("commit-tree", True, False),
        ("read-tree", False, False),
        ("read-tree", False, True),
        ("read-tree", True, False),
        ("update-ref", False, False),
        ("update-ref", True, False),
    ],
    ids=[
        "computing",
        "before-commit",
        "commit-written",
        "before-checkout-moves",
        "files-written-index-not",
        "checkout-moved",
        "before-ref",
        "after-ref",
    ],
)
def test_a_merge_killed_at_any_step_leaves_the_checkout_as_it_was_or_fully_merged_and_approves_on_retry(
    desk: Services, tmp_path: Path, step: str, after: bool, half: bool
) -> None:
    task_id = _in_review(desk)
    root = desk.paths.root
    (root / "notes.txt").write_text("the person's unsaved notes\n")
    before = git(root, "rev-parse", "main")
    status = _status(root)

    tip = read_tip(desk, task_id)
    _kill_at(tmp_path, _approve_process(root, task_id, tip), step, after=after, half=half)
    with merge_turn(desk.paths):  # the next merge turn puts right what the killed one left
        pass

    assert fsck_ok(root)
    base = git(root, "rev-parse", "main")
    merged = base != before
    assert git(root, "show", f"{base}:app.py") == ("new" if merged else "old")
    assert _status(root) == status  # exactly as before, or fully merged: nothing half-staged, nothing left
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert (root / "app.py").read_text() == ("new\n" if merged else "old\n")
    assert (root / "docs" / "greeting.txt").exists() == merged
    assert (root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert not (root / ".git" / "index.lock").exists()
    assert not (root / ".ralph" / "merge-journal.json").exists()
    assert desk.tasks.get(task_id).status is TaskStatus.IN_REVIEW

    assert desk.reviews.approve(task_id, tip).status == TaskStatus.DONE.value
    assert git(root, "show", "main:app.py") == "new" and (root / "app.py").read_text() == "new\n"
    assert _status(root) == status
    assert (root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert fsck_ok(root)


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


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

    code = COMMIT.format(root=str(desk.paths.root), task=task_id)
    _kill_at(tmp_path, _python_process(code), "update-ref", after=after, lock=lock)

    assert fsck_ok(desk.paths.root)
    resumed = desk.workspaces.prepare(task_id, "Greet")  # the next session's start
    assert resumed is not None
    desk.workspaces.commit_session(resumed, "Greet", "s-3", "done", "resumed", True)
    assert git(desk.paths.root, "show", f"{resumed.branch}:app.py") == "newer"
    assert git(resumed.path, "status", "--porcelain") == ""
