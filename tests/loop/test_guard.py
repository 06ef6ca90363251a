"""allowed_paths: the globs, and edits outside them put aside after a session (nothing lost)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.loop import git, guard
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, run_loop, session, settings, verb
from tests.support.git_repo import git as run_git


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("src/app.py", True),
        ("src/deep/er/app.py", True),
        ("docs/guide.md", True),
        ("docs/old/guide.md", False),
        ("README.md", True),
        ("secrets.txt", False),
        ("srcs/app.py", False),
        ("tests/unit/test_app.py", True),
        ("tests", True),
    ],
)
def test_globs_allow_paths_as_documented(path: str, allowed: bool) -> None:
    globs = ("src/**", "./docs/*.md", "README.md", "tests")
    assert guard.allows(globs, path) is allowed


def test_no_globs_allow_everything() -> None:
    assert guard.outside((), ["anything/at/all.py"]) == []


def test_outside_git_new_files_leave_the_tree_and_rewritten_ones_are_copied(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".ralph").mkdir(parents=True)
    (root / "kept.txt").write_text("before\n")
    before = git.state(root)
    (root / "kept.txt").write_text("agent's\n")
    (root / "new" / "x.txt").parent.mkdir()
    (root / "new" / "x.txt").write_text("new\n")
    paths = git.changed_files(root, before, git.state(root))
    assert paths == ["kept.txt", "new/x.txt"]
    result = guard.put_aside(root, root / ".ralph", "s/1", paths, before)
    folder = Path(result.where)
    assert folder.is_relative_to(root / ".ralph" / guard.PUT_ASIDE_DIR)
    assert (folder / "new" / "x.txt").read_text() == "new\n" and not (root / "new" / "x.txt").exists()
    assert (folder / "kept.txt").read_text() == "agent's\n"
    assert result.left_in_tree == ("kept.txt",)


@pytest.mark.slow
def test_edits_outside_allowed_paths_are_put_aside_and_flagged(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Touch only src")
    workspace = project.workspaces.prepare(task.id, task.title)
    assert workspace is not None
    folder = workspace.path  # the session works in its task's worktree
    script = session(
        ("Write", {"file_path": str(folder / "src" / "ok.py"), "content": "ok = 1\n"}),
        ("Write", {"file_path": str(folder / "secrets.txt"), "content": "token\n"}),
        verb("done", summary="wrote src/ok.py"),
    )
    api = start_api(**{heading(task.id): script})
    events: list[LiveEvent] = []
    run_loop(project, settings(agent, allowed_paths=("src/**",)), events)
    assert "## Where you may edit" in api.user_text(0) and "- `src/**`" in api.user_text(0)
    root = project.paths.root
    assert run_git(root, "log", "--branches", "--format=%H", "--", "src/ok.py")  # the session's work is kept
    assert not run_git(root, "log", "--branches", "--format=%H", "--", "secrets.txt")
    assert not (folder / "secrets.txt").exists() and not (root / "secrets.txt").exists()
    assert project.tasks.get(task.id).status in (TaskStatus.DONE, TaskStatus.IN_REVIEW)
    flags = project.inbox.flags()
    if agent.name == "claude":  # Claude Code's permission rules refused the edit: nothing to put aside
        assert any(event.kind is EventKind.PERMISSION_DENIED for event in events)
        assert flags == []
        return
    (flag,) = flags
    assert flag.severity == "blocking" and flag.task_id == task.id and "secrets.txt" in (flag.what or "")
    assert "edited outside allowed_paths" in run_git(root, "stash", "list")
    assert run_git(root, "show", "stash@{0}^3:secrets.txt") == "token"  # untracked files: the third parent
