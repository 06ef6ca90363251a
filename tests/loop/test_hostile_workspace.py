"""The loop survives its agent: a session whose agent wrecks its own worktree, or whose task is deleted while
it runs, ends with its reason recorded, its task back to `pending` (flagged), and the loop and every sibling
session go on. The hostile agent is a shell that does the damage in its worktree, then runs the stand-in."""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
from pathlib import Path

import pytest

from ralph_desk.domain.enums import LoopState, SessionOutcome, TaskStatus, Verb
from ralph_desk.domain.records import AgentSession
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.loop.test_parallel import meet
from tests.support import stand_in_agent
from tests.support.fake_model_api import Hang
from tests.support.git_repo import fsck_ok, git

pytestmark = pytest.mark.slow

WRECKS = {
    "deleted": 'rm -rf "$PWD"',
    "worktree-removed": "git worktree remove --force .",
    "dot-git-garbage": "echo garbage > .git",
    "dot-git-deleted": "rm -f .git",  # git in the folder would find the person's own repository above it
    "record-deleted": 'rm -rf "$(git rev-parse --absolute-git-dir)"',
}
SAID = {
    "deleted": "was deleted",
    "worktree-removed": "was deleted",
    "dot-git-garbage": "has a .git file that no longer points to its record",
    "dot-git-deleted": "lost its .git file",
    "record-deleted": "is no longer known to git",
}


def hostile(damage: str, once: Path, after: str = ".") -> str:
    """An agent command that, once, in the worktree of a task titled `Wreck…` where `after` exists, does
    `damage` there, then runs the stand-in agent as every session does."""
    marker = shlex.quote(str(once))
    script = (
        f'case "$PWD" in *-wreck*) if [ -e {shlex.quote(after)} ] && [ ! -e {marker} ]; then '
        f": > {marker}; {damage}; fi ;; esac; "
        'exec "$0" -I "$1" "$2" "$3"'
    )
    words = ["sh", "-c", script, sys.executable, stand_in_agent.__file__, "{prompt_file}", "{mcp_config}"]
    return shlex.join(words)


def write(name: str, text: str) -> tuple[str, dict[str, str]]:
    """The agent's Write of a file in its working folder."""
    return ("Write", {"file_path": name, "content": text})


def no_tracebacks(records: list[logging.LogRecord]) -> list[str]:
    """The log records that carry a traceback or an error: a loop that survived its agent logs none."""
    return [record.getMessage() for record in records if record.exc_info or record.levelno >= logging.ERROR]


def sessions_of(services: Services, task_id: int) -> list[AgentSession]:
    """A task's sessions, oldest first."""
    return list(reversed(services.sessions.list(task_id=task_id, limit=50)))


