"""A loop leaves the person's checkout as it found it: `git status` of a project whose person committed
`.ralph/` is the same before and after (issue 23, item 6), and progress.txt says what happened (item 7)."""

from __future__ import annotations

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.support.git_repo import commit_all, git


def status(services: Services) -> str:
    """The checkout's `git status`, every untracked file named (ignored ones are not)."""
    return git(services.paths.root, "status", "--porcelain", "--untracked-files=all")


def test_a_loop_leaves_a_checkout_that_committed_ralph_as_it_found_it(
    project: Services, start_api: StartApi
) -> None:
    update_config(project.paths, review_gate=True)
    commit_all(project.paths.root, "the person commits .ralph/ as the desk left it")
    task = project.tasks.create("core", "backend", "Chart the tides")
    other = project.tasks.create("core", "docs", "Note the tides")
    tracked = git(project.paths.root, "ls-files", ".ralph")
    before = status(project)
    start_api(
        **{
            heading(task.id): session(verb("done", summary="Charted.")),
            heading(other.id): session(verb("partial", summary="Half noted.", remaining="The rest.")),
        }
    )

    run_loop(project, settings(stand_in(), max_iterations=2))

    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert (before, status(project)) == ("", "")
    assert git(project.paths.root, "ls-files", ".ralph") == tracked
    progress = project.state_files.read_progress()
    assert f"task #{task.id} 'Chart the tides': done, waiting in review — Charted." in progress
    assert f"task #{other.id} 'Note the tides': stuck (partial, changed nothing)" in progress
    # The runtime files are there to read, only ignored.
    assert (project.paths.mcp_dir / "prompt.md").is_file() and project.paths.context_file.is_file()
