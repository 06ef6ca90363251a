"""A hostile agent in its worktree, end to end with the real loop: a command-template agent does its damage
with a shell, then execs the stand-in, which calls `done`. The desk's commit lands on the task branch only,
runs nothing the agent configured, and survives sessions of any size or file name."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus, Verb
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from ralph_desk.vcs.worktrees import TaskWorktree
from tests.loop.conftest import StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.support import stand_in_agent
from tests.support.git_repo import fsck_ok, git

MARKING = '#!/bin/sh\necho "$0 $*" >> "$(dirname "$0")/MARKER"\nexit 1\n'


def hostile(damage: str) -> str:
    """An agent command template: `damage` in the worktree with a shell, then the stand-in agent."""
    words = [
        "sh",
        "-c",
        f'{damage}\nexec "$0" -I "$1" "$2" "$3"',
        sys.executable,
        stand_in_agent.__file__,
        "{prompt_file}",
        "{mcp_config}",
    ]
    return shlex.join(words)


def _start(project: Services, start_api: StartApi, title: str) -> TaskWorktree:
    update_config(project.paths, review_gate=True)
    task = project.tasks.create("core", "backend", title)
    worktree = project.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    start_api(**{heading(task.id): session(verb("done", summary="done as asked"))})
    return worktree


def _flags(project: Services, task_id: int) -> list[str]:
    return [signal.what or "" for signal in project.signals.for_task(task_id) if signal.verb is Verb.FLAG]


def test_a_worktree_whose_git_was_swapped_for_one_with_fsmonitor_is_flagged_and_not_committed(
    project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    root = project.paths.root
    worktree = _start(project, start_api, "Swap the git folder")
    tip = git(root, "rev-parse", f"refs/heads/{worktree.branch}")
    evil = tmp_path / "evil"
    script = evil / "monitor.sh"
    folder, monitor, pointer = (shlex.quote(str(path)) for path in (evil, script, evil / ".git"))
    damage = (
        f"git init -q {folder} && printf %s {shlex.quote(MARKING)} > {monitor} && chmod +x {monitor} "
        f"&& git -C {folder} config core.fsmonitor {monitor} "
        f"&& printf 'gitdir: %s\\n' {pointer} > .git && echo work > planted.txt"
    )

    run_loop(project, settings(stand_in(), sandbox=False, agent_command=hostile(damage)))

    assert not (evil / "MARKER").exists(), (evil / "MARKER").read_text()
    assert (worktree.path / "planted.txt").exists()  # the damage was done
    assert git(root, "rev-parse", f"refs/heads/{worktree.branch}") == tip
    flags = _flags(project, worktree.task_id)
    assert any(
        ".git" in what and ("NOT committed" in what or "nothing left in it was committed" in what)
        for what in flags
    ), flags
    assert fsck_ok(root)


def test_an_agent_that_moves_head_to_main_leaves_main_alone_and_its_work_on_the_task_branch(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    worktree = _start(project, start_api, "Move HEAD")
    main_before = git(root, "rev-parse", f"refs/heads/{worktree.base}")
    damage = f"git symbolic-ref HEAD refs/heads/{worktree.base} && echo 'edited by the agent' >> README.md"

    run_loop(project, settings(stand_in(), sandbox=False, agent_command=hostile(damage)))

    assert git(root, "rev-parse", f"refs/heads/{worktree.base}") == main_before
    assert git(root, "show", f"refs/heads/{worktree.branch}:README.md").endswith("edited by the agent")
    assert git(worktree.path, "symbolic-ref", "HEAD") == f"refs/heads/{worktree.branch}"
    assert git(worktree.path, "status", "--porcelain", "--", ".", ":(exclude).ralph") == ""
    assert any("moved HEAD" in what for what in _flags(project, worktree.task_id))
    assert project.tasks.get(worktree.task_id).status is TaskStatus.IN_REVIEW


def test_a_nested_repository_is_flagged_never_committed_as_a_gitlink_and_its_worktree_kept(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    worktree = _start(project, start_api, "Vendor a library")
    damage = (
        "mkdir -p vendor/lib && git init -q vendor/lib && echo 'x = 1' > vendor/lib/code.py "
        "&& git -C vendor/lib add code.py "
        "&& git -C vendor/lib -c user.name=a -c user.email=a@b.invalid commit -qm only-here "
        "&& echo kept > kept.txt"
    )

    run_loop(project, settings(stand_in(), sandbox=False, agent_command=hostile(damage)))

    listing = git(root, "ls-tree", "-r", f"refs/heads/{worktree.branch}")
    assert "kept.txt" in listing and "vendor" not in listing and "160000" not in listing
    assert any("vendor/lib" in what for what in _flags(project, worktree.task_id))
    assert project.tasks.get(worktree.task_id).status is TaskStatus.IN_REVIEW
    project.workspaces.remove(worktree.task_id)
    assert (worktree.path / "vendor" / "lib" / ".git").is_dir()
    assert fsck_ok(root)


@pytest.mark.parametrize(
    ("damage", "committed"),
    [
        ("mkdir many && seq 1 12000 | sed 's|^|many/f|' | xargs touch", "many/f12000"),
        ("head -c 104857600 /dev/zero > big.bin", "big.bin"),
        ("printf 'x\\n' > \"$(printf 'caf\\351.txt')\"", "caf\\351.txt"),
    ],
    ids=["12000-files", "100-MB-file", "non-UTF-8-name"],
)
def test_a_huge_or_oddly_named_session_is_committed_and_the_task_reaches_review(
    project: Services, start_api: StartApi, damage: str, committed: str
) -> None:
    root = project.paths.root
    worktree = _start(project, start_api, "Leave a lot behind")

    run_loop(project, settings(stand_in(), sandbox=False, agent_command=hostile(damage)))

    assert project.tasks.get(worktree.task_id).status is TaskStatus.IN_REVIEW
    names = git(
        root, "-c", "core.quotePath=true", "ls-tree", "-r", "--name-only", f"refs/heads/{worktree.branch}"
    )
    assert committed in {name.strip('"') for name in names.splitlines()}
    assert git(worktree.path, "status", "--porcelain", "--", ".", ":(exclude).ralph") == ""