@pytest.mark.parametrize("how", WRECKS)
def test_an_agent_that_wrecks_its_worktree_ends_its_session_flagged_and_the_next_works_from_its_branch(
    project: Services, start_api: StartApi, tmp_path: Path, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    root = project.paths.root
    update_config(project.paths, review_gate=True)
    base_before = git(root, "rev-parse", "HEAD")
    task = project.tasks.create("core", "backend", "Wreck the tree")
    script = [
        *session(write("kept.txt", "committed before\n"), verb("partial", summary="half", remaining="rest")),
        *session(verb("done", summary="all done, honest")),
        *session(write("rest.txt", "the rest\n"), verb("done", summary="really done")),
    ]
    start_api(**{heading(task.id): script})
    agent = settings(
        stand_in(), sandbox=False, agent_command=hostile(WRECKS[how], tmp_path / "wrecked", after="kept.txt")
    )
    caplog.set_level(logging.INFO)

    status = run_loop(project, agent)

    assert status.state is LoopState.COMPLETED, status.stop_reason
    assert no_tracebacks(caplog.records) == []
    first, wrecked, last = sessions_of(project, task.id)
    assert first.outcome == SessionOutcome.REQUEUED.value
    assert wrecked.outcome == SessionOutcome.REQUEUED.value
    assert wrecked.error is not None
    assert f"worktree .ralph/worktrees/{task.id}-wreck-the-tree {SAID[how]}" in wrecked.error
    assert "nothing left in it was committed" in wrecked.error
    flags = [signal for signal in project.signals.for_task(task.id) if signal.verb is Verb.FLAG]
    assert [flag.what for flag in flags] == [wrecked.error]
    assert last.outcome == SessionOutcome.DONE.value
    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    branch = f"ralph/{task.id}-wreck-the-tree"
    assert git(root, "show", f"{branch}:kept.txt") == "committed before"  # work committed before is kept
    assert git(root, "show", f"{branch}:rest.txt") == "the rest"  # the next session worked from the branch
    assert git(root, "rev-parse", "HEAD") == base_before  # the person's checkout is untouched
    assert git(root, "status", "--porcelain", "--", ".", ":(exclude).ralph") == ""
    assert fsck_ok(root)


@pytest.mark.parametrize("wreck", [WRECKS["deleted"], WRECKS["dot-git-garbage"]], ids=["deleted", "garbage"])
def test_a_wrecked_worktree_never_ends_a_sibling_session_running_beside_it(
    project: Services,
    start_api: StartApi,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    wreck: str,
) -> None:
    update_config(project.paths, review_gate=True)
    wrecker = project.tasks.create("core", "backend", "Wreck the tree")
    sibling = project.tasks.create("core", "backend", "Steady work")
    start_api(
        **{
            heading(wrecker.id): [
                *session(verb("done", summary="wrecked it")),
                *session(write("fixed.txt", "x\n"), verb("done", summary="did it")),
            ],
            heading(sibling.id): session(write("steady.txt", "y\n"), verb("done", summary="steady")),
        }
    )
    meet(monkeypatch, tmp_path / "arrivals", 2, 0)  # both sessions run at once
    caplog.set_level(logging.INFO)

    status = run_loop(
        project,
        settings(stand_in(), parallel=2, sandbox=False, agent_command=hostile(wreck, tmp_path / "wrecked")),
    )

    assert status.state is LoopState.COMPLETED, status.stop_reason
    assert no_tracebacks(caplog.records) == []
    assert [s.outcome for s in sessions_of(project, sibling.id)] == [SessionOutcome.DONE.value]
    assert project.tasks.get(sibling.id).status is TaskStatus.IN_REVIEW
    wrecked, again = sessions_of(project, wrecker.id)
    assert wrecked.outcome == SessionOutcome.REQUEUED.value and "worktree" in (wrecked.error or "")
    assert again.outcome == SessionOutcome.DONE.value
    assert project.tasks.get(wrecker.id).status is TaskStatus.IN_REVIEW


def test_a_task_deleted_while_its_session_runs_ends_that_session_and_the_loop_goes_on(
    project: Services, start_api: StartApi, caplog: pytest.LogCaptureFixture
) -> None:
    update_config(project.paths, review_gate=True)
    doomed = project.tasks.create("core", "backend", "Doomed", priority="high")
    after = project.tasks.create("core", "backend", "Afterwards")
    api = start_api(
        **{
            heading(doomed.id): [Hang()],
            heading(after.id): session(write("after.txt", "z\n"), verb("done", summary="done after")),
        }
    )
    caplog.set_level(logging.INFO)

    async def delete_while_it_runs(runner: LoopRunner) -> None:
        await asyncio.to_thread(api.wait_turns, 1, 120, heading(doomed.id))
        told = await asyncio.to_thread(project.retiring.delete_task, doomed.id)  # as the window does
        assert told is None or "branch" in told
        api.release()

    status = run_loop(project, settings(stand_in()), runner_hook=delete_while_it_runs)

    assert status.state is LoopState.COMPLETED, status.stop_reason
    assert no_tracebacks(caplog.records) == []
    ended = [
        s for s in project.sessions.list(limit=50) if s.error and "deleted while its session ran" in s.error
    ]
    assert len(ended) == 1 and ended[0].outcome == SessionOutcome.STOPPED.value
    assert f"task #{doomed.id}" in (ended[0].error or "")
    assert project.tasks.get(after.id).status is TaskStatus.IN_REVIEW


def test_git_failing_in_a_worktree_that_looks_sound_ends_that_session_not_the_loop(
    project: Services, start_api: StartApi, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The worktree's `.git` still points home, but the HEAD its record holds is garbage: every git command
    # there fails, so the session's commit fails. The session ends flagged; the loop is not failed by it.
    root = project.paths.root
    update_config(project.paths, review_gate=True)
    task = project.tasks.create("core", "backend", "Wreck the head")
    script = [
        *session(write("kept.txt", "committed before\n"), verb("partial", summary="half", remaining="rest")),
        *session(verb("done", summary="all done, honest")),
        *session(write("rest.txt", "the rest\n"), verb("done", summary="really done")),
    ]
    start_api(**{heading(task.id): script})
    damage = 'echo garbage > "$(git rev-parse --absolute-git-dir)/HEAD"'
    agent = settings(
        stand_in(), sandbox=False, agent_command=hostile(damage, tmp_path / "wrecked", after="kept.txt")
    )
    caplog.set_level(logging.INFO)

    status = run_loop(project, agent)

    assert status.state is LoopState.COMPLETED, status.stop_reason
    assert no_tracebacks(caplog.records) == []
    _, broken, last = sessions_of(project, task.id)
    assert broken.outcome == SessionOutcome.REQUEUED.value
    assert broken.error is not None and "NOT committed" in broken.error
    flags = [signal.what or "" for signal in project.signals.for_task(task.id) if signal.verb is Verb.FLAG]
    assert any("NOT committed" in what for what in flags)
    assert last.outcome == SessionOutcome.DONE.value
    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    branch = f"refs/heads/ralph/{task.id}-wreck-the-head"
    assert git(root, "show", f"{branch}:kept.txt") == "committed before"
    assert git(root, "show", f"{branch}:rest.txt") == "the rest"
    assert fsck_ok(root)
