"""A process killed in the middle of a merge or a commit leaves a sound repository, a base branch either
before or after the merge, a person's checkout either as it was or fully merged (never a staged half, once
the next merge turn has put it right), and work that resumes: each test kills a real process at a git step."""

from __future__ import annotations

import contextlib
import json
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
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.container import Services
from ralph_desk.services.merge_queue import MergeTurnError, merge_turn
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import open_review_project, read_tip

REACH_TIMEOUT_S = 120.0
# A `git` that runs the real one, except at the step named by RALPH_TEST_STOP_AT: there it says so in a
# file and blocks (before the step, or after it with RALPH_TEST_AFTER) until the test kills it; a dry
# run (`read-tree -n`) passes. RALPH_TEST_LOCK leaves the index lock a git killed mid-commit leaves;
# RALPH_TEST_HALF runs the step and then puts the old index back, as a git killed after writing the
# files and before writing the index leaves them. RALPH_TEST_RELEASE (a named pipe) makes it wait at the step
# for a line on the pipe and then run it, so the test can act between two of the desk's git steps.
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
    if [ -n "$RALPH_TEST_RELEASE" ]; then read line < "$RALPH_TEST_RELEASE"; exec REAL_GIT "$@"; fi
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
    desk.tasks.move(task.id, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
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
    process, ready = _start_stopping_at(tmp_path, command, step, after=after, lock=lock, half=half)
    try:
        _wait_for(process, ready, step)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stderr is not None
        process.stderr.close()


def _start_stopping_at(
    tmp_path: Path,
    command: list[str],
    step: str,
    after: bool = False,
    lock: bool = False,
    half: bool = False,
    release: Path | None = None,
) -> tuple[subprocess.Popen[bytes], Path]:
    """Start `command` with the git that stops at `step`; the process, and the file that says it got there."""
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
        "RALPH_TEST_RELEASE": str(release) if release is not None else "",
    }
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    return process, ready


def _wait_for(process: subprocess.Popen[bytes], ready: Path, step: str) -> None:
    """Wait until the process's git says it reached `step` (failing when the process ends first)."""
    deadline = time.monotonic() + REACH_TIMEOUT_S
    while not ready.exists():
        assert time.monotonic() < deadline, f"the process never reached git {step}"
        try:
            process.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            continue
        assert process.stderr is not None
        raise AssertionError(f"the process ended before git {step}: {process.stderr.read()!r}")


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


JOURNAL = Path(".ralph") / "merge-journal.json"


def test_what_the_person_writes_after_a_crash_survives_the_next_merge_turn_which_names_it(
    desk: Services, tmp_path: Path
) -> None:
    task_id = _in_review(desk)
    root = desk.paths.root
    tip = read_tip(desk, task_id)
    _kill_at(tmp_path, _approve_process(root, task_id, tip), "read-tree", after=True)  # checkout moved
    (root / "app.py").write_text("PERSON WORK\n")  # the days before the next approval

    with (
        pytest.raises(
            MergeTurnError, match=r"changes made since at paths it moves: app\.py; nothing was touched"
        ),
        merge_turn(desk.paths),
    ):
        pass

    assert (root / "app.py").read_text() == "PERSON WORK\n"
    assert (root / JOURNAL).exists()
    git(root, "stash", "push", "-q")  # as the refusal says: stash (or commit) them, then approve again
    assert desk.reviews.approve(task_id, tip).status == TaskStatus.DONE.value
    assert not (root / JOURNAL).exists()
    assert "+PERSON WORK" in git(root, "stash", "show", "-p")
    assert fsck_ok(root)


def _forge_journal(root: Path, old: str, new: str, path: str) -> None:
    """The journal an agent writes into `.ralph/`: a merge of its own commits, naming the person's file."""
    blob = git(root, "rev-parse", f"{old}:{path}")
    record = {
        "checkout": git(root, "rev-parse", "--show-toplevel"),
        "ref": "refs/heads/main",
        "old": old,
        "new": new,
        "changes": [{"path": path, "old": blob, "new": blob}],
    }
    (root / JOURNAL).write_text(json.dumps(record))


def test_a_forged_journal_naming_a_file_its_commits_do_not_change_leaves_the_persons_edit(
    desk: Services,
) -> None:
    task_id = _in_review(desk)
    root = desk.paths.root
    tip = read_tip(desk, task_id)
    assert tip is not None
    (root / "notes.txt").write_text("the person's unsaved notes\n")
    _forge_journal(root, git(root, "rev-parse", "main"), tip, "notes.txt")

    assert desk.reviews.approve(task_id, tip).status == TaskStatus.DONE.value

    assert (root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert (root / "app.py").read_text() == "new\n" and not (root / JOURNAL).exists()


def test_a_forged_journal_whose_commits_change_the_persons_file_leaves_it_as_it_is(desk: Services) -> None:
    task = desk.tasks.create("core", "backend", "Take notes")
    worktree = desk.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    (worktree.path / "notes.txt").write_text("the agent's notes\n")
    agents = desk.workspaces.commit_session(worktree, task.title, "s-1", "done", "Noted.", True).after
    root = desk.paths.root
    (root / "notes.txt").write_text("the person's unsaved notes\n")
    status = _status(root)
    _forge_journal(root, git(root, "rev-parse", "main"), agents, "notes.txt")

    with merge_turn(desk.paths):  # the index has the base's notes.txt: the file is the person's edit of it
        pass

    assert (root / "notes.txt").read_text() == "the person's unsaved notes\n"
    assert _status(root) == status


def test_a_base_moved_between_moving_the_checkout_and_the_branch_leaves_no_staged_half(
    desk: Services, tmp_path: Path
) -> None:
    task_id = _in_review(desk)
    root = desk.paths.root
    tip = read_tip(desk, task_id)
    assert tip is not None
    release = tmp_path / "release"
    os.mkfifo(release)
    process, ready = _start_stopping_at(
        tmp_path, _approve_process(root, task_id, tip), "update-ref", release=release
    )
    pipe = os.open(release, os.O_RDWR)  # never blocks; the line waits in the pipe for the git to read it
    try:
        _wait_for(process, ready, "update-ref")
        (root / "notes.txt").write_text("the person's notes, committed meanwhile\n")
        git(root, "commit", "-q", "-m", "Notes", "--", "notes.txt")  # the index still holds the merge's files
        person = git(root, "rev-parse", "main")
        os.write(pipe, b"go\n")
        assert process.wait(timeout=REACH_TIMEOUT_S) != 0
        assert process.stderr is not None
        said = process.stderr.read().decode()
    finally:
        os.close(pipe)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stderr is not None
        process.stderr.close()

    assert "could not be moved" in said and "put back in line with it at 2 path(s)" in said
    assert git(root, "rev-parse", "main") == person
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert _status(root) == ""
    assert (root / "app.py").read_text() == "old\n" and not (root / "docs").exists()
    assert not (root / JOURNAL).exists()
    assert desk.reviews.approve(task_id, tip).status == TaskStatus.DONE.value
    assert (root / "app.py").read_text() == "new\n" and _status(root) == ""
