"""Work under review, end to end: agents (the stand-in, and the real Claude Code CLI where installed) edit
files with their Edit tool in their tasks' worktrees; a person sends one back with a line comment,
approves it, and a conflicting second task is aborted and returned to its agent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ralph_desk.domain.enums import LoopState, SessionOutcome, TaskStatus, Verb
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.services.reviews import CommentDraft
from tests.loop.conftest import Agent, StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.loop.test_parallel import meet
from tests.support.cli import ralph_desk_process
from tests.support.fake_model_api import Hang, Text, ToolCalls, Turn
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import read_tip

REVIEW_MARKER = "## REVIEW from the human"


def edit(path: Path, old: str, new: str, summary: str) -> list[Turn]:
    """One session: read the file, edit it with the Edit tool, call done."""
    return [
        ToolCalls([("Read", {"file_path": str(path)})]),
        ToolCalls([("Edit", {"file_path": str(path), "old_string": old, "new_string": new})]),
        ToolCalls([verb("done", summary=summary)]),
        Text("Session over."),
    ]


def outside_ralph_status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all", "--", ".", ":(exclude).ralph")


def test_two_tasks_are_reviewed_sent_back_approved_and_a_conflict_is_aborted(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    (root / "tide.py").write_text("HIGH = 1\nLOW = 0\n")
    git(root, "add", "tide.py")
    git(root, "commit", "-qm", "tide constants")
    update_config(project.paths, review_gate=True)
    base_start = git(root, "rev-parse", "HEAD")
    first = project.tasks.create("core", "backend", "Raise high water")
    second = project.tasks.create("core", "backend", "Raise high water more")
    one, two = (project.workspaces.prepare(task.id, task.title) for task in (first, second))
    assert one is not None and two is not None
    base = one.base
    api = start_api(
        **{
            REVIEW_MARKER: edit(one.path / "tide.py", "HIGH = 2\n", "HIGH = 2  # metres\n", "unit named"),
            heading(first.id): edit(one.path / "tide.py", "HIGH = 1\n", "HIGH = 2\n", "raised to 2"),
            heading(second.id): edit(two.path / "tide.py", "HIGH = 1\n", "HIGH = 3\n", "raised to 3"),
        }
    )

    run_loop(project, settings(agent))

    # Each task waits for review with a commit on its own branch; the person's checkout is untouched.
    assert [project.tasks.get(t.id).status for t in (first, second)] == [TaskStatus.IN_REVIEW] * 2
    for worktree, value in ((one, "2"), (two, "3")):
        assert git(root, "show", f"{worktree.branch}:tide.py") == f"HIGH = {value}\nLOW = 0"
        log = git(root, "log", "--format=%an|%B", f"{base}..{worktree.branch}")
        assert log.startswith("ralph-desk agent|Task #") and "Ralph-Session: " in log
    assert (root / "tide.py").read_text() == "HIGH = 1\nLOW = 0\n"
    assert git(root, "rev-parse", "HEAD") == base_start and outside_ralph_status(root) == ""

    # Request changes with a line comment: the next prompt opens with it, and the session commits again.
    # A comment on the removed line names that line of the old file, not the new file's line.
    project.reviews.add_comment(first.id, "Why not 1.5?", "tide.py", 1, side="old")
    project.reviews.request_changes(first.id, [CommentDraft("Name the unit", "tide.py", 1)])
    run_loop(project, settings(agent))
    prompt = project.paths.mcp_dir.joinpath("prompt.md").read_text()
    assert prompt.index(REVIEW_MARKER) < prompt.index("You are one session")
    assert "`tide.py:1` (human): Name the unit" in prompt
    assert "`tide.py`, on the removed line 1 of the old file (human): Why not 1.5?" in prompt
    assert api.served(REVIEW_MARKER) >= 1
    assert project.tasks.get(first.id).status is TaskStatus.IN_REVIEW
    assert int(git(root, "rev-list", "--count", f"{base}..{one.branch}")) == 2
    assert project.reviews.requested(first.id) == []

    # Approve: the base branch holds the work, the task is done, its worktree is gone.
    merged = project.reviews.approve(first.id, read_tip(project, first.id))
    assert merged.status == TaskStatus.DONE.value and project.tasks.get(first.id).status is TaskStatus.DONE
    assert git(root, "show", f"{base}:tide.py") == "HIGH = 2  # metres\nLOW = 0"
    assert not one.path.exists()

    # The second task now conflicts: the merge is aborted, the base untouched, the task back with a flag.
    base_after_first = git(root, "rev-parse", base)
    refused = project.reviews.approve(second.id, read_tip(project, second.id))
    assert (refused.status, refused.conflicts) == (TaskStatus.PENDING.value, ("tide.py",))
    assert git(root, "rev-parse", base) == base_after_first
    assert project.tasks.get(second.id).status is TaskStatus.PENDING
    (flag,) = [s for s in project.signals.for_task(second.id) if s.verb is Verb.FLAG]
    assert "tide.py" in (flag.what or "") and "up to date" in (flag.what or "")
    assert outside_ralph_status(root) == ""

    # Its next session starts with the base merged in and the conflict marked; it resolves it, and merges.
    conflict = f"<<<<<<< HEAD\nHIGH = 3\n=======\nHIGH = 2  # metres\n>>>>>>> refs/heads/{base}\n"
    start_api(**{heading(second.id): edit(two.path / "tide.py", conflict, "HIGH = 3  # metres\n", "merged")})
    run_loop(project, settings(agent))
    assert "conflict markers" in project.paths.mcp_dir.joinpath("prompt.md").read_text()
    assert project.reviews.approve(second.id, read_tip(project, second.id)).status == TaskStatus.DONE.value
    assert git(root, "show", f"{base}:tide.py") == "HIGH = 3  # metres\nLOW = 0"
    assert fsck_ok(root)


def test_a_discipline_that_skips_the_gate_merges_at_once_while_others_wait(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    update_config(project.paths, review_gate=True, review_skip_disciplines=["docs"])
    gated = project.tasks.create("core", "backend", "Write the parser")
    skipped = project.tasks.create("core", "docs", "Write the guide")
    worktrees = [project.workspaces.prepare(task.id, task.title) for task in (gated, skipped)]
    assert all(worktrees)
    start_api(
        **{
            heading(task.id): [
                ToolCalls([("Write", {"file_path": str(w.path / name), "content": "text\n"})]),
                ToolCalls([verb("done", summary="written")]),
                Text("Session over."),
            ]
            for task, w, name in zip((gated, skipped), worktrees, ("parser.py", "guide.md"), strict=True)
            if w is not None
        }
    )

    run_loop(project, settings(stand_in()))

    assert project.tasks.get(gated.id).status is TaskStatus.IN_REVIEW
    assert project.tasks.get(skipped.id).status is TaskStatus.DONE
    assert (root / "guide.md").read_text() == "text\n" and not (root / "parser.py").exists()
    assert project.workspaces.existing(skipped.id) is None


def test_a_reviewer_agent_reads_the_diff_and_leaves_line_comments_for_the_person(
    project: Services, start_api: StartApi
) -> None:
    update_config(project.paths, review_gate=True, reviewer_agent=True)
    task = project.tasks.create("core", "backend", "Write the parser")
    worktree = project.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    comment = {"task_id": task.id, "author": "reviewer agent", "body": "parser.py:1: name the constant"}
    api = start_api(
        **{
            "Review the work of task #": [
                ToolCalls([verb("add_task_comment", **comment)]),
                Text("Reviewed."),
            ],
            heading(task.id): [
                ToolCalls([("Write", {"file_path": str(worktree.path / "parser.py"), "content": "X = 1\n"})]),
                ToolCalls([verb("done", summary="written")]),
                Text("Session over."),
            ],
        }
    )

    run_loop(project, settings(stand_in()))

    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert "+X = 1" in api.user_text(api.served() - 2) or api.served("Review the work of task #") == 2
    (left,) = project.reviews.comments(task.id)
    assert (left.author, left.file, left.line, left.body) == (
        "reviewer agent",
        "parser.py",
        1,
        "name the constant",
    )
    assert not (project.paths.root / "parser.py").exists()


def test_the_app_killed_mid_session_keeps_the_agents_work_on_the_branch_and_the_task_resumes_to_review(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    update_config(project.paths, review_gate=True)
    base_start = git(root, "rev-parse", "HEAD")
    task = project.tasks.create("core", "backend", "Survive the crash")
    worktree = project.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    written = worktree.path / "survivor.py"
    api = start_api(
        **{
            heading(task.id): [
                ToolCalls([("Write", {"file_path": str(written), "content": "KEPT = True\n"})]),
                Hang(),
                ToolCalls([verb("done", summary="kept after the crash")]),
                Text("Session over."),
            ]
        }
    )
    loop = subprocess.Popen(
        [sys.executable, "-m", "ralph_desk", "run", "--root", str(root), *agent.cli],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        api.wait_turns(2, timeout=120, key=heading(task.id))  # the file is written, the agent waits
        loop.kill()
        loop.wait(timeout=30)
    finally:
        if loop.poll() is None:
            loop.kill()
    api.release()  # the orphaned agent gets its answer and exits on its own
    assert written.read_text() == "KEPT = True\n" and fsck_ok(root)

    run = ralph_desk_process("run", "--root", str(root), *agent.cli, "--exit-when-idle")

    assert run.returncode == 3, run.stderr  # nothing runnable: the work waits for a person
    assert "review" in run.stdout
    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert git(root, "show", f"{worktree.branch}:survivor.py") == "KEPT = True"
    assert git(root, "rev-parse", "HEAD") == base_start and not (root / "survivor.py").exists()
    assert git(worktree.path, "status", "--porcelain") == "" and fsck_ok(root)
    # The resumed session's record keeps the branch before and after its commit, which names it.
    resumed = project.sessions.list(task_id=task.id)[0]
    assert (resumed.head_before, resumed.head_after) == (base_start, git(root, "rev-parse", worktree.branch))
    trailers = git(
        root, "log", "-1", "--format=%(trailers:key=Ralph-Task,key=Ralph-Session)", worktree.branch
    )
    assert trailers.splitlines() == [f"Ralph-Task: {task.id}", f"Ralph-Session: {resumed.id}"]


def test_with_the_gate_off_a_done_that_conflicts_is_not_merged_and_goes_back_with_a_flag(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = project.paths.root
    (root / "tide.py").write_text("HIGH = 1\n")
    git(root, "add", "tide.py")
    git(root, "commit", "-qm", "tide constant")
    tasks = [project.tasks.create("core", "backend", f"High water to {value}") for value in (2, 3)]
    trees = [project.workspaces.prepare(task.id, task.title) for task in tasks]
    scripts: dict[str, list[Turn]] = {}
    for task, tree, value in zip(tasks, trees, (2, 3), strict=True):
        assert tree is not None
        change = (
            "Edit",
            {"file_path": str(tree.path / "tide.py"), "old_string": "1", "new_string": str(value)},
        )
        scripts[heading(task.id)] = session(change, verb("done", summary=f"raised to {value}"))
    start_api(**scripts)
    meet(monkeypatch, tmp_path / "arrivals", 2, 0)  # both start from the same base, then each is done

    run_loop(project, settings(stand_in(), parallel=2, max_iterations=2))

    statuses = {project.tasks.get(task.id).status for task in tasks}
    assert statuses == {TaskStatus.DONE, TaskStatus.PENDING}
    merged, back = sorted(tasks, key=lambda task: project.tasks.get(task.id).status is TaskStatus.PENDING)
    assert git(root, "show", f"{project.workspaces.base_branch()}:tide.py") == f"HIGH = {merged.title[-1]}"
    (flag,) = [s for s in project.signals.for_task(back.id) if s.verb is Verb.FLAG]
    assert "tide.py" in (flag.what or "") and "up to date" in (flag.what or "")
    kept = project.workspaces.existing(back.id)
    assert kept is not None and git(root, "show", f"{kept.branch}:tide.py") == f"HIGH = {back.title[-1]}"
    assert project.reviews.list() == [] and outside_ralph_status(root) == ""
    assert fsck_ok(root)


def test_with_the_gate_off_a_merge_turn_not_taken_leaves_the_task_in_review_and_the_session_recorded(
    project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    root = project.paths.root
    outside = tmp_path / "outside.lock"
    (project.paths.ralph / "merge.lock").symlink_to(outside)  # a hostile folder: the lock leads out
    task = project.tasks.create("core", "backend", "Write the tide table")
    tree = project.workspaces.prepare(task.id, task.title)
    assert tree is not None
    start_api(
        **{
            heading(task.id): session(
                ("Write", {"file_path": str(tree.path / "table.txt"), "content": "high 3 m\n"}),
                verb("done", summary="written"),
            )
        }
    )

    status = run_loop(project, settings(stand_in(), max_iterations=1))

    assert status.state is not LoopState.FAILED, status.stop_reason
    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    (recorded,) = project.sessions.list()
    assert recorded.outcome is not SessionOutcome.RUNNING and recorded.ended_at is not None
    assert project.reviews.merge_state(task.id) == "approved: merging next"  # kept for the next turn
    assert not outside.exists() and not (root / "table.txt").exists()
