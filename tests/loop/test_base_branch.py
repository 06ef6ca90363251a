"""A base branch that is not there: a misspelt `base_branch`, or an `init` on a detached HEAD, is refused by
`validate` and by every start with the reason and the fix; no task ever runs in the person's own checkout."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.loop.control import LoopController
from ralph_desk.project import ProjectPaths, opening_problems, update_config, validate_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ControlError
from ralph_desk.services.workspaces import NoBaseBranchError
from tests.loop.conftest import STAND_IN_WORDS, StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.support.cli import ralph_desk_process
from tests.support.git_repo import git, make_repo

pytestmark = pytest.mark.slow


def marking_agent(marker: Path) -> tuple[str, ...]:
    """`ralph-desk run` arguments of a command agent that leaves `marker` (its working folder) if it runs."""
    script = f'pwd > {shlex.quote(str(marker))}; exec "$0" -c "print()"'
    return ("--agent", "command", "--agent-command", shlex.join(["sh", "-c", script, sys.executable]))


def checked_out(root: Path) -> str:
    return git(root, "branch", "--show-current")


def test_validate_refuses_a_misspelt_base_branch_naming_it_and_the_branches_to_choose_from(
    project: Services,
) -> None:
    root = project.paths.root
    update_config(project.paths, base_branch="mian")

    validated = ralph_desk_process("validate", str(root))

    assert validated.returncode == 2, validated.stdout
    assert f"{project.paths.config_file}: base_branch 'mian' in .ralph/config.json is not a branch" in (
        validated.stdout
    )
    assert f"name an existing branch in base_branch (branches: {checked_out(root)})" in validated.stdout
    # The window still opens the project (to fix it there); only starts are refused.
    assert opening_problems(validate_project(root)) == []


def test_validate_refuses_a_project_made_on_a_detached_head_saying_to_check_out_a_branch(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo", {"README.md": "# repo\n"})
    git(root, "checkout", "-q", "--detach")
    made = ralph_desk_process("init", str(root))
    assert made.returncode == 0, made.stderr
    assert "warning: no base_branch is set in .ralph/config.json and no branch is checked out" in made.stderr

    validated = ralph_desk_process("validate", str(root))

    assert validated.returncode == 2, validated.stdout
    config_file = ProjectPaths.at(root).config_file
    assert f"{config_file}: no base_branch is set in .ralph/config.json and no branch is checked out" in (
        validated.stdout
    )
    assert "check out a branch (`git switch BRANCH`), or name one in base_branch (branches: main)" in (
        validated.stdout
    )


def test_run_refuses_a_misspelt_base_branch_and_starts_no_agent(project: Services, tmp_path: Path) -> None:
    root = project.paths.root
    project.tasks.create("core", "backend", "Anything")
    update_config(project.paths, base_branch="mian")
    marker = tmp_path / "agent-ran"

    run = ralph_desk_process("run", "--root", str(root), *marking_agent(marker))

    assert run.returncode == 2, run.stdout + run.stderr
    assert "base_branch 'mian' in .ralph/config.json is not a branch of this repository" in run.stderr
    assert "Traceback" not in run.stderr
    assert not marker.exists()
    assert project.sessions.list() == [] and project.sessions.list_loop_runs() == []
    assert project.tasks.next_runnable(limit=5)[0].status is TaskStatus.PENDING


def test_the_loop_on_a_detached_head_refuses_to_start_and_never_runs_an_agent_in_the_checkout(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    task = project.tasks.create("core", "backend", "Anything")
    api = start_api(**{heading(task.id): session(verb("done", summary="done in the checkout"))})
    update_config(project.paths, base_branch=None)
    git(root, "checkout", "-q", "--detach")

    with pytest.raises(NoBaseBranchError, match="no branch is checked out"):
        run_loop(project, settings(stand_in()))

    assert api.served(heading(task.id)) == 0
    assert project.sessions.list() == []
    assert project.tasks.get(task.id).status is TaskStatus.PENDING


def test_a_base_branch_deleted_while_the_loop_runs_stops_it_before_any_task_runs_in_the_checkout(
    project: Services, start_api: StartApi, caplog: pytest.LogCaptureFixture
) -> None:
    root = project.paths.root
    base = checked_out(root)
    first = project.tasks.create("core", "backend", "Delete the base", priority="high")
    second = project.tasks.create("core", "backend", "Anything after")
    api = start_api(
        **{
            heading(first.id): session(verb("done", summary="done")),
            heading(second.id): session(verb("done", summary="done in the checkout")),
        }
    )
    hostile = f'git update-ref -d refs/heads/{base}; exec "$0" -I "$1" "$2" "$3"'
    words = ["sh", "-c", hostile, *STAND_IN_WORDS]

    with pytest.raises(NoBaseBranchError, match=f"base_branch '{base}' in .ralph/config.json is not"):
        # Unconfined: the agent deletes the base in the shared .git, which a sandbox would not let it do.
        run_loop(project, settings(stand_in(), agent_command=shlex.join(words), sandbox=False))

    assert api.served(heading(second.id)) == 0  # never run in the person's checkout
    assert project.tasks.get(second.id).status is TaskStatus.PENDING
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []
    (run,) = project.sessions.list_loop_runs()
    assert run.state == "failed" and f"base_branch '{base}'" in (run.stop_reason or "")


def test_ralph_run_from_an_ide_refuses_a_misspelt_base_branch_at_once(project: Services) -> None:
    project.tasks.create("core", "backend", "Anything")
    update_config(project.paths, base_branch="mian")

    with pytest.raises(ControlError) as refused:
        LoopController(project).run(max_iterations=None, dry_run=False, agent="command", allow_edits=True)

    assert refused.value.code == "invalid_argument"
    assert refused.value.details["reason"] == "no_base_branch"
    assert "base_branch 'mian' in .ralph/config.json is not a branch" in refused.value.message
    assert project.sessions.list_loop_runs() == []
