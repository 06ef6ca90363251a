"""An agent that plants a branch named like the next task's, from its own worktree, steers nothing: the next
task gets a branch of its own from the base, its review shows only its own work, and its discard leaves the
planted branch where the agent put it."""

from __future__ import annotations

import shlex

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import STAND_IN_WORDS, StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.support.cli import ralph_desk_process
from tests.support.git_repo import git

PLANTED = "refs/heads/ralph/2-draw-the-moon"

# The damage, done with a shell in the agent's worktree before the stand-in calls `done`: a commit no person
# saw, on a branch with the name the desk would give task #2 (a second run finds it there and does nothing).
PLANT = (
    'blob=$(printf "planted by the agent\\n" | git hash-object -w --stdin) && '
    'tree=$(printf "100644 blob %s\\tplanted.txt\\n" "$blob" | git mktree) && '
    "commit=$(git -c user.name=agent -c user.email=agent@example.invalid "
    'commit-tree -p HEAD -m planted "$tree") '
    f'&& git update-ref {PLANTED} "$commit" "" >/dev/null 2>&1; exec "$@"'
)


def test_a_branch_planted_by_an_agent_under_the_next_tasks_name_is_never_that_tasks(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    update_config(project.paths, review_gate=True)
    base = project.workspaces.base_branch()
    assert base is not None
    main = git(root, "rev-parse", f"refs/heads/{base}")
    first = project.tasks.create("core", "backend", "Chart the tides")
    second = project.tasks.create("core", "backend", "Draw the moon")
    assert second.id == 2
    start_api(
        **{
            heading(first.id): session(verb("done", summary="charted")),
            heading(second.id): session(verb("done", summary="drawn")),
        }
    )
    hostile = shlex.join(["sh", "-c", PLANT, "hostile-agent", *STAND_IN_WORDS])

    run_loop(project, settings(stand_in(), agent_command=hostile, max_iterations=2, sandbox=False))

    planted = git(root, "rev-parse", PLANTED)
    assert git(root, "show", f"{planted}:planted.txt") == "planted by the agent"
    assert [project.tasks.get(task.id).status for task in (first, second)] == [TaskStatus.IN_REVIEW] * 2
    own = project.workspaces.existing(second.id)
    assert own is not None and own.ref == PLANTED + "-2"
    assert git(root, "merge-base", "--is-ancestor", main, own.ref) == ""
    assert "planted.txt" not in git(root, "ls-tree", "-r", "--name-only", own.ref)
    shown = ralph_desk_process(
        "review", "show", str(second.id), "--root", str(root), "--db-url", project.db.url
    )
    assert shown.returncode == 0 and "planted" not in shown.stdout, shown.stderr

    discarded = ralph_desk_process(
        "review", "discard", str(second.id), "--root", str(root), "--db-url", project.db.url
    )

    assert discarded.returncode == 0, discarded.stderr
    assert git(root, "for-each-ref", "--format=%(refname)", own.ref) == ""
    assert git(root, "rev-parse", PLANTED) == planted  # the desk deletes only what it recorded
